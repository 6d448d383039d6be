"""du: §22 bug 49 (trailing spaces trimmed from paths) and honest block units."""

from __future__ import annotations

from tests.parsers.fs._util import err, ok


def test_bug49_paths_keep_trailing_and_leading_spaces() -> None:
    rows = ok(["du", "-a"], "4\t./trailing \n4\t ./leading\n8\t.\n")["entries"]
    assert [r["path"] for r in rows] == ["./trailing ", " ./leading", "."]


def test_units_follow_the_os_and_flags() -> None:
    assert ok(["du"], "8\t/usr\n", os="macos")["entries"][0]["size_bytes"] == 8 * 512
    assert ok(["du", "-k"], "8\t/usr\n", os="macos")["entries"][0]["size_bytes"] == 8 * 1024
    assert ok(["du"], "8\t/usr\n")["entries"][0]["size_bytes"] == 8 * 1024
    assert ok(["du", "-m"], "8\t/usr\n")["entries"][0]["size_bytes"] == 8 * 1024 * 1024
    row = ok(["du", "-sh"], "1.5G\t/usr\n")["entries"][0]
    assert (row["size"], row["size_bytes_approx"]) == ("1.5G", 1610612736)


def test_total_row_is_marked() -> None:
    rows = ok(["du", "-sc", "a", "b"], "4\ta\n8\tb\n12\ttotal\n")["entries"]
    assert rows[-1]["total"] is True and "total" not in rows[0]


def test_time_column_is_unsupported() -> None:
    assert err(["du", "--time", "."], "4\t2026-01-01 10:00\t.\n").reason == "unsupported_format"


def test_garbage_is_unrecognized() -> None:
    assert err(["du"], "no tabs here\nat all\n").reason == "unrecognized_output"
