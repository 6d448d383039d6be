"""Shaping: lossless compact, max_items cut, adaptive thresholds that only ever compress more."""

from __future__ import annotations

from typing import Any

import pytest

from parism.output.shape import shape
from parism.output.shape.adaptive import choose
from parism.output.shape.compact import compact
from parism.output.shape.limits import cut


def test_compact_union_schema_nulls_and_nested_values_kept() -> None:
    value = {"rows": [{"a": 1, "b": [1, 2]}, {"a": 2, "c": {"x": None}}], "names": ["p", "q"], "n": 3, "e": []}
    out = compact(value)
    assert out.ok
    assert out.value == {
        "rows": {"schema": ["a", "b", "c"], "rows": [[1, [1, 2], None], [2, None, {"x": None}]]},
        "names": ["p", "q"], "n": 3, "e": {"schema": [], "rows": []},
    }


def test_compact_leaves_mixed_arrays_and_non_objects() -> None:
    assert compact({"m": [{"a": 1}, 2]}).value == {"m": [{"a": 1}, 2]}
    assert compact([{"a": 1}]).value == [{"a": 1}]


def test_compact_refuses_what_it_cannot_represent() -> None:
    deep: Any = 0
    for _ in range(70):
        deep = [deep]
    out = compact({"d": deep})
    assert not out.ok and out.reason == "representation_not_lossless"


@pytest.mark.parametrize(("leaf", "leaf_levels"), [(0, 1), ({}, 1), ([], 1), ({"k": "v"}, 2), (["x"], 2)], ids=repr)
def test_compact_depth_limit_is_exact(leaf: Any, leaf_levels: int) -> None:
    """64 levels (a scalar counts as one, so does an empty container) compact, 65 are refused."""
    def levels(total: int) -> Any:
        value = leaf
        for i in range(total - leaf_levels):
            value = [value] if i % 2 else {"k": value}
        return value

    assert compact(levels(64)).ok
    assert not compact(levels(65)).ok


def test_max_items_cut() -> None:
    value = {"entries": list(range(7)), "other": list(range(9)), "k": 1}
    out, om = cut(value, "entries", 3)
    assert out == {"entries": [0, 1, 2], "other": [0, 1, 2], "k": 1,
                   "_summary": {"total": 7, "shown": 3, "truncated": True, "truncated_arrays": ["other"]}}
    assert om is not None and (om.rows_total, om.rows_omitted) == (7, 4)
    assert cut(value, "entries", 0) == (value, None)
    assert cut({"entries": [1], "_summary": {}}, "entries", 0)[1] is None


def test_adaptive_is_monotonic_and_explicit_formats_win() -> None:
    rows = {"r": [{"a": i} for i in range(250)]}
    t = {"json": 0, "compact": 50, "json_no_raw": 200}
    assert choose(None, rows, t).compact and choose(None, rows, t).drop_raw  # v1 stopped compacting here
    assert choose(None, {"r": [{"a": 1}] * 60}, t) .compact and not choose(None, {"r": [{"a": 1}] * 60}, t).drop_raw
    assert not choose(None, {"r": [{"a": 1}] * 10}, t).compact
    assert choose("compact", rows, t).compact  # honoured for >= 200 rows (v1 bug)
    assert not choose("json", rows, t).compact and not choose("json", rows, t).drop_raw
    inverted = {"json": 0, "compact": 100, "json_no_raw": 10}
    assert not choose(None, {"r": [{"a": 1}] * 50}, inverted).drop_raw


def test_shape_reports_adaptation_and_keeps_raw_on_refusal() -> None:
    s = shape({"r": [{"a": i} for i in range(60)]}, requested=None, rows_key="r", max_items=0, thresholds=None)
    assert s.warnings == ["format_adapted:compact"] and s.keep_raw
    deep: Any = 0
    for _ in range(70):
        deep = {"x": deep}
    refused = shape({"r": [deep]}, requested="compact", rows_key="r", max_items=0, thresholds=None)
    assert refused.lossless_failure and refused.keep_raw and refused.parsed == {"r": [deep]}
