"""The default answer's tables: ``{schema, same, rows}``, read right by a reader who knows no rule.

Issue #26 (docs/envelope.md, "The default answer"): the earlier lean form left a column's most
common value in a ``default`` map and wrote ``null`` for it in the rows, trimmed trailing cells
and ordered columns by their gaps, so one row held three meanings of ``null`` and a model that
counted "rows whose mode starts with d" counted 0.  This form has one reading:

1. **Every row carries exactly one cell per ``schema`` name**, in the same order in every row.
2. **The column order is declared per parser** (its ``row_fields``, then any other field in
   alphabetical order): it never depends on the data, so two calls of a command name their
   columns in the same order.
3. **``null`` means only null or absent.**  A field whose value is the same in *every* row
   (JSON-equal: ``1``, ``1.0`` and ``true`` differ) leaves the schema for the table-level map
   ``same``; a field no row has (or only as ``null``) is not in the table.  Nothing else is
   implied: ``row i = {**same, **zip(schema, rows[i])}``.

Fields derived from another printed field of the same row (``Parser.lean``: ``ls``'s ``type``
from ``mode``) are left to an explicit ``format: "json"`` or ``select`` when every row shows the
field they are derived from (else the column stays whole: a blank cell never means "derived");
an array of one row
stays a list of objects (a table would cost more than the object).  :func:`expand` is the
naive reading; ``tests/unit/shape/test_naive_reader.py`` checks it against ``format: "json"``
on every parser's fixtures and the shared corpus.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from typing import Any, TYPE_CHECKING

from pydantic_core import to_json

from parism.output.shape.compact import MAX_DEPTH, columns_deeper_than, deeper_than, fold
from parism.parsers import registry
from parism.parsers.contract import Lean

if TYPE_CHECKING:
    from pydantic import JsonValue

def _spec(parser_id: str | None) -> Lean | None:
    """The parser's ``Parser.lean`` (None: no field of its rows is derived from another)."""
    parser = registry.by_id(parser_id) if parser_id else None
    return parser.lean if parser is not None else None


def derived_of(parser_id: str | None) -> dict[str, str]:
    """{derived field: the printed field of the same row it is computed from} (``Parser.lean``)."""
    spec = _spec(parser_id)
    return dict(spec.derived) if spec is not None else {}


def __getattr__(name: str) -> Any:
    """``DERIVED`` (parser id → :func:`derived_of`) for every parser that declares one, derived
    from the registry (it imports every parser: tests and docs, never a call)."""
    if name == "DERIVED":
        return {p.id: dict(p.lean.derived) for _c, top in registry.command_parsers()
                for p in registry.walk(top) if p.lean is not None and p.lean.derived}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: The name of the table-level map of values every row shares.
SAME = "same"

_NESTED = frozenset({dict, list})
NEGATIVE_ZERO = (-0.0).hex()


def lean(parsed: JsonValue, parser_id: str, row_fields: Sequence[str] = (), rows_key: str | None = None) -> Any:
    """Drop derived fields, then fold every array of two or more objects into ``{schema, same,
    rows}``.  ``row_fields``: the parser's declared order of the ``rows_key`` array's fields.
    Nesting ``compact`` refuses to fold leaves the rows objects (without their derived fields)."""
    if not isinstance(parsed, dict):
        return parsed
    derived = derived_of(parser_id)
    out: dict[str, Any] = {}
    for key, value in parsed.items():
        if isinstance(value, list) and len(value) > 1 and (folded := fold(value)) is not value:
            table = _table(folded["schema"], folded["rows"], derived, row_fields if key == rows_key else ())
            if table is None:
                return _refused(parsed, derived)
            out[key] = table
        elif deeper_than(value, MAX_DEPTH - 1):  # compact's check; a one-row array's too
            return _refused(parsed, derived)
        else:
            out[key] = _slim_all(value, derived)
    return out


def order(names: Sequence[str], declared: Sequence[str]) -> list[str]:
    """The declared order of ``names``: the declared ones first, then the rest alphabetically."""
    have = set(names)
    first = [n for n in declared if n in have]
    return first + sorted(have.difference(first))


def _table(schema: list[str], rows: list[list[Any]], derived: dict[str, str],
           declared: Sequence[str]) -> dict[str, Any] | None:
    n = len(rows)
    columns = dict(zip(schema, zip(*rows)))  # name → its cells (None: absent or null)
    for name, source in derived.items():  # left out only where every row shows its source: a
        if name in columns and source in columns and None not in columns[source]:  # blank is no value
            del columns[name]
    names = order(list(columns), declared)
    cells = [columns[k] for k in names]
    kinds = [set(map(type, c)) for c in cells]
    if columns_deeper_than(cells, kinds, MAX_DEPTH - 3):  # the array and its rows: two levels
        return None
    same: dict[str, Any] = {}
    keep: list[bool] = []
    for name, column, kind in zip(names, cells, kinds):
        if kind == {type(None)}:  # no row has a value: not in the table
            keep.append(False)
        elif _shared(column, kind):
            same[name] = column[0]
            keep.append(False)
        else:
            keep.append(True)
    kept = list(compress(cells, keep))
    out: dict[str, Any] = {"schema": list(compress(names, keep))}
    if same:
        out[SAME] = same
    out["rows"] = [list(r) for r in zip(*kept)] if kept else [[] for _ in range(n)]
    return out


def _shared(column: tuple[Any, ...], kinds: set[type]) -> bool:
    """Is every cell the same JSON value (not null)?  Python's ``==`` says ``1 == True == 1.0``
    and ``-0.0 == 0.0``: one exact type is required, a float zero's sign too, and nested values
    compare by their JSON."""
    if len(kinds) != 1:
        return False
    kind = next(iter(kinds))
    first = column[0]
    if first is None or column.count(first) != len(column):
        return False
    if kind is float:
        return first == first and len(set(map(float.hex, column))) == 1  # NaN equals nothing
    if kind in _NESTED:
        text = to_json(first)
        return all(to_json(v) == text for v in column)
    return True


def _refused(parsed: dict[str, Any], derived: dict[str, str]) -> dict[str, Any]:
    """Nesting ``compact`` refuses to fold: the rows stay objects, without their derived fields."""
    return {k: _slim_all(v, derived) for k, v in parsed.items()}


def is_table(value: JsonValue) -> bool:
    return isinstance(value, dict) and isinstance(value.get("schema"), list) and isinstance(value.get("rows"), list)


def expand(value: JsonValue) -> Any:
    """The naive reading of a lean (or compact) value: each row zipped with ``schema`` over
    ``same``; a ``null`` cell is an absent field."""
    if not isinstance(value, dict):
        return value
    out = {}
    for key, table in value.items():
        if is_table(table):
            same, schema = table.get(SAME, table.get("default", {})), table["schema"]
            out[key] = [{**same, **{k: v for k, v in zip(schema, row) if v is not None}} for row in table["rows"]]
        else:
            out[key] = table
    return out


def _slim_all(value: JsonValue, derived: dict[str, str]) -> Any:
    return [_slim(r, derived) for r in value] if isinstance(value, list) and derived else value


def _slim(row: JsonValue, derived: dict[str, str]) -> Any:
    if not isinstance(row, dict):
        return row
    return {k: v for k, v in row.items() if k not in derived or row.get(derived[k]) is None}
