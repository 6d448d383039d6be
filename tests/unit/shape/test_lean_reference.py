"""``lean`` against a plain reference: the rows read one by one, a lookup per column per row, the
depth counted recursively.  The fast path folds and transposes once, reads each column's cell
types once and never reads a derived column beside a complete source; generated listings (shuffled,
missing and derived keys, explicit nulls, values equal in Python but not in JSON, nesting around
the limit) and every real fixture must give the reference's answer, byte for byte."""

from __future__ import annotations

import json
from collections import Counter
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
    return [{k: x for k, x in r.items() if derived.get(k) not in r} if isinstance(r, dict) else r for r in value]


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: same type, equal, same spelling (``-0.0`` is not ``0.0``)."""
    return type(a) is type(b) and a == b and json.dumps(a) == json.dumps(b)


def _reference_table(rows: list[dict[str, Any]], derived: dict[str, str]) -> dict[str, Any]:
    n = len(rows)
    schema = list(dict.fromkeys(k for r in rows for k in r))
    columns = {k: [None if derived.get(k) in r else r.get(k) for r in rows] for k in schema}
    default = {}
    for k, column in columns.items():
        if any(c is None for c in column):
            continue
        try:
            value = Counter(column).most_common(1)[0][0]  # the most common value, Python's equality
        except TypeError:
            continue
        hits = sum(_same(c, value) for c in column)
        if hits == n or (hits >= lean.MIN_DEFAULT and 4 * hits >= n):
            default[k] = value
            columns[k] = [None if _same(c, value) else c for c in column]
    blanks = {k: sum(c is None for c in column) for k, column in columns.items()}
    keep = sorted((k for k in schema if blanks[k] < n), key=lambda k: blanks[k])
    out: dict[str, Any] = {"schema": keep}
    if default:
        out["default"] = default
    out["rows"] = []
    for i in range(n):
        row = [columns[k][i] for k in keep]
        while row and row[-1] is None:
            row.pop()
        out["rows"].append(row)
    return out


def _reference(parsed: Any, parser_id: str) -> Any:
    derived = lean.DERIVED[parser_id]
    if not isinstance(parsed, dict):
        return parsed
    if any(_depth(v) > MAX_DEPTH - 1 for v in parsed.values()):  # compact refuses: rows stay objects
        return {k: _slim(v, derived) for k, v in parsed.items()}
    out = {}
    for k, v in parsed.items():
        table = (isinstance(v, list) and len(v) > 1 and all(isinstance(r, dict) for r in v)
                 and not any(x is None for r in v for x in r.values()))
        out[k] = _reference_table(v, derived) if table else _slim(v, derived)
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
# a listing's columns repeat a few values: defaults of every kind (all rows, most rows, a quarter)
USUAL = st.lists(st.dictionaries(st.sampled_from(KEYS[:5]), st.sampled_from(["a", "a", "a", "b", 1, True, 1.0]),
                                 min_size=4), min_size=2, max_size=12)
VALUES = st.dictionaries(st.sampled_from(["entries", "totals", "warnings", "_summary"]),
                         st.one_of(ROWS, ROWS, USUAL, USUAL, CELLS, st.lists(CELLS, max_size=3)), max_size=3)


@settings(max_examples=600, deadline=None)
@given(VALUES, st.sampled_from(sorted(lean.DERIVED)))
@example({"entries": [{"name": "a", "target": None}, {"name": "b"}, {"name": "c"}]}, "ls")  # one explicit null
@example({"entries": [{"mode": "-", "type": "file", "name": "a"}, {"type": "dir", "name": "b", "mode": "d"}]}, "ls")
def test_lean_matches_the_reference(value: dict[str, Any], parser_id: str) -> None:
    assert json.dumps(lean.lean(value, parser_id)) == json.dumps(_reference(value, parser_id))


@pytest.mark.parametrize("name, argv, os_name, out", FIXTURES, ids=[f[0] for f in FIXTURES])
def test_lean_of_every_fixture_matches_the_reference(name: str, argv: list[str], os_name: str, out: str) -> None:
    outcome = registry.parse(argv[0], argv[1:], Path(out).read_text(errors="replace"), os_name)
    assert outcome.parser is not None
    assert json.dumps(lean.lean(outcome.parsed, outcome.parser.id)) == json.dumps(
        _reference(outcome.parsed, outcome.parser.id))
