"""A ``run`` answer under a token budget: which rows, and the way to the rest.

Why a module of its own: :func:`parism.output.shape.budget.fit` is shared with ``fetch_result`` and knows
nothing of envelopes; this is ``run``'s ``render`` — the page's rows put back where the parser
had them (a plain array, the default answer's ``{schema, same, rows}`` table or a compact one), the budget ``omission`` and the
top-level ``continuation``: a signed cursor when the result is retained, otherwise
``retained: false`` with the ways that do exist (re-run with ``retain``, or the raw output by
``run_paged`` pages).  Raw is left out of a budgeted answer with a parsed value: the rows replace
it, and the continuation says where the rest is.
"""

from __future__ import annotations

from typing import Any

from parism.wire.envelope import Continuation, Envelope, Failure, Omission, OutputField
from parism.wire.options import Budget
from parism.output.shape.budget import Page, fit, measure
from parism.results.cursor import query_hash, sign


def rows_at(parsed: Any, key: str | None) -> list[Any] | None:
    """The row array at ``key`` ("" = ``parsed`` itself), also inside a compact table."""
    value = parsed if key == "" else parsed.get(key) if isinstance(parsed, dict) and key else None
    if isinstance(value, dict) and isinstance(value.get("rows"), list) and "schema" in value:
        return value["rows"]
    return value if isinstance(value, list) else None


def table_names(parsed: Any, key: str | None) -> tuple[list[str] | None, dict[str, Any] | None]:
    """(schema, same) of the table at ``key``; (None, None) for an array of objects."""
    value = parsed.get(key) if isinstance(parsed, dict) and key else None
    if isinstance(value, dict) and isinstance(value.get("schema"), list):
        return value["schema"], value.get("same", {})
    return None, None


def with_rows(parsed: Any, key: str, rows: list[Any]) -> Any:
    if key == "":
        return rows
    value = parsed[key]
    out = dict(parsed)
    out[key] = {**value, "rows": rows} if isinstance(value, dict) else rows
    if isinstance(out.get("_summary"), dict) and "shown" in out["_summary"]:
        out["_summary"] = {**out["_summary"], "shown": len(rows)}
    return out


def row_key(parsed: Any, preferred: str | None) -> str | None:
    """The array a budget pages: the projected or declared one, else the first (contract §12.2 step 1)."""
    if isinstance(parsed, list):
        return ""
    if rows_at(parsed, preferred) is not None:
        return preferred
    if isinstance(parsed, dict):
        return next((k for k in parsed if rows_at(parsed, k) is not None), None)
    return None


def budgeted(env: Envelope, key: str | None, budget: Budget, *, query: dict[str, Any], result_id: str | None,
             retained: bool, raw_lines: int, page_size: int) -> Envelope:
    """The envelope cut to ``budget`` (or refused when it cannot be met honestly)."""
    parsed = env.stdout.parsed
    rows = rows_at(parsed, key) if key is not None else None
    if rows is None:  # nothing to page: measured as it is
        return measure(env, budget)[0]
    assert key is not None
    qhash = query_hash(query)

    def render(page: Page) -> Envelope:
        update: dict[str, Any] = {"stdout": OutputField(raw="", parsed=with_rows(parsed, key, page.rows))}
        if page.rows_left:
            cursor = sign(result_id, qhash, page.end) if retained and result_id else None
            update["omission"] = [*(env.omission or []), Omission(
                stage="budget", reason=f"{page.rows_left} of {page.total} row(s) were left out to fit "
                                       f"{budget.max_tokens} tokens",
                rows_total=page.total, rows_returned=len(page.rows), rows_omitted=page.rows_left)]  # cursor: continuation
            update["continuation"] = (
                Continuation(result_id=result_id, cursor=cursor, rows_left=page.rows_left, total=page.total)
                if cursor else unretained(page.total, page.end, raw_lines, page_size, "the budget"))
        return env.model_copy(update=update)

    schema, same = table_names(parsed, key)
    fitted = fit(rows, 0, budget, render, schema, same)
    if isinstance(fitted, Failure):
        return refused(env, fitted, budget)
    return fitted.model


def refused(env: Envelope, failure: Failure, budget: Budget) -> Envelope:
    """A budget that cannot be met honestly: no partial rows, the reason, the measured report."""
    bare = env.model_copy(update={"ok": False, "failure": failure, "stdout": OutputField(raw="", parsed=None)})
    return measure(bare, budget)[0]


def unretained(total: int, shown: int, raw_lines: int, page_size: int, cut_by: str) -> Continuation:
    """The way to rows that ``cut_by`` left out of a result nobody kept: there is no cursor, so
    name the calls that do reach them."""
    pages = max(1, -(-raw_lines // page_size))
    return Continuation(retained=False, rows_left=total - shown, total=total, hint=(
        f"{cut_by} left out {total - shown} of {total} rows: re-run with where/limit, or with budget and "
        f"retain: true to page them with fetch_result, or read the raw output with run_paged "
        f"(page_size {page_size}: pages 0-{pages - 1}, {raw_lines} lines)"))
