"""fetch_result through a real engine: pages concatenate to exactly the unbudgeted rows, for any
budget and projection; tampered, foreign and expired cursors are refused with their reasons."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parism.output.shape import lean
from parism.results import cursor as cursor_mod
from tests.unit.shape.test_naive_reader import check_row, naive_rows

QUERIES: list[dict[str, Any]] = [
    {},
    {"select": ["name", "size_bytes"]},
    {"where": [{"field": "type", "op": "eq", "value": "file"}], "sort_by": {"field": "size_bytes", "order": "desc"}},
    {"sort_by": {"field": "name", "order": "asc"}, "limit": 150},
]


@pytest.fixture
def listing(tmp_path: Path) -> Path:
    d = tmp_path / "many"
    d.mkdir()
    for n in range(260):
        (d / f"file-{n:03d} ä.txt").write_text("x" * (n * 7 % 500))
    for n in range(20):
        (d / f"dir-{n:02d}").mkdir()
    return d


def read(parsed: Any, key: str = "entries") -> list[Any]:
    """A page's rows as objects: the default answer's table read naively, or a projection's."""
    value = parsed[key]
    return naive_rows(value) if isinstance(value, dict) else list(value)


def same_rows(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    """The naive reading of the pages is the json rows, field by field (derived fields aside)."""
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        check_row(a, b, lean.DERIVED["ls"], f"row {i}")


def pages(engine: Any, first: Any) -> tuple[list[Any], int]:
    """Every row of the first answer and the pages after it; the number of pages."""
    key = "entries"
    rows = read(first.stdout.parsed, key)
    cont, n = first.continuation, 1
    while cont is not None and cont.cursor:
        page = engine.fetch_result(cont.result_id, cont.cursor)
        assert page.ok, page.failure
        assert page.budget is None or page.budget.budget_met
        assert page.duration_ms == 0 and page.cmd == first.cmd and page.args == first.args
        rows += read(page.stdout.parsed, key)
        left = page.continuation.rows_left if page.continuation else 0
        assert all(o.rows_omitted == left for o in page.omission or ())  # one count of what is left
        cont, n = page.continuation, n + 1
        assert n < 500
    assert cont is None or (cont.cursor is None and cont.rows_left == 0)
    return rows, n


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(max_tokens=st.integers(3000, 12000), query=st.sampled_from(QUERIES), tokenizer=st.sampled_from(["parism/approx", "byte"]))
def test_pages_concatenate_to_the_unbudgeted_rows(make_engine, listing: Path, max_tokens: int,
                                                  query: dict[str, Any], tokenizer: str) -> None:
    engine = make_engine(guard={"max_items": 0})
    full = engine.run("ls", ["-la", str(listing)], cwd=str(listing), format="json", **query)
    assert full.ok, full.failure
    want = full.stdout.parsed["entries"]
    first = engine.run("ls", ["-la", str(listing)], cwd=str(listing), retain=True,
                       budget={"max_tokens": max_tokens, "tokenizer": tokenizer}, **query)
    assert first.ok, first.failure
    got, n = pages(engine, first)
    if query:  # a projection pages its objects
        assert got == want
    else:
        same_rows(got, want)
    assert (n > 1) == (first.continuation is not None and first.continuation.cursor is not None)


def test_a_small_budget_pages_a_real_listing(make_engine, listing: Path) -> None:
    engine = make_engine()
    first = engine.run("ls", ["-la", str(listing)], cwd=str(listing), retain=True, budget={"max_tokens": 2000})
    assert first.review is not None and first.review.retained
    assert first.continuation is not None and first.continuation.cursor
    rows, n = pages(engine, first)
    assert n > 1
    assert sorted(r["name"] for r in rows) == sorted([".", "..", *(p.name for p in listing.iterdir())])


def test_usr_bin_pages_in_at_most_twenty_calls_of_2000_tokens(make_engine, tmp_path: Path) -> None:
    """Issue #26: paging ``ls -la /usr/bin`` under a 2,000-token budget took 136 calls (full row
    objects, a 1.0.0 estimate 55 % high).  The dense table, the calibrated estimate and pages
    without the run's review or a second copy of the cursor: at most 20 calls for 1,100 entries
    (proportionally more on a host with a bigger /usr/bin), every entry once, each page met."""
    engine = make_engine(guard={"allowed_paths": ["/usr/bin"]})
    first = engine.run("ls", ["-la", "/usr/bin"], cwd=str(tmp_path), retain=True, budget={"max_tokens": 2000})
    assert first.ok and first.budget is not None and first.budget.budget_met, first.failure
    rows, n = pages(engine, first)
    names = os.listdir("/usr/bin")
    assert sorted(r["name"] for r in rows) == sorted([".", "..", *names])
    assert n <= 20 * max(1, -(-len(names) // 1100)), (n, len(names))
    assert n > 1  # the control: it did need pages


def test_cursor_refusals(make_engine, listing: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine()
    run = lambda: engine.run("ls", ["-la", str(listing)], cwd=str(listing), retain=True,  # noqa: E731
                             budget={"max_tokens": 2000})
    a, b = run(), run()
    ca, cb = a.continuation.cursor, b.continuation.cursor  # type: ignore[union-attr]
    assert ca and cb
    payload, tag = ca[3:].split(".")
    tampered = f"c1.{payload}.{'A' if tag[0] != 'A' else 'B'}{tag[1:]}"
    forged_offset = cursor_mod.PREFIX + cursor_mod._b64(b'{"r":"%s","q":"x","o":0}' % a.review.result_id.encode()) + "." + tag  # type: ignore[union-attr]
    monkeypatch.setattr(cursor_mod, "_KEY", b"another process" * 2)
    other_process = cursor_mod.sign(a.review.result_id, "q", 3)  # type: ignore[union-attr]
    monkeypatch.undo()
    cases = {
        "tampered tag": (a, tampered, "cursor_invalid"),
        "edited payload": (a, forged_offset, "cursor_invalid"),
        "another process's key": (a, other_process, "cursor_invalid"),
        "garbage": (a, "not a cursor", "cursor_invalid"),
        "another result's cursor": (a, cb, "cursor_mismatch"),
    }
    for what, (env, cur, reason) in cases.items():
        got = engine.fetch_result(env.review.result_id, cur)  # type: ignore[union-attr]
        assert not got.ok and got.failure and got.failure.reason == reason, (what, got.failure)
        assert got.stdout.parsed is None
    ok = engine.fetch_result(a.review.result_id, ca)  # type: ignore[union-attr]
    assert ok.ok  # the refusals changed nothing


def test_store_miss_wins_over_a_bad_cursor(make_engine, listing: Path) -> None:
    engine = make_engine(store={"ttl_ms": 50})
    first = engine.run("ls", ["-la", str(listing)], cwd=str(listing), retain=True, budget={"max_tokens": 2000})
    unkept = engine.run("ls", ["-la", str(listing)], cwd=str(listing), contract_version="next",
                        budget={"max_tokens": 2000})
    assert unkept.continuation is not None and unkept.continuation.cursor is None  # nothing kept: no cursor
    time.sleep(0.1)
    for rid, reason in ((first.review.result_id, "expired"), (unkept.review.result_id, "not_retained"),  # type: ignore[union-attr]
                        ("r_" + "1" * 24, "unknown_id")):
        got = engine.fetch_result(rid, "tampered")
        assert not got.ok and got.failure.reason == reason  # type: ignore[union-attr]
        assert "nothing is re-executed" in got.failure.message  # type: ignore[union-attr]


def test_bad_arguments_are_refused_by_name(make_engine) -> None:
    engine = make_engine()
    got = engine.fetch_result("", "c1.x.y")
    assert got.failure is not None and got.failure.reason == "invalid_request" and "result_id" in got.failure.message


def test_a_max_items_cut_pages_on_when_retained(make_engine, listing: Path) -> None:
    full = make_engine(guard={"max_items": 0}).run("ls", ["-la", str(listing)], cwd=str(listing), format="json")
    engine = make_engine(guard={"max_items": 50})
    first = engine.run("ls", ["-la", str(listing)], cwd=str(listing), format="json", retain=True)
    assert len(first.stdout.parsed["entries"]) == 50
    assert first.continuation is not None and first.continuation.cursor and first.continuation.rows_left == 232
    got, n = pages(engine, first)
    assert got == full.stdout.parsed["entries"] and n == 6
    unkept = engine.run("ls", ["-la", str(listing)], cwd=str(listing), format="json")
    assert unkept.continuation is not None and unkept.continuation.cursor is None
