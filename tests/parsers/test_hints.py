"""The shared hint builder every parser contract uses."""

from parism.parsers.hints import drop_args, drop_flags


def test_bundles_values_and_end_of_options() -> None:
    assert drop_args(["-lah", "src"], short="h") == ["-la", "src"]
    assert drop_args(["-ojson", "get"], valued=("-o",)) == ["get"]
    assert drop_args(["-o", "yaml", "pods"], valued=("-o", "--output")) == ["pods"]
    assert drop_args(["--output=yaml", "pods"], valued=("-o", "--output")) == ["pods"]
    assert drop_args(["--", "-h"], short="h") == ["--", "-h"]  # a positional named -h stays
    assert drop_args(["x"], add=["-l"]) == ["-l", "x"]


def test_drop_flags_names_without_values() -> None:
    assert drop_flags(["-fn", "20", "app.log"], {"-f"}) == ["-n", "20", "app.log"]
    assert drop_flags(["--follow=name", "a"], {"--follow"}) == ["a"]
