"""Token budget (contract §12.2): the largest page of rows whose *whole answer* fits.

Why the whole answer: upstream measured only the body and sent 1481 tokens for a 1400 budget.
Here the caller's ``render(page)`` builds the complete model that will be sent (envelope, review,
omission, continuation, this report), and what is counted is exactly the compact JSON of its
``to_wire()`` — the bytes of ``structuredContent`` (the MCP text block is never larger, see
:mod:`parism.output.shape.text`).  Rows are kept or left out whole, never narrowed: ``required_fields``
and a row's identity are therefore never dropped; when not one row fits, or ``overflow: "error"``
forbids a cut, the answer is a refusal instead of a partial result.

``run`` calls :func:`fit` with offset 0 and ``fetch_result`` with the offset of its cursor (the
same function), so the pages concatenate to exactly the unbudgeted rows.  The rows are the
default answer's (a ``{schema, same, rows}`` table's cell lists, :mod:`parism.output.shape.lean`) or a
projection's objects.  There is no fixed minimum: the budget is refused only when the answer
with one row — this call's own envelope — does not fit, and the refusal says what it needs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic_core import to_json

from parism.wire.envelope import BudgetReport, Failure, WireModel
from parism.wire.options import Budget
from parism.output.shape.project import refusal
from parism.output.shape.tokens import SCOPE, TOKENIZERS

M = TypeVar("M", bound=WireModel)


@dataclass(frozen=True)
class Page:
    rows: list[Any]  # the projected rows [offset, end)
    offset: int
    end: int
    total: int

    @property
    def rows_left(self) -> int:
        return self.total - self.end


@dataclass(frozen=True)
class Fitted(Generic[M]):
    model: M  # render(page) with ``budget`` set to ``report``
    page: Page
    report: BudgetReport


def payload_text(model: WireModel) -> str:
    """What is counted: the compact JSON of the model's wire form (as the MCP server sends it)."""
    return to_json(model.to_wire()).decode()


def measure(model: M, budget: Budget) -> tuple[M, BudgetReport]:
    """``model`` with its ``budget`` report, whose ``measured_tokens`` counts that very payload
    (the number is part of what it counts: iterate to the fixed point, two or three passes)."""
    tok = TOKENIZERS[budget.tokenizer]
    report = BudgetReport(
        requested=budget.model_dump(mode="json", exclude_none=True), max_tokens=budget.max_tokens,
        measured_tokens=budget.max_tokens, budget_met=True, tokenizer_id=tok.id, tokenizer_version=tok.version,
        tokenizer_exact=tok.exact, tokenizer_scope=SCOPE)
    for _ in range(8):
        final = model.model_copy(update={"budget": report})
        n = tok.count(payload_text(final))
        if n == report.measured_tokens and report.budget_met == (n <= budget.max_tokens):
            return final, report
        report = report.model_copy(update={"measured_tokens": n, "budget_met": n <= budget.max_tokens})
    return model.model_copy(update={"budget": report}), report  # digits oscillating: the last count


def missing_required(rows: Sequence[Any], offset: int, budget: Budget, schema: Sequence[str] | None = None,
                     same: Mapping[str, Any] | None = None) -> Failure | None:
    """A row that lacks a required field: an object without the key, or a table row (``schema``
    given) whose cell is null where ``same`` does not hold the field."""
    required = [n for n in budget.required_fields or () if schema is None or n not in (same or {})]
    at = {k: i for i, k in enumerate(schema)} if schema is not None else None
    for n in range(offset, len(rows)):
        row = rows[n]
        for name in required:
            if at is not None and isinstance(row, list):
                i = at.get(name)
                if i is None or i >= len(row) or row[i] is None:
                    have = ", ".join(k for k, v in zip(schema or (), row) if v is not None) or "no fields"
                    return refusal("required_field_missing", f"required field '{name}' is missing from row {n} "
                                                             f"(it has: {have}); nothing partial is sent")
            elif isinstance(row, dict) and name not in row:
                have = ", ".join(row) or "no fields"
                return refusal("required_field_missing", f"required field '{name}' is missing from row {n} "
                                                         f"(it has: {have}); nothing partial is sent")
    return None


def fit(rows: Sequence[Any], offset: int, budget: Budget, render: Callable[[Page], M],
        schema: Sequence[str] | None = None, same: Mapping[str, Any] | None = None) -> Fitted[M] | Failure:
    """The largest page ``rows[offset:end]`` whose rendered answer counts ≤ ``max_tokens``
    (``schema``, ``same``: the table the rows are cells of, for ``required_fields``)."""
    bad = missing_required(rows, offset, budget, schema, same)
    if bad is not None:
        return bad
    total = len(rows)

    def attempt(end: int) -> tuple[M, BudgetReport]:
        return measure(render(Page(list(rows[offset:end]), offset, end, total)), budget)

    best = attempt(total)
    if best[1].budget_met:
        return Fitted(best[0], Page(list(rows[offset:]), offset, total, total), best[1])
    if budget.overflow == "error":
        return refusal("budget_exceeded", f"the {total - offset} row(s) need {best[1].measured_tokens} tokens, "
                                          f"more than budget.max_tokens {budget.max_tokens}, and overflow "
                                          "'error' was requested: nothing partial is sent")
    low, high, found = offset + 1, total - 1, None  # the largest end that fits, by bisection
    while low <= high:
        mid = (low + high) // 2
        got = attempt(mid)
        if got[1].budget_met:
            found, low = (mid, got), mid + 1
        else:
            high = mid - 1
    if found is None:
        one = attempt(min(offset + 1, total))[1].measured_tokens
        return refusal("budget_too_small", f"not one row fits: this answer with one row needs {one} tokens, "
                                           f"budget.max_tokens is {budget.max_tokens}; give at least {one}")
    end, (model, report) = found
    return Fitted(model, Page(list(rows[offset:end]), offset, end, total), report)
