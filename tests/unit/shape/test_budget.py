"""Tokenizers (§12.1) against a character-by-character reference, and the budget fit (§12.2) on
the rows of the real fixtures: a met budget is really met by the payload sent, the reported count
is the count of that payload, and pages from successive offsets concatenate to the rows."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import to_json

from parism.wire.envelope import Envelope, Failure, OutputField
from parism.wire.options import Budget
from parism.output.shape.budget import Fitted, Page, fit, precheck
from parism.output.shape.tokens import approx, byte, count
from tests.unit.shape.test_project import ARRAYS

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def ref_approx(text: str) -> int:
    units = text.encode("utf-16-le")
    chars = [int.from_bytes(units[i:i + 2], "little") for i in range(0, len(units), 2)]
    total, run = 0, 0
    for c in chars + [0x20]:
        if chr(c).isascii() and (chr(c).isalnum() or chr(c) == "_"):
            run += 1
            continue
        total += -(-run // 4)
        run = 0
        if c not in (0x20, 0x09, 0x0A, 0x0D):
            total += 1
    return total  # the sentinel space only ends the last run


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
def test_approx_equals_the_reference(text: str) -> None:
    assert approx(text) == ref_approx(text)


def test_approx_and_byte_examples() -> None:
    assert approx('{"name": "abcdefghi"}') == 7 + 1 + 3  # { " " : " " } marks, "name", 9 letters
    assert approx("abcd abcde\t\n") == 1 + 2
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


@pytest.mark.parametrize("n, refused", [(1199, True), (1200, False)])
def test_precheck_minimum(n: int, refused: bool) -> None:
    bad = precheck(Budget(max_tokens=n))
    assert (bad is not None and bad.reason == "budget_too_small") is refused
