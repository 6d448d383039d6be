"""The lean default answer: lossless against the real fixtures (every printed word of a data line
is in the lean rows when raw is left out), ``expand`` inverts the folding, and explicit formats
keep the seed's shape."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from parism.parsers import registry
from parism.output.shape import lean
from parism.output.shape.compact import compact

ROOT = Path(__file__).resolve().parents[3]
CORPUS = Path(os.environ.get("PARISM_CORPUS", ROOT.parent / "shared" / "corpus" / "jc"))
#: Printed glue that is structure, not a value: the symlink arrow, df's "-" for "none", git log's
#: field labels, the words of a --stat/--shortstat summary (its numbers are checked).
GLUE = {"->", "-", "|", "<>", "commit", "Author:", "Date:", "Commit:", "AuthorDate:", "CommitDate:", "Merge:", "file",
        "files", "changed,", "insertion(+),", "insertions(+),", "insertion(+)", "insertions(+)", "deletion(-)",
        "deletions(-)"}


def _candidates() -> list[tuple[str, list[str], str, Path]]:
    """The project's fixtures and the shared corpus's outputs of the lean parsers' commands."""
    out = []
    for path in sorted((ROOT / "tests" / "fixtures").glob("*/*/*.json")):
        meta = json.loads(path.read_text())
        out.append((f"{path.parent.name}/{path.stem}", meta.get("argv") or [], meta.get("os", "linux"),
                    path.with_suffix(".out")))
    manifest = CORPUS / "manifest.json"
    if manifest.exists():
        for e in json.loads(manifest.read_text())["entries"]:
            if e["argv"] and e["argv"][0] in ("ls", "ps", "git", "df"):
                family = e["os_family"] if e["os_family"] in ("linux", "macos", "freebsd") else "linux"
                out.append((f"corpus:{e['id']}", e["argv"], family, CORPUS / e["files"]["out"]))
    return out


def _lean_fixtures() -> list[tuple[str, list[str], str, str]]:
    out = []
    for name, argv, os_name, out_file in _candidates():
        if not argv or not out_file.exists():
            continue
        parsed = registry.parse(argv[0], argv[1:], out_file.read_text(errors="replace"), os_name)
        if parsed.parser is not None and lean.applies(parsed.parser.id) and parsed.parsed is not None:
            out.append((name, argv, os_name, str(out_file)))
    return out


FIXTURES = _lean_fixtures()


def _words(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set().union(*map(_words, value.values()), set(value) if not value else set())
    if isinstance(value, list):
        return set().union(*map(_words, value)) if value else set()
    return set(str(value).split()) if value is not None else set()


def test_every_lean_parser_has_fixtures() -> None:
    ids = {registry.parse(a[0], a[1:], Path(f).read_text(errors="replace"), o).parser.id  # type: ignore[union-attr]
           for _, a, o, f in FIXTURES}
    assert ids == set(lean.DERIVED)


@pytest.mark.parametrize("name, argv, os_name, out", FIXTURES, ids=[f[0] for f in FIXTURES])
def test_lean_rows_carry_every_printed_word(name: str, argv: list[str], os_name: str, out: str) -> None:
    text = Path(out).read_text(errors="replace")
    outcome = registry.parse(argv[0], argv[1:], text, os_name)
    assert outcome.parser is not None
    value = lean.lean(outcome.parsed, outcome.parser.id)
    if not lean.replaces_raw(outcome.parsed, outcome.parser.id, argv[1:]):
        return  # raw is kept beside the rows: nothing to prove
    have = _words(value) | _words(lean.expand(value))
    # block counts are stored in bytes: the header states the unit (df "1K-blocks", BSD "512-blocks")
    scales = {outcome.parsed.get("multiplier"), 512, 1024} - {None}

    def present(word: str) -> bool:
        """As printed; without a unit or list mark (``24%``, ``1,``), ls's attribute mark after
        the mode (``drwxr-xr-x.`` = mode + attr) or ``-b``'s escape; or in the stated unit."""
        bare = word.rstrip("%,:").rstrip("\\").removeprefix("<").removesuffix(">")
        if word in have or word in GLUE or bare in have or word[:-1] in have and word[-1] in ".@+":
            return True
        if set(word) <= {"+", "-"}:  # a --stat bar: drawn from the counts
            return True
        return bare.isdigit() and any(str(int(bare) * s) in have for s in scales)

    lines = registry.data_lines(text, outcome.parser)
    missing = {w for line in lines for w in line.split() if not present(w)}
    assert not missing, f"{name}: printed words not in the lean answer: {sorted(missing)[:20]}"


@pytest.mark.parametrize("name, argv, os_name, out", FIXTURES, ids=[f[0] for f in FIXTURES])
def test_expand_inverts_lean_and_compact(name: str, argv: list[str], os_name: str, out: str) -> None:
    outcome = registry.parse(argv[0], argv[1:], Path(out).read_text(errors="replace"), os_name)
    assert outcome.parser is not None
    derived = lean.DERIVED[outcome.parser.id]
    slim = {k: [{f: x for f, x in r.items() if derived.get(f) not in r} if isinstance(r, dict) else r for r in v]
            if isinstance(v, list) else v for k, v in outcome.parsed.items()}
    assert lean.expand(lean.lean(outcome.parsed, outcome.parser.id)) == slim
    nulls = any(x is None for v in outcome.parsed.values() if isinstance(v, list)
                for r in v if isinstance(r, dict) for x in r.values())
    if not nulls:  # compact folds a null like a missing key: the identity holds for null-free rows
        assert lean.expand(compact(outcome.parsed).value) == outcome.parsed


def test_shared_columns_gaps_last_and_trimmed_rows() -> None:
    rows = [{"name": "a", "owner": "root", "target": "x"}, {"name": "b", "owner": "root"},
            {"name": "c", "owner": "root", "size": 3}]
    value = lean.lean({"entries": rows}, "ps")
    assert value == {"entries": {"schema": ["name", "target", "size"], "default": {"owner": "root"},
                                 "rows": [["a", "x"], ["b"], ["c", None, 3]]}}
    assert lean.expand(value) == {"entries": rows}
    with_null = [{"name": "a", "v": None}, {"name": "b", "v": None}]
    assert lean.lean({"entries": with_null}, "ps") == {"entries": with_null}  # an explicit null stays


def test_a_usual_value_becomes_the_columns_default() -> None:
    """df: most file systems are tmpfs; the other values stay in the rows, the blank cells end
    the rows (the column moves after the ones with fewer blanks)."""
    rows = [{"fs": "/dev/vda", "on": "/", "use": 25}] + [{"fs": "tmpfs", "on": f"/m{i}", "use": 0} for i in range(5)]
    value = lean.lean({"filesystems": rows}, "ps")
    assert value == {"filesystems": {"schema": ["on", "fs", "use"], "default": {"fs": "tmpfs", "use": 0},
                                     "rows": [["/", "/dev/vda", 25]] + [[f"/m{i}"] for i in range(5)]}}
    assert lean.expand(value) == {"filesystems": rows}


@pytest.mark.parametrize("values", [
    [1, True, 1, True, 1.0, 1, 1],  # equal in Python, not in JSON
    [0.0, -0.0, 0.0, -0.0, 0.0, 0.0],
    [-0.0, -0.0, -0.0, 0.0, 1.5, 2.5],
    [[1], [1], [1], [2]],  # nested values get no default
    ["x", "x", "x", "x"],  # every row: the column leaves the schema
])
def test_defaults_keep_json_types_and_spellings(values: list[Any]) -> None:
    rows = [{"n": i, "v": v} for i, v in enumerate(values)]
    value = lean.lean({"rows": rows}, "ps")
    back = lean.expand(value)["rows"]
    assert json.dumps(back, sort_keys=True) == json.dumps(rows, sort_keys=True)  # spellings: -0.0, 1.0, true
    assert [type(r["v"]) for r in back] == [type(v) for v in values]


def test_a_table_of_constant_rows_keeps_its_row_count() -> None:
    rows = [{"a": 1, "b": "x"}] * 3
    value = lean.lean({"rows": rows}, "ps")
    assert value == {"rows": {"schema": [], "default": {"a": 1, "b": "x"}, "rows": [[], [], []]}}
    assert lean.expand(value) == {"rows": rows}


def test_derived_fields_only_dropped_beside_their_source() -> None:
    rows = [{"mode": "-rw-r--r--", "type": "file", "name": "a"}, {"type": "directory", "name": "b"}]
    assert lean.expand(lean.lean({"entries": rows}, "ls")) == {
        "entries": [{"mode": "-rw-r--r--", "name": "a"}, {"type": "directory", "name": "b"}]}
    assert re.fullmatch(r"[a-z-]+", "git-log") and lean.applies("git-log") and not lean.applies("grep")
