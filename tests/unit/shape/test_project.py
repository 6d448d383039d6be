"""Projection (contract §11) against a plain reference implementation, on the rows of the real
fixtures (``tests/fixtures/*/*/*.json``: parser output checked against the raw text by the parser
tests), with random queries; and every refusal naming its field."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parism.wire.envelope import Failure
from parism.wire.options import RunOptions, build
from parism.output.shape.project import Projected, precheck, project

ROOT = Path(__file__).resolve().parents[3]
OPS = ("eq", "ne", "prefix", "contains", "gt", "gte", "lt", "lte")


def _fixture_arrays() -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for path in sorted((ROOT / "tests" / "fixtures").glob("*/*/*.json")):
        parsed = json.loads(path.read_text()).get("parsed")
        if not isinstance(parsed, dict):
            continue
        for key, rows in parsed.items():
            if isinstance(rows, list) and len(rows) >= 2 and all(isinstance(r, dict) for r in rows):
                out.append((f"{path.parent.name}/{path.stem}:{key}", rows))
    return out


ARRAYS = _fixture_arrays()
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


# -- the reference: the contract's sentences, one by one ------------------------------------------

def jtype(v: Any) -> str:
    if v is None:
        return "null"
    if v is True or v is False:
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def ref_project(rows: list[dict[str, Any]], q: dict[str, Any], cap: int) -> list[dict[str, Any]] | str:
    known = set().union(*rows)
    named = list(q.get("select") or []) + [w["field"] for w in q.get("where") or []]
    named += [q["sort_by"]["field"]] if q.get("sort_by") else []
    for w in q.get("where") or []:  # the values first: they are wrong whatever the rows
        op, value = w["op"], w["value"]
        if op in ("prefix", "contains") and jtype(value) != "string":
            return "invalid_projection"
        if op in ("gt", "gte", "lt", "lte") and jtype(value) != "number":
            return "invalid_projection"
    if any(n not in known for n in named):
        return "unknown_field"
    for w in q.get("where") or []:
        f, op, value = w["field"], w["op"], w["value"]
        kept = []
        for r in rows:
            v = r.get(f)
            if v is not None and value is not None:
                need = jtype(value) if op in ("eq", "ne") else ("string" if op in ("prefix", "contains") else "number")
                if jtype(v) != need:
                    return "type_mismatch"
            if op == "eq":
                ok = (v is None) if value is None else (v is not None and v == value)
            elif op == "ne":
                ok = (v is not None) if value is None else (v is None or v != value)
            elif v is None:
                ok = False
            elif op == "prefix":
                ok = v[: len(value)] == value
            elif op == "contains":
                ok = value in v
            else:
                ok = {"gt": v > value, "gte": v >= value, "lt": v < value, "lte": v <= value}[op]
            if ok:
                kept.append(r)
        rows = kept
    if q.get("sort_by"):
        f, desc = q["sort_by"]["field"], q["sort_by"].get("order") == "desc"
        present = [r for r in rows if r.get(f) is not None]
        if any(jtype(r[f]) in ("array", "object") for r in present) or len({jtype(r[f]) for r in present}) > 1:
            return "type_mismatch"
        # insertion sort: obviously stable, obviously right
        ordered: list[dict[str, Any]] = []
        for r in present:
            key = r[f].encode("utf-16-be") if isinstance(r[f], str) else r[f]
            i = len(ordered)
            while i > 0:
                other = ordered[i - 1][f]
                okey = other.encode("utf-16-be") if isinstance(other, str) else other
                if (okey < key) if desc else (okey > key):
                    i -= 1
                else:
                    break
            ordered.insert(i, r)
        rows = ordered + [r for r in rows if r.get(f) is None]
    limit = q.get("limit")
    if cap and (limit is None or limit > cap):
        limit = cap
    if limit is not None:
        rows = rows[:limit]
    if q.get("select"):
        rows = [{n: r[n] for n in q["select"] if n in r} for r in rows]
    return rows


@st.composite
def queries(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    name, rows = draw(st.sampled_from(ARRAYS))
    fields = sorted(set().union(*rows))
    field = st.sampled_from(fields + ["no_such_field"]) if draw(st.integers(0, 9)) == 0 else st.sampled_from(fields)
    q: dict[str, Any] = {}
    wheres = []
    for _ in range(draw(st.integers(0, 3))):
        f = draw(field)
        values = [r.get(f) for r in rows if isinstance(r.get(f), (str, int, float, bool))]
        choice = draw(st.integers(0, 5))
        if values and choice < 4:
            v = draw(st.sampled_from(values))
            if isinstance(v, str) and choice == 1:
                v = v[: draw(st.integers(0, len(v)))]  # a prefix / substring
        else:
            v = draw(st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.text(max_size=3)))
        wheres.append({"field": f, "op": draw(st.sampled_from(OPS)), "value": v})
    if wheres:
        q["where"] = wheres
    if draw(st.booleans()):
        q["sort_by"] = {"field": draw(field), "order": draw(st.sampled_from(["asc", "desc"]))}
    if draw(st.booleans()):
        q["limit"] = draw(st.integers(0, len(rows) + 2))
    if draw(st.booleans()) or not q:
        q["select"] = draw(st.lists(field, min_size=1, max_size=4, unique=True))
    return name, rows, q


@SETTINGS
@given(queries(), st.sampled_from([0, 3, 500]))
def test_projection_equals_the_reference(case: tuple[str, list[dict[str, Any]], dict[str, Any]], cap: int) -> None:
    name, rows, q = case
    opts = build(RunOptions, {"cmd": "x", **q})
    assert isinstance(opts, RunOptions), opts
    want = ref_project(rows, q, cap)
    got = project({"rows": rows}, opts, "rows", (), cap)
    if isinstance(want, str):
        assert isinstance(got, Failure) and got.reason == want, (name, q, got)
        return
    assert isinstance(got, Projected), (name, q, got)
    assert got.rows == want, (name, q)
    matched = ref_project(rows, {k: v for k, v in q.items() if k == "where"}, 0)
    assert isinstance(matched, list)
    assert got.parsed["_summary"] == {"total": len(rows), "matched": len(matched), "shown": len(want),
                                      **({"truncated": True} if cap and len(matched) > cap
                                         and (q.get("limit") is None or q["limit"] > cap) else {})}


def _opts(**kw: Any) -> RunOptions:
    opts = build(RunOptions, {"cmd": "ls", **kw})
    assert isinstance(opts, RunOptions), opts
    return opts


ROWS = [{"name": "b", "size": 2}, {"name": "a"}, {"name": "c", "size": 1}, {"name": "d", "size": 2}]


def test_sort_is_stable_with_missing_last_in_both_orders() -> None:
    for order, want in (("asc", ["c", "b", "d", "a"]), ("desc", ["b", "d", "c", "a"])):
        got = project({"rows": ROWS}, _opts(sort_by={"field": "size", "order": order}), "rows", (), 0)
        assert isinstance(got, Projected) and [r["name"] for r in got.rows] == want


@pytest.mark.parametrize("kw, reason, words", [
    ({"select": ["nme"]}, "unknown_field", ("'nme'", "select.0", "valid: mixed, name, size")),
    ({"where": [{"field": "size", "op": "eq", "value": "2"}]}, "type_mismatch", ("'size'", "number", "string")),
    ({"where": [{"field": "name", "op": "gt", "value": 1}]}, "type_mismatch", ("'name'", "string", "number")),
    ({"where": [{"field": "name", "op": "prefix", "value": 1}]}, "invalid_projection", ("where.0", "string")),
    ({"where": [{"field": "size", "op": "lt", "value": True}]}, "invalid_projection", ("where.0", "finite number")),
    ({"where": [{"field": "size", "op": "lt", "value": math.inf}]}, "invalid_projection", ("finite",)),
    ({"sort_by": {"field": "mixed"}}, "type_mismatch", ("'mixed'", "number and string")),
    ({"array": "nope", "limit": 1}, "array_not_found", ("'nope'", "arrays: other, rows")),
    ({"limit": 1}, "array_ambiguous", ("other, rows", "'array'")),
])
def test_refusals_name_the_field(kw: dict[str, Any], reason: str, words: tuple[str, ...]) -> None:
    rows = ROWS + [{"name": "e", "mixed": 1}, {"name": "f", "mixed": "x"}]
    got = project({"rows": rows, "other": [1]}, _opts(**kw), None if "limit" in kw and not kw.get("array") else "rows",
                  (), 0)
    assert isinstance(got, Failure) and (got.kind, got.reason) == ("config", reason), got
    for w in words:
        assert w in got.message, (w, got.message)


def test_top_level_array_and_array_parameter() -> None:
    got = project(ROWS, _opts(limit=2), None, (), 0)
    assert isinstance(got, Projected) and got.parsed == ROWS[:2] and got.key == ""
    bad = project(ROWS, _opts(array="rows"), None, (), 0)
    assert isinstance(bad, Failure) and bad.reason == "array_not_found"
    got = project({"rows": ROWS, "other": [{"x": 1}] * 5}, _opts(array="other", limit=1), "rows", (), 3)
    assert isinstance(got, Projected) and got.parsed["other"] == [{"x": 1}]
    assert got.parsed["rows"] == ROWS[:3] and got.parsed["_summary"]["truncated_arrays"] == ["rows"]


def test_precheck_uses_declared_row_fields_only_for_their_array() -> None:
    fields = ("name", "size_bytes")
    bad = precheck(_opts(select=["size"]), "entries", fields)
    assert isinstance(bad, Failure) and bad.reason == "unknown_field" and "valid: name, size_bytes" in bad.message
    assert precheck(_opts(select=["size"], array="totals"), "entries", fields) is None
    assert precheck(_opts(select=["size"]), "entries", ()) is None
    bad = precheck(_opts(where=[{"field": "name", "op": "contains", "value": 3}]), None, ())
    assert isinstance(bad, Failure) and bad.reason == "invalid_projection"
