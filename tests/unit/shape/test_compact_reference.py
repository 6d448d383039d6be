"""``compact`` against a plain reference: the straightforward fold (a lookup per schema key per
row) and a recursive depth count.  The fast fold groups rows by key sequence and the depth check
is split by column; random listings with shuffled, missing and nested keys, with nesting around
the limit, must give the reference's schema, rows and verdict."""

from __future__ import annotations

import json
import random
from itertools import chain
from typing import Any

import pytest

from parism.output.shape.compact import MAX_DEPTH, compact, fold


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 1


def _reference_fold(rows: list[Any]) -> Any:
    if not rows:
        return {"schema": [], "rows": []}
    if not all(isinstance(r, dict) for r in rows):
        return rows
    keys = list(dict.fromkeys(chain.from_iterable(rows)))
    return {"schema": keys, "rows": [[r.get(k) for k in keys] for r in rows]}


def _nested(rnd: random.Random, levels: int) -> Any:
    value: Any = rnd.choice([0, "s", None, True, 1.5, {}, []])
    for _ in range(levels - 1):
        value = rnd.choice([[value], {"n": value}, [1, value], {"a": "x", "n": value}])
    return value


def _listing(rnd: random.Random) -> dict[str, Any]:
    keys = ["mode", "name", "size", "target", "perm", "extra"]
    rows: list[Any] = []
    for _ in range(rnd.randint(0, 30)):
        chosen = [k for k in keys if rnd.random() < 0.8]
        if rnd.random() < 0.2:
            rnd.shuffle(chosen)
        row = {k: rnd.choice([1, "v", None, {"o": "rwx"}, [1, 2]]) for k in chosen}
        if rnd.random() < 0.1:
            row[rnd.choice(keys)] = _nested(rnd, rnd.randint(MAX_DEPTH - 4, MAX_DEPTH))
        rows.append(row)
    if rows and rnd.random() < 0.1:
        rows.append(rnd.choice([3, "x", [1]]))  # not all objects: left as it is
    value: dict[str, Any] = {"entries": rows, "n": rnd.randint(0, 9)}
    if rnd.random() < 0.3:
        value["warnings"] = ["w"] * rnd.randint(0, 3)
    if rnd.random() < 0.2:
        value["deep"] = _nested(rnd, rnd.randint(MAX_DEPTH - 3, MAX_DEPTH + 1))
    return value


@pytest.mark.parametrize("seed", range(300))
def test_compact_matches_the_reference(seed: int) -> None:
    rnd = random.Random(seed)
    value = _listing(rnd)
    out = compact(value)
    assert out.ok == (_depth(value) <= MAX_DEPTH)
    if out.ok:
        expected = {k: _reference_fold(v) if isinstance(v, list) else v for k, v in value.items()}
        assert json.dumps(out.value) == json.dumps(expected)  # key order included


def test_fold_keeps_first_seen_key_order_across_row_shapes() -> None:
    rows = [{"b": 1, "a": 2}, {"a": 3, "c": 4}, {"c": 5, "b": 6, "a": 7}, {"b": 8, "a": 9, "c": 0}]
    assert fold(rows) == _reference_fold(rows)
    assert fold(rows)["schema"] == ["b", "a", "c"]
