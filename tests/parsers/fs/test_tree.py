"""tree: §22 bug 29 (directories by 'no dot in the name'; Unicode glyphs only → empty under LC_ALL=C)."""

from __future__ import annotations

from tests.parsers.fs._util import err, ok

# tree's layout (tree v2 manual): 4-column indentation groups, summary line last
UNICODE_F = """proj/
├── Makefile
├── src.d/
│   └── main.c
├── v1.2/
└── README.md

3 directories, 3 files
"""
ASCII = """proj
|-- Makefile
|-- src.d
|   `-- main.c
|-- v1.2
`-- README.md

3 directories, 3 files
"""


def _names_types(node: dict) -> list[tuple[str, object]]:
    out = [(node["name"], node.get("type"))]
    for c in node.get("children", []):
        out += _names_types(c)
    return out


def test_bug29_directories_are_not_guessed_from_dots() -> None:
    res = ok(["tree", "-F"], UNICODE_F)
    assert dict(_names_types(res["root"])) == {
        "proj": "directory", "Makefile": "file", "src.d": "directory", "main.c": "file",
        "v1.2": "directory", "README.md": "file"}


def test_bug29_ascii_glyphs_under_c_locale() -> None:
    res = ok(["tree"], ASCII)
    kinds = dict(_names_types(res["root"]))
    assert set(kinds) == {"proj", "Makefile", "src.d", "main.c", "v1.2", "README.md"}
    # src.d has children: a directory; v1.2 is an empty leaf: nothing says what it is
    assert kinds["src.d"] == "directory" and kinds["v1.2"] is None and kinds["Makefile"] is None
    assert (res["directories"], res["files"]) == (3, 3) and res["warnings"]


def test_summary_count_types_leaves_when_all_directories_are_known() -> None:
    text = "d\n├── a\n└── b\n    └── c\n\n2 directories, 2 files\n"
    kinds = dict(_names_types(ok(["tree"], text)["root"]))
    assert kinds == {"d": "directory", "a": "file", "b": "directory", "c": "file"}


def test_summary_mismatch_is_reported() -> None:
    text = "d\n└── a\n\n1 directory, 5 files\n"
    assert any("drawn" in w for w in ok(["tree"], text)["warnings"])


def test_json_output_passes_through() -> None:
    from parism.parsers import registry
    out = registry.parse("tree", ["-J"], '[{"type":"directory","name":".","contents":[]}]', "linux")
    assert out.native_json and out.parsed[0]["name"] == "."


def test_colour_output_is_unsupported() -> None:
    assert err(["tree", "-C"], "x\n").reason == "unsupported_format"


def test_garbage_is_unrecognized() -> None:
    assert err(["tree"], "├── orphan entry\n").reason == "unrecognized_output"
