"""The lean default answer: with no format chosen, the model reads no more tokens than the raw text.

Measured (docs/envelope.md, ``scripts/bench_tokens.py``): the full parsed rows cost 1.3–2.5× the
raw text in o200k tokens, and raw repeated beside them doubles that.  Three lossless steps bring
the answer of the parsers that declare ``Parser.lean`` (:data:`DERIVED`) under the raw text:

1. **Raw is not repeated**: these parsers restate every printed value of their rows (a test
   checks every word of the real fixtures' data lines against the lean rows), so the parsed
   value replaces raw — unless the parse reported doubts (``warnings``, ``unresolved``) or the
   arguments ask for a form the rows only partly restate (:data:`PARTIAL_WITH`).
2. **Derived fields are left to an explicit view**: a field computed from another printed field
   of the same row (``ls``: ``type``, ``permissions``, ``mode_octal``… from ``mode``,
   ``modified_at`` from ``modified_raw``) is dropped from that row; ``format: "json"`` (the
   seed's shape) or ``select`` returns it.
3. **Folded tables with defaults**: every top-level array of objects becomes ``{schema,
   default, rows}``: a row is ``default`` overlaid with its non-null cells.  A column whose value
   is the same in every row is only in ``default`` (owner and group of a listing); a column whose
   most common value fills a quarter of the rows (at least :data:`MIN_DEFAULT`) keeps its other
   values in the rows and that one in ``default`` (``tmpfs`` in ``df``, ``?`` as a process's
   terminal); columns with more null cells come later and a row ends at its last value.  A
   column some rows lack never has a default (a null there is an absent field).
   :func:`expand` restores the rows.

Parsers not listed keep the adaptive behaviour (contract §6.4).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from types import NoneType
from typing import Any

from parism.parsers import registry
from parism.parsers.contract import Lean
from parism.output.shape.compact import MAX_DEPTH, columns_deeper_than, deeper_than, fold


def _spec(parser_id: str | None) -> Lean | None:
    """The parser's ``Parser.lean`` (None: the lean answer does not apply)."""
    parser = registry.by_id(parser_id) if parser_id else None
    return parser.lean if parser is not None else None


def __getattr__(name: str) -> Any:
    """``DERIVED`` (parser id → {derived field: the printed field it is computed from}) and
    ``PARTIAL_WITH`` (parser id → arguments under which raw is kept), derived from the registry."""
    specs = {p.id: p.lean for _c, top in registry.command_parsers() for p in registry.walk(top) if p.lean}
    if name == "DERIVED":
        return {pid: dict(spec.derived) for pid, spec in specs.items()}
    if name == "PARTIAL_WITH":
        return {pid: spec.partial_with for pid, spec in specs.items() if spec.partial_with}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Fewest rows a column's most common value must fill to become its default (and a quarter of them).
MIN_DEFAULT = 3

#: Keys of a parsed value that say the parse is not a full restatement of the text.
DOUBTS = ("warnings", "unresolved")


def applies(parser_id: str | None) -> bool:
    return _spec(parser_id) is not None


def replaces_raw(parsed: Any, parser_id: str, args: Sequence[str] = ()) -> bool:
    """The lean value carries everything raw does (no parse doubts, no partial form)."""
    spec = _spec(parser_id)
    partial = spec.partial_with if spec is not None else ()
    if any(a == p or a.startswith(p + "=") for a in args for p in partial):
        return False
    return isinstance(parsed, dict) and not any(parsed.get(k) for k in DOUBTS)


def lean(parsed: Any, parser_id: str) -> Any:
    """Drop derived fields, then fold every array of objects into ``{schema, default, rows}``.  An
    array whose rows carry an explicit ``null`` stays as it is (a folded null means "absent").

    Rows are folded and transposed once; the columns' cell types, read once, serve the depth
    check (``compact``'s), the null check and the defaults, and a derived column beside its
    source in every row is dropped without reading its cells again (no dict per row is built)."""
    if not isinstance(parsed, dict):
        return parsed
    spec = _spec(parser_id)
    if spec is None:
        raise KeyError(parser_id)
    derived = dict(spec.derived)
    out: dict[str, Any] = {}
    for key, value in parsed.items():
        if isinstance(value, list) and len(value) > 1 and (folded := fold(value)) is not value:
            schema, columns = folded["schema"], list(zip(*folded["rows"]))
            kinds = [set(map(type, c)) for c in columns]
            if columns_deeper_than(columns, kinds, MAX_DEPTH - 3):  # the array and its rows: two levels
                return _refused(parsed, derived)
            # a None cell is a missing key or an explicit null: more of them than missing keys is a null
            nones = [c.count(None) if NoneType in k else 0 for c, k in zip(columns, kinds)]
            if sum(nones) > len(value) * len(schema) - sum(map(len, value)):
                out[key] = _slim_all(value, derived)
            else:
                out[key] = _defaults(schema, columns, kinds, nones, derived, len(value))
        elif deeper_than(value, MAX_DEPTH - 1):  # compact's check; a one-row array's too
            return _refused(parsed, derived)
        else:
            out[key] = _slim_all(value, derived)
    return out


def _refused(parsed: dict[str, Any], derived: dict[str, str]) -> dict[str, Any]:
    """Nesting ``compact`` refuses to fold: the rows stay objects, without their derived fields."""
    return {k: _slim_all(v, derived) for k, v in parsed.items()}


def expand(value: Any) -> Any:
    """The rows of a lean (or compact) value as objects again: ``expand(lean(v)) == slim(v)``."""
    if not isinstance(value, dict):
        return value
    out = {}
    for key, table in value.items():
        if isinstance(table, dict) and isinstance(table.get("schema"), list) and isinstance(table.get("rows"), list):
            default, schema = table.get("default", {}), table["schema"]
            out[key] = [{**default, **{k: v for k, v in zip(schema, row) if v is not None}} for row in table["rows"]]
        else:
            out[key] = table
    return out


def _slim_all(value: Any, derived: dict[str, str]) -> Any:
    return [_slim(r, derived) for r in value] if isinstance(value, list) and derived else value


def _slim(row: Any, derived: dict[str, str]) -> Any:
    if not isinstance(row, dict):
        return row
    return {k: v for k, v in row.items() if derived.get(k) not in row}


def _defaults(schema: list[str], columns: list[tuple[Any, ...]], kinds: list[set[type]], nones: list[int],
              derived: dict[str, str], n: int) -> dict[str, Any]:
    """Blank the derived cells of rows that have their source, give columns their default
    (constant columns leave the schema), blank the cells equal to it, order the columns by their
    blank cells (fewest first) and end each row at its last value, so a field few rows have (a
    symlink's ``target``) costs nothing in the others.  ``kinds``: the cell types of each of the
    ``n`` rows' columns, ``nones``: its None cells (every one an absent field)."""
    at = {k: i for i, k in enumerate(schema)}
    cols: list[Sequence[Any] | None] = list(columns)  # None: every cell blank
    gaps = list(nones)  # the printed columns' absent fields
    for i, k in enumerate(schema):
        source = at.get(derived.get(k, ""))
        if source is None:
            continue
        if not gaps[source]:
            cols[i], nones[i] = None, n
        else:
            cols[i] = [None if s is not None else v for v, s in zip(columns[i], columns[source])]
            kinds[i] = set(map(type, cols[i]))
            nones[i] = cols[i].count(None)  # type: ignore[union-attr]
    default: dict[str, Any] = {}
    for i, column in enumerate(cols):
        found = _usual(column, kinds[i]) if column is not None and not nones[i] else None
        if found is not None:
            kind, value, mixed, hits = found
            default[schema[i]] = value
            if hits == n and value == value:  # every cell blank (NaN equals no cell)
                cols[i], nones[i] = None, n
            else:
                cols[i] = _blanked(column, kind, value, mixed)  # type: ignore[arg-type]
                nones[i] = cols[i].count(None)  # type: ignore[union-attr]
    keep = [i for i in sorted(range(len(schema)), key=nones.__getitem__) if nones[i] < n]
    out: dict[str, Any] = {"schema": [schema[i] for i in keep]}
    if default:
        out["default"] = default
    rows = []
    for row in map(list, zip(*(cols[i] for i in keep))) if keep else ([] for _ in range(n)):
        while row and row[-1] is None:
            row.pop()
        rows.append(row)
    out["rows"] = rows
    return out


def _usual(column: Sequence[Any], kinds: set[type]) -> tuple[type, Any, bool, int] | None:
    """(type, value, mixed, cells equal to it) of the default of a column without gaps (``kinds``:
    its cell types): its most common scalar when it fills every row, or a quarter of them and at
    least :data:`MIN_DEFAULT`."""
    n = len(column)
    try:
        value, hits = Counter(column).most_common(1)[0]
    except TypeError:  # a nested value: no default
        return None
    kind = type(value)
    mixed = _mixed(column, kinds, kind, value)
    if mixed:  # 1 == True == 1.0 and -0.0 == 0.0: count JSON-equal cells only
        hits = sum(1 for v in column if _same(v, kind, value))
    if hits == n or (hits >= MIN_DEFAULT and 4 * hits >= n):
        return kind, value, mixed, hits
    return None


def _mixed(column: Sequence[Any], kinds: set[type], kind: type, value: Any) -> bool:
    """Could cells equal to ``value`` in Python differ from it in JSON (another type, a zero of
    the other sign)?"""
    if kinds != {kind}:
        return True
    return kind is float and value == 0 and NEGATIVE_ZERO in map(float.hex, column)


NEGATIVE_ZERO = (-0.0).hex()


def _same(v: Any, kind: type, value: Any) -> bool:
    return type(v) is kind and v == value and (kind is not float or math.copysign(1, v) == math.copysign(1, value))


def _blanked(column: list[Any], kind: type, value: Any, mixed: bool) -> list[Any]:
    if mixed:
        return [None if _same(v, kind, value) else v for v in column]
    return [None if v == value else v for v in column]
