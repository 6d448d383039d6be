"""Tokenizers (§12.1) against a character-by-character reference, and the budget fit (§12.2) on
the rows of the real fixtures: a met budget is really met by the payload sent, the reported count
is the count of that payload, and pages from successive offsets concatenate to the rows."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import to_json

from parism.wire.envelope import Envelope, Failure, OutputField
from parism.wire.options import Budget
from parism.output.shape.budget import Fitted, Page, fit
from parism.output.shape.tokens import approx, byte, count
from tests.unit.shape.test_project import ARRAYS

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def ref_approx(text: str) -> int:
    """Character by character: the class of each character, a run ends where the class changes."""
    def kind(ch: str) -> str:
        if ch.isascii() and ch.isalpha():
            return "letter"
        if ch in "0123456789":
            return "digit"
        if "!" <= ch <= "~":
            return "mark"
        if ord(ch) < 0x80:
            return "blank"
        return "other"

    total, run, last = 0, 0, "blank"
    per = {"letter": 5, "digit": 3, "mark": 3}
    for ch in text + " ":
        k = kind(ch)
        if k != last or k == "other":
            if last in per:
                total += -(-run // per[last])
            run = 0
        last = k
        if k == "other":
            total += 2 if ord(ch) > 0xFFFF else 1
        else:
            run += 1
    return total  # the sentinel space only ends the last run


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
def test_approx_equals_the_reference(text: str) -> None:
    assert approx(text) == ref_approx(text)


def test_approx_and_byte_examples() -> None:
    assert approx('{"name": "abcdefghi"}') == 1 + 1 + 1 + 1 + 2 + 1  # {" name ": " abcdefghi "}
    assert approx("abcd abcde\t\n") == 1 + 1
    assert approx("1234567 ab_cd") == 3 + 1 + 1 + 1  # digits by three, "_" is a mark
    assert approx("😀") == 2 and byte("😀") == 4 and byte("é") == 2
    assert count("a b", "byte") == 3


def envelope(rows: list[Any]) -> Envelope:
    return Envelope(ok=True, exitCode=0, cmd="ls", args=["-la"], cwd="/x", duration_ms=1,
                    stdout=OutputField(raw="", parsed={"rows": rows}), stderr=OutputField(raw=""))


def render_for(rows: list[Any]) -> Any:
    def render(page: Page) -> Envelope:
        return envelope(page.rows)
    return render


@SETTINGS
@given(st.sampled_from(ARRAYS), st.integers(1200, 6000), st.sampled_from(["parism/approx", "byte"]))
def test_met_budget_is_met_by_the_payload_and_pages_concatenate(case: Any, max_tokens: int, tokenizer: str) -> None:
    _, rows = case
    rows = (rows * (1 + 300 // len(rows)))[:300]  # long enough to need pages
    budget = Budget(max_tokens=max_tokens, tokenizer=tokenizer)  # type: ignore[arg-type]
    offset, pages = 0, []
    while offset < len(rows):
        got = fit(rows, offset, budget, render_for(rows))
        if isinstance(got, Failure):  # only when not one row fits
            assert got.reason == "budget_too_small"
            one = envelope(rows[offset:offset + 1])
            assert count(to_json(one.to_wire()).decode(), tokenizer) > max_tokens - 300
            return
        assert isinstance(got, Fitted)
        text = to_json(got.model.to_wire()).decode()
        assert got.report.measured_tokens == count(text, tokenizer)
        assert got.report.budget_met and got.report.measured_tokens <= max_tokens
        assert json.loads(text)["budget"]["measured_tokens"] == got.report.measured_tokens
        assert got.page.offset == offset and got.page.end > offset
        pages.append(got.page.rows)
        offset = got.page.end
    assert [r for p in pages for r in p] == rows


def test_overflow_error_and_required_fields_refuse_instead_of_partial() -> None:
    rows = [{"name": f"n{i}", "size": i} for i in range(500)]
    got = fit(rows, 0, Budget(max_tokens=1500, overflow="error"), render_for(rows))
    assert isinstance(got, Failure) and got.reason == "budget_exceeded" and "nothing partial" in got.message
    got = fit(rows + [{"name": "x"}], 0, Budget(max_tokens=99999, required_fields=["size"]), render_for(rows))
    assert isinstance(got, Failure) and got.reason == "required_field_missing"
    assert "'size'" in got.message and "row 500" in got.message
    huge = [{"name": "x" * 20000}]
    got = fit(huge, 0, Budget(max_tokens=1200), render_for(huge))
    assert isinstance(got, Failure) and got.reason == "budget_too_small"


def test_the_minimum_is_this_answer_with_one_row() -> None:
    """No fixed minimum (it was 1,200 tokens): a budget is met by any answer that fits, and
    refused only below the answer with one row, whose need the refusal states."""
    rows = [{"name": f"n{i}", "size": i} for i in range(3)]
    whole = count(to_json(envelope(rows).to_wire()).decode(), "parism/approx")
    got = fit(rows, 0, Budget(max_tokens=whole + 120), render_for(rows))  # + the report's own fields
    assert isinstance(got, Fitted) and got.page.end == 3 and got.report.measured_tokens < 400
    bare = count(to_json(envelope(rows[:1]).to_wire()).decode(), "parism/approx")  # one row, no report
    got = fit(rows, 0, Budget(max_tokens=bare), render_for(rows))
    assert isinstance(got, Failure) and got.reason == "budget_too_small"
    stated = int(got.message.rsplit("give at least ", 1)[1])
    assert stated > bare  # the report is counted too
    fitted = fit(rows, 0, Budget(max_tokens=stated), render_for(rows))  # the stated minimum is enough
    assert isinstance(fitted, Fitted) and fitted.page.end >= 1 and fitted.report.measured_tokens <= stated
    assert isinstance(fit(rows, 0, Budget(max_tokens=stated - 1), render_for(rows)), Failure)
