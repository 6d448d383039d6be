"""Filters and projection (contract §11): ``where`` → ``sort_by`` → ``limit`` → ``select`` on one
row array of the parsed value.

Why typed comparisons instead of Python's: the contract's semantics are JSON's (a number never
equals a string, ``true`` is not ``1``), so a field of another type than the condition's value is
a ``type_mismatch`` naming the field, never a silent "no match".  Every refusal is a
``Failure(kind="config")`` whose message names the offending field and lists the valid ones;
:func:`precheck` makes the same field check *before* the command runs when the parser declares
its row fields.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TYPE_CHECKING

from parism.wire.envelope import Failure, Omission
from parism.wire.options import RunOptions, Where

if TYPE_CHECKING:
    from pydantic import JsonValue

_MAX_LISTED = 40  # valid names listed in a refusal (a parser declares at most a few dozen)


@dataclass
class Projected:
    parsed: Any  # the value with the target array projected (+ ``_summary`` when an object)
    key: str  # the target array's key; "" when ``parsed`` itself is the array
    rows: list[Any]  # the projected rows
    total: int  # rows before ``where``
    matched: int  # rows after ``where``

    @property
    def summary(self) -> dict[str, int]:
        return {"total": self.total, "matched": self.matched, "shown": len(self.rows)}


def projection_omission(res: Projected) -> list[Omission]:
    """The rows the call's own where/limit (or ``max_items``) left out, counted (contract §12.2 step 7)."""
    shown = len(res.rows)
    if shown == res.total:
        return []
    return [Omission(stage="projection", reason=f"{res.total - shown} of {res.total} row(s) were left out by "
                                                 "where/limit/max_items",
                     rows_total=res.total, rows_selected=res.matched, rows_returned=shown,
                     rows_omitted=res.total - shown)]


def refusal(reason: str, message: str) -> Failure:
    """A shaping parameter that cannot apply: a ``config`` failure (the call, not the command)."""
    return Failure(kind="config", reason=reason, message=message)


def _names(names: Iterable[str]) -> str:
    listed = sorted(set(names))
    more = f", … (+{len(listed) - _MAX_LISTED})" if len(listed) > _MAX_LISTED else ""
    return ", ".join(listed[:_MAX_LISTED]) + more


def fields_of(opts: RunOptions) -> list[tuple[str, str]]:
    """(parameter, field) for every field the call names, in parameter order."""
    out = [(f"select.{i}", f) for i, f in enumerate(opts.select or ())]
    out += [(f"where.{i}.field", w.field) for i, w in enumerate(opts.where or ())]
    if opts.sort_by is not None:
        out.append(("sort_by.field", opts.sort_by.field))
    if opts.budget is not None:
        out += [(f"budget.required_fields.{i}", f) for i, f in enumerate(opts.budget.required_fields or ())]
    return out


def check_fields(opts: RunOptions, known: set[str]) -> Failure | None:
    for param, name in fields_of(opts):
        # any text field may carry the exact bytes beside it (docs/envelope.md, "Exact names")
        if name not in known and not (name.endswith("_b64") and name[:-4] in known):
            return refusal("unknown_field", f"unknown field '{name}' in {param} (valid: {_names(known)})")
    return None


def check_values(opts: RunOptions) -> Failure | None:
    """What the options model cannot say alone: each operator's value type."""
    for i, w in enumerate(opts.where or ()):
        if w.op in ("prefix", "contains") and not isinstance(w.value, str):
            return refusal("invalid_projection", f"where.{i} ({w.field} {w.op}): the value must be a string, "
                                                 f"got {_kind(w.value)}")
        if w.op in ("gt", "gte", "lt", "lte") and not _finite_number(w.value):
            return refusal("invalid_projection", f"where.{i} ({w.field} {w.op}): the value must be a finite "
                                                 f"number, got {_kind(w.value)}")
        if w.op in ("eq", "ne") and isinstance(w.value, float) and not math.isfinite(w.value):
            return refusal("invalid_projection", f"where.{i} ({w.field} {w.op}): the value must be finite")
    return None


def precheck(opts: RunOptions, rows_key: str | None, row_fields: Sequence[str]) -> Failure | None:
    """Before running: the value checks, and the field check when the parser declares the fields
    of the array the call will project (``row_fields`` lists every key its rows may carry)."""
    bad = check_values(opts)
    if bad is not None or not row_fields or (opts.array is not None and opts.array != rows_key):
        return bad
    return check_fields(opts, set(row_fields))


def target(parsed: JsonValue, array: str | None, rows_key: str | None) -> str | Failure:
    """The key of the array to project ("" = ``parsed`` itself), or why there is none."""
    if isinstance(parsed, list):
        if array is not None:
            return refusal("array_not_found", f"array '{array}' not found: the parsed value is itself an array "
                                              "(leave out 'array')")
        return ""
    arrays = [k for k, v in parsed.items() if isinstance(v, list)] if isinstance(parsed, dict) else []
    if array is not None:
        if array in arrays:
            return array
        return refusal("array_not_found", f"array '{array}' not found (arrays: {_names(arrays) or 'none'})")
    if rows_key is not None and rows_key in arrays:
        return rows_key
    if len(arrays) == 1:
        return arrays[0]
    if not arrays:
        return refusal("array_not_found", "the parsed value has no array to project")
    return refusal("array_ambiguous", f"the parsed value has several arrays ({_names(arrays)}): choose one with 'array'")


def project(parsed: JsonValue, opts: RunOptions, rows_key: str | None, row_fields: Sequence[str],
            max_items: int) -> Projected | Failure:
    key = target(parsed, opts.array, rows_key)
    if isinstance(key, Failure):
        return key
    rows: list[Any] = parsed if key == "" else parsed[key]
    bad = check_values(opts) or _check_known(opts, rows, row_fields if key == rows_key else ())
    if bad is not None:
        return bad
    out = rows
    for i, cond in enumerate(opts.where or ()):
        kept = _where(out, cond, i)
        if isinstance(kept, Failure):
            return kept
        out = kept
    matched = len(out)
    if opts.sort_by is not None:
        ordered = _sorted(out, opts.sort_by.field, opts.sort_by.order == "desc")
        if isinstance(ordered, Failure):
            return ordered
        out = ordered
    cap = max_items if max_items > 0 else None
    limit, cut_by_cap = opts.limit, False
    if cap is not None and (limit is None or limit > cap):
        limit, cut_by_cap = cap, matched > cap
    if limit is not None:
        out = out[:limit]
    if opts.select is not None:
        names = opts.select
        out = [{n: r[n] for n in names if n in r} if isinstance(r, dict) else r for r in out]
    res = Projected(parsed=out, key=key, rows=out, total=len(rows), matched=matched)
    if key == "":
        return res
    value = {k: v for k, v in parsed.items() if k != "_summary"}
    value[key] = out
    summary: dict[str, Any] = res.summary
    others = [k for k, v in value.items() if k != key and isinstance(v, list) and cap is not None and len(v) > cap]
    for k in others:
        value[k] = value[k][:cap]
    if cut_by_cap:
        summary["truncated"] = True
    if others:
        summary["truncated_arrays"] = others
    value["_summary"] = summary
    res.parsed = value
    return res


def _check_known(opts: RunOptions, rows: list[Any], row_fields: Sequence[str]) -> Failure | None:
    """Known fields = the declared row fields ∪ keys present in any row (contract §11)."""
    if not fields_of(opts):
        return None
    if any(not isinstance(r, dict) for r in rows):
        return refusal("unknown_field", "the rows of this array are not objects: select, where, sort_by and "
                                        "budget.required_fields need fields")
    if not rows and not row_fields:
        return None
    known = set(row_fields)
    for r in rows:
        known.update(r)
    return check_fields(opts, known)


# -- typed comparisons --------------------------------------------------------------------------

_MISSING = object()


def _kind(value: JsonValue) -> str:
    """The JSON type name of a value (bool before int: ``True`` is not a number)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _finite_number(value: JsonValue) -> bool:
    return _kind(value) == "number" and math.isfinite(value)


def _mismatch(field: str, where: str, got: JsonValue, want: str, row: int) -> Failure:
    return refusal("type_mismatch", f"field '{field}' is {_kind(got)} in row {row}, but {where} needs {want}")


def _where(rows: list[Any], cond: Where, i: int) -> list[Any] | Failure:
    test = _TESTS[cond.op]
    field, value, op = cond.field, cond.value, cond.op
    want = _kind(value) if op in ("eq", "ne") else ("string" if op in ("prefix", "contains") else "number")
    kept = []
    for n, row in enumerate(rows):
        got = row.get(field, _MISSING)
        present = got is not _MISSING and got is not None
        if present and value is not None and _kind(got) != want:
            return _mismatch(field, f"where.{i} ({op} {value!r})", got, f"a {want}", n)
        if test(got if present else _MISSING, value):
            kept.append(row)
    return kept


def _eq(got: JsonValue, value: JsonValue) -> bool:
    return value is None if got is _MISSING else got == value


def _ne(got: JsonValue, value: JsonValue) -> bool:
    return value is not None if got is _MISSING else got != value


def _present(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda got, value: got is not _MISSING and fn(got, value)


_TESTS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": _eq,
    "ne": _ne,
    "prefix": _present(lambda g, v: g.startswith(v)),
    "contains": _present(lambda g, v: v in g),
    "gt": _present(lambda g, v: g > v),
    "gte": _present(lambda g, v: g >= v),
    "lt": _present(lambda g, v: g < v),
    "lte": _present(lambda g, v: g <= v),
}


def _sort_key(value: JsonValue) -> Any:
    """Strings by UTF-16 code unit (the contract's order, as JavaScript compares them)."""
    return value.encode("utf-16-be") if isinstance(value, str) else value


def _sorted(rows: list[Any], field: str, desc: bool) -> list[Any] | Failure:
    """Stable; rows without the value (absent or null) last whatever the order."""
    have, missing = [], []
    kinds: dict[str, int] = {}
    for n, row in enumerate(rows):
        got = row.get(field)
        if got is None:
            missing.append(row)
            continue
        kind = _kind(got)
        if kind in ("array", "object"):
            return _mismatch(field, "sort_by", got, "a number, string or boolean", n)
        kinds.setdefault(kind, n)
        if len(kinds) > 1:
            return refusal("type_mismatch", f"field '{field}' mixes {' and '.join(kinds)} values "
                                            f"(rows {', '.join(map(str, kinds.values()))}): sort_by needs one type")
        have.append(row)
    have.sort(key=lambda r: _sort_key(r[field]), reverse=desc)
    return have + missing
