"""``lean`` against a plain reference: the rows read one by one, a lookup per column per row, the
depth counted recursively, values compared by their JSON text.  The fast path folds and
transposes once and reads each column's cell types once; generated listings (shuffled, missing
and derived keys, explicit nulls, values equal in Python but not in JSON, nesting around the
limit) and every real fixture must give the reference's answer, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from parism.parsers import registry
from parism.output.shape import lean
from parism.output.shape.compact import MAX_DEPTH
from tests.unit.shape.test_compact_reference import _depth
from tests.unit.shape.test_lean import FIXTURES


def _slim(value: Any, derived: dict[str, str]) -> Any:
    if not isinstance(value, list) or not derived:
        return value
    return [{k: x for k, x in r.items() if k not in derived or r.get(derived[k]) is None}
            if isinstance(r, dict) else r for r in value]


def _reference_table(rows: list[dict[str, Any]], derived: dict[str, str], declared: tuple[str, ...]) -> dict[str, Any]:
    names = {k for r in rows for k in r}
    # a derived field leaves the table only when every row shows its source
    names -= {k for k, src in derived.items() if k in names and all(r.get(src) is not None for r in rows)}
    order = [k for k in declared if k in names] + sorted(names - set(declared))
    schema, same = [], {}
    for k in order:
        cells = [r.get(k) for r in rows]
        texts = {json.dumps(c) for c in cells}
        if all(c is None for c in cells):
            continue
        if len(texts) == 1 and all(k in r for r in rows):
            same[k] = cells[0]
        else:
            schema.append(k)
    out: dict[str, Any] = {"schema": schema}
    if same:
        out["same"] = same
    out["rows"] = [[r.get(k) for k in schema] for r in rows]
    return out


def _reference(parsed: Any, parser_id: str, declared: tuple[str, ...] = (), rows_key: str | None = None) -> Any:
    derived = lean.DERIVED.get(parser_id, {})
    if not isinstance(parsed, dict):
        return parsed
    if any(_depth(v) > MAX_DEPTH - 1 for v in parsed.values()):  # compact refuses: rows stay objects
        return {k: _slim(v, derived) for k, v in parsed.items()}
    out = {}
    for k, v in parsed.items():
        table = isinstance(v, list) and len(v) > 1 and all(isinstance(r, dict) for r in v)
        out[k] = _reference_table(v, derived, declared if k == rows_key else ()) if table else _slim(v, derived)
    return out


def _nested(levels: int) -> Any:
    value: Any = "x"
    for i in range(levels - 1):
        value = [value] if i % 2 else {"n": value}
    return value


KEYS = ["mode", "type", "permissions", "name", "size", "size_bytes_approx", "modified_raw", "modified_at", "target"]
SCALARS = st.sampled_from(["root", "root", "root", "x", "y", 0, 0, 1, 1, 2, True, False, 1.0, 0.0, -0.0, 1.5, None])
CELLS = st.one_of(SCALARS, SCALARS, SCALARS, st.text(max_size=3), st.integers(-2, 300),
                  st.lists(SCALARS, max_size=2), st.dictionaries(st.sampled_from(["owner", "other"]), SCALARS, max_size=2),
                  st.builds(_nested, st.integers(MAX_DEPTH - 4, MAX_DEPTH)))
ROWS = st.lists(st.dictionaries(st.sampled_from(KEYS), CELLS, max_size=len(KEYS)), max_size=14)
# a listing's columns repeat a few values: shared by every row, by most, equal in Python only
USUAL = st.lists(st.dictionaries(st.sampled_from(KEYS[:5]), st.sampled_from(["a", "a", "a", "b", 1, True, 1.0]),
                                 min_size=4), min_size=2, max_size=12)
VALUES = st.dictionaries(st.sampled_from(["entries", "totals", "warnings", "_summary"]),
                         st.one_of(ROWS, ROWS, USUAL, USUAL, CELLS, st.lists(CELLS, max_size=3)), max_size=3)


@settings(max_examples=600, deadline=None)
@given(VALUES, st.sampled_from(sorted(lean.DERIVED)), st.lists(st.sampled_from(KEYS), unique=True, max_size=5))
@example({"entries": [{"name": "a", "target": None}, {"name": "b"}, {"name": "c"}]}, "ls", [])  # one explicit null
@example({"entries": [{"mode": "-", "type": "file", "name": "a"}, {"type": "dir", "name": "b", "mode": "d"}]}, "ls",
         ["name"])
@example({"entries": [{"mode": "-", "type": "file"}, {"type": "dir"}]}, "ls", [])  # a row without the source
def test_lean_matches_the_reference(value: dict[str, Any], parser_id: str, declared: list[str]) -> None:
    got = lean.lean(value, parser_id, tuple(declared), "entries")
    assert json.dumps(got) == json.dumps(_reference(value, parser_id, tuple(declared), "entries"))


@pytest.mark.parametrize("name, argv, os_name, out", FIXTURES, ids=[f[0] for f in FIXTURES])
def test_lean_of_every_fixture_matches_the_reference(name: str, argv: list[str], os_name: str, out: str) -> None:
    outcome = registry.parse(argv[0], argv[1:], Path(out).read_text(errors="replace"), os_name)
    assert outcome.parser is not None
    p = outcome.parser
    assert json.dumps(lean.lean(outcome.parsed, p.id, p.row_fields, p.rows_key)) == json.dumps(
        _reference(outcome.parsed, p.id, p.row_fields, p.rows_key))
