"""The default answer of the parsers whose restatement is proved here once (``restate.PROVEN``:
ls, ps, git log, df — the per-call check is skipped for them): every printed word of a data
line of the real fixtures and the shared corpus is in the lean rows when raw is left out, and
``expand`` reads the rows back."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from parism.parsers import registry
from parism.output.shape import lean, restate
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
        if parsed.parser is not None and parsed.parser.id in restate.PROVEN and parsed.parsed is not None:
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
    assert ids == set(restate.PROVEN)


@pytest.mark.parametrize("name, argv, os_name, out", FIXTURES, ids=[f[0] for f in FIXTURES])
def test_lean_rows_carry_every_printed_word(name: str, argv: list[str], os_name: str, out: str) -> None:
    text = Path(out).read_text(errors="replace")
    outcome = registry.parse(argv[0], argv[1:], text, os_name)
    assert outcome.parser is not None
    p = outcome.parser
    value = lean.lean(outcome.parsed, p.id, p.row_fields, p.rows_key)
    if restate.doubtful(outcome.parsed, p.id, argv[1:]):
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
def test_expand_reads_the_rows_back(name: str, argv: list[str], os_name: str, out: str) -> None:
    """``expand`` (a null cell = an absent field) gives the parsed rows without their derived
    fields; ``compact``'s tables read back the same way."""
    outcome = registry.parse(argv[0], argv[1:], Path(out).read_text(errors="replace"), os_name)
    p = outcome.parser
    assert p is not None
    derived = lean.DERIVED.get(p.id, {})

    def bare(rows: Any) -> Any:
        if not isinstance(rows, list):
            return rows
        if len(rows) < 2:  # one row stays an object (nulls kept): its derived fields leave it beside their source
            return [{k: x for k, x in r.items() if k not in derived or derived[k] not in r}
                    if isinstance(r, dict) else r for r in rows]
        rows = [{k: x for k, x in r.items() if x is not None} if isinstance(r, dict) else r for r in rows]
        drop = {k for k, src in derived.items() if all(isinstance(r, dict) and src in r for r in rows)}
        return [{k: x for k, x in r.items() if k not in drop} if isinstance(r, dict) else r for r in rows]

    assert lean.expand(lean.lean(outcome.parsed, p.id, p.row_fields, p.rows_key)) == {
        k: bare(v) for k, v in outcome.parsed.items()}
    assert lean.expand(compact(outcome.parsed).value) == {
        k: [{f: x for f, x in r.items() if x is not None} for r in v] if isinstance(v, list) and v
        and all(isinstance(r, dict) for r in v) else v for k, v in outcome.parsed.items()}


def test_shared_columns_and_full_rows() -> None:
    rows = [{"name": "a", "owner": "root", "target": "x"}, {"name": "b", "owner": "root"},
            {"name": "c", "owner": "root", "size": 3}]
    value = lean.lean({"entries": rows}, "ps", ("name", "owner", "size", "target"), "entries")
    assert value == {"entries": {"schema": ["name", "size", "target"], "same": {"owner": "root"},
                                 "rows": [["a", None, "x"], ["b", None, None], ["c", 3, None]]}}
    assert lean.expand(value) == {"entries": rows}
    with_null = [{"name": "a", "v": None}, {"name": "b", "v": None}]
    assert lean.lean({"entries": with_null}, "ps") == {"entries": {"schema": ["name"], "rows": [["a"], ["b"]]}}


def test_a_usual_value_stays_in_its_rows() -> None:
    """df: most file systems are tmpfs — every row still shows it (issue #26: a row
    ``["/sys/fs/cgroup"]`` looked empty)."""
    rows = [{"fs": "/dev/vda", "on": "/", "use": 25}] + [{"fs": "tmpfs", "on": f"/m{i}", "use": 0} for i in range(5)]
    value = lean.lean({"filesystems": rows}, "df", ("fs", "on", "use"), "filesystems")
    assert value == {"filesystems": {"schema": ["fs", "on", "use"],
                                     "rows": [["/dev/vda", "/", 25]] + [["tmpfs", f"/m{i}", 0] for i in range(5)]}}
    assert lean.expand(value) == {"filesystems": rows}


@pytest.mark.parametrize("values", [
    [1, True, 1, True, 1.0, 1, 1],  # equal in Python, not in JSON
    [0.0, -0.0, 0.0, -0.0, 0.0, 0.0],
    [-0.0, -0.0, -0.0, 0.0, 1.5, 2.5],
    [[1], [1], [True], [1]],
    [{"a": 1}, {"a": 1.0}],
])
def test_only_json_equal_values_are_shared(values: list[Any]) -> None:
    rows = [{"n": i, "v": v} for i, v in enumerate(values)]
    value = lean.lean({"rows": rows}, "ps")
    assert "same" not in value["rows"]
    back = lean.expand(value)["rows"]
    assert json.dumps(back, sort_keys=True) == json.dumps(rows, sort_keys=True)  # spellings: -0.0, 1.0, true
    assert [type(r["v"]) for r in back] == [type(v) for v in values]


@pytest.mark.parametrize("v", ["x", -0.0, [1, {"a": None}], {"k": [1.0]}, False])
def test_a_value_of_every_row_is_shared(v: Any) -> None:
    rows = [{"n": i, "v": v} for i in range(3)]
    value = lean.lean({"rows": rows}, "ps")
    assert value == {"rows": {"schema": ["n"], "same": {"v": v}, "rows": [[0], [1], [2]]}}
    assert json.dumps(lean.expand(value), sort_keys=True) == json.dumps({"rows": rows}, sort_keys=True)


def test_a_table_of_constant_rows_keeps_its_row_count() -> None:
    rows = [{"a": 1, "b": "x"}] * 3
    value = lean.lean({"rows": rows}, "ps")
    assert value == {"rows": {"schema": [], "same": {"a": 1, "b": "x"}, "rows": [[], [], []]}}
    assert lean.expand(value) == {"rows": rows}


def test_derived_fields_only_dropped_beside_their_source() -> None:
    rows = [{"mode": "-rw-r--r--", "type": "file", "name": "a"}, {"type": "directory", "name": "b"}]
    assert lean.expand(lean.lean({"entries": rows}, "ls")) == {"entries": rows}  # a row lacks mode: type stays
    rows[1]["mode"] = "drwxr-xr-x"
    assert lean.expand(lean.lean({"entries": rows}, "ls")) == {
        "entries": [{"mode": "-rw-r--r--", "name": "a"}, {"mode": "drwxr-xr-x", "name": "b"}]}
    assert re.fullmatch(r"[a-z-]+", "git-log") and "git-log" in lean.DERIVED
