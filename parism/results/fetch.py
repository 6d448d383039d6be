"""``fetch_result(result_id, cursor)``: the next page of a retained result, never re-running.

The page is made the way ``run`` made the first one, from the stored copy: the full parsed
value → the stored query's projection (where → sort_by → limit → select) → the run's format →
the same row array → ``shape.budget.fit`` from the cursor's offset (or, without a budget, the
next ``max_items`` rows). Because every step is the run's own, the pages concatenate to
exactly the rows an unbudgeted run shows. The answer is a run envelope: the stored run's
``cmd``/``args``/``cwd``/``exitCode``, ``duration_ms: 0``, the page's rows in
``stdout.parsed``, ``budget``, the budget ``omission`` while rows are left, and a top-level
``continuation`` whose ``cursor`` is absent on the last page.

Refusals are ``failure {kind: "config", reason}`` envelopes: the store's misses come first
(``unknown_id`` …), then the cursor (``cursor_invalid``, ``cursor_mismatch``).
"""

from __future__ import annotations

from typing import Any

from parism.wire.envelope import Continuation, Envelope, Failure, Omission, OutputField
from parism.wire.options import RunOptions
from parism.output.envelopes import no_process
from parism.output.shape import lean, shape
from parism.results.answer import row_key, rows_at, table_names, with_rows
from parism.output.shape.budget import Page, fit
from parism.output.shape.project import project
from parism.results.cursor import CursorError, sign, verify
from parism.results.pack import unpack_json
from parism.results.store import StoredResult


def refusal(reason: str, message: str, item: StoredResult | None = None) -> Envelope:
    failure = Failure(kind="config", reason=reason, message=message)
    if item is None:
        return no_process("", [], "", failure)
    return no_process(item.cmd, list(item.args), item.cwd, failure)


def rows_of(item: StoredResult) -> tuple[Any, str, list[Any]] | Envelope:
    """(the shaped value, its row key, its rows) exactly as the run had them before the budget."""
    parsed = unpack_json(item.parsed_json) if item.parsed_json is not None else None
    if parsed is None:
        return refusal("nothing_to_fetch", f"result {item.result_id} has no parsed value to page", item)
    opts = RunOptions.model_validate({"cmd": item.cmd, **item.query})
    value, key = parsed, item.rows_key
    fmt = item.extra.get("format")
    if opts.projection_requested():
        projected = project(value, opts, key, item.row_fields, 0)
        if isinstance(projected, Failure):  # the run itself was refused the same way
            return refusal(projected.reason, projected.message, item)
        value, key = projected.parsed, projected.key or key
    elif fmt is None and item.evidence_mode == "none" and item.parser_id is not None:
        # the run's default answer: the same {schema, same, rows} table (pipeline's ``tables``)
        value = lean.lean(value, item.parser_id, item.row_fields, key)
    shaped = shape(value, requested=fmt or "json", rows_key=key, max_items=0, thresholds=None)
    found = row_key(shaped.parsed, key)
    rows = rows_at(shaped.parsed, found) if found is not None else None
    if found is None or rows is None:
        return refusal("nothing_to_fetch", f"result {item.result_id} has no row array to page", item)
    return shaped.parsed, found, rows


def fetch(item: StoredResult, cursor: str, max_items: int) -> Envelope:
    offset = verify(cursor, item.result_id, item.qhash)
    if isinstance(offset, CursorError):
        return refusal(offset.reason, offset.message, item)
    got = rows_of(item)
    if isinstance(got, Envelope):
        return got
    value, key, rows = got
    if offset > len(rows):
        return refusal("cursor_invalid", f"the cursor points past the {len(rows)} rows of {item.result_id}", item)
    opts = RunOptions.model_validate({"cmd": item.cmd, **item.query})

    def render(page: Page) -> Envelope:
        nxt = sign(item.result_id, item.qhash, page.end) if page.rows_left else None
        # rows_omitted counts what this page leaves for the next ones, as continuation.rows_left
        # does (the earlier pages had the rest): one count, never two that disagree
        omission = [Omission(
            stage="budget" if opts.budget is not None else "projection",
            reason=(f"rows {page.offset + 1}-{page.end} of {page.total} are on this page, {page.rows_left} are "
                    "left after it"
                    + (f" (budget {opts.budget.max_tokens} tokens)" if opts.budget is not None else
                       f" (guard.max_items {max_items})")),
            rows_total=page.total, rows_returned=len(page.rows), rows_omitted=page.rows_left)] if page.rows_left else None
        return Envelope(
            ok=item.ok, exitCode=item.exit_code, cmd=item.cmd, args=list(item.args), cwd=item.cwd, duration_ms=0,
            stdout=OutputField(raw="", parsed=with_rows(value, key, page.rows)), stderr=OutputField(raw=""),
            diff=None, review=None, omission=omission,  # the run's answer had the review; the pages cost less
            continuation=Continuation(result_id=item.result_id, cursor=nxt, rows_left=page.rows_left, total=page.total))

    if opts.budget is not None:
        schema, same = table_names(value, key)
        fitted = fit(rows, offset, opts.budget, render, schema, same)
        if isinstance(fitted, Failure):
            return refusal(fitted.reason, fitted.message, item)
        return fitted.model
    end = len(rows) if not max_items else min(len(rows), offset + max_items)
    return render(Page(list(rows[offset:end]), offset, end, len(rows)))
