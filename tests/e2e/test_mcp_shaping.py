"""Projection, budget and the lean default answer over MCP through the SDK client (issue 10):
each parameter changes the answer as documented, checked against ``os.lstat`` of the real
directory; the text block and ``structuredContent`` carry the same answer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp import ClientSession

from parism.output.shape.lean import expand
from parism.output.shape.tokens import approx
from tests.e2e.test_mcp_stdio import payload

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@pytest.fixture
def listing(workdir: Path) -> dict[str, int]:
    sizes = {f"f{i:03d}.txt": (i * 37) % 1000 for i in range(120)}
    for name, size in sizes.items():
        (workdir / name).write_bytes(b"x" * size)
    return {p.name: os.lstat(p).st_size for p in workdir.iterdir() if p.is_file() and not p.is_symlink()}


async def run(session: ClientSession, **arguments: object) -> dict:
    result = await session.call_tool("run", {"cmd": "ls", "args": ["-la"], **arguments})
    env = payload(result)
    assert json.loads(result.content[0].text) == env  # type: ignore[union-attr]
    return env


async def test_each_projection_parameter(session: ClientSession, listing: dict[str, int]) -> None:
    env = await run(session, where=[{"field": "name", "op": "prefix", "value": "f0"},
                                    {"field": "size_bytes", "op": "gte", "value": 300}],
                    sort_by={"field": "size_bytes", "order": "desc"}, limit=5, select=["name", "size_bytes"])
    want = sorted(((s, n) for n, s in listing.items() if n.startswith("f0") and s >= 300), key=lambda t: -t[0])
    rows = env["stdout"]["parsed"]["entries"]
    assert [r["size_bytes"] for r in rows] == [s for s, _ in want[:5]] and all(set(r) == {"name", "size_bytes"} for r in rows)
    assert env["stdout"]["parsed"]["_summary"]["matched"] == len(want)
    env = await run(session, array="entries", limit=0)
    assert env["stdout"]["parsed"]["entries"] == []
    bad = await session.call_tool("run", {"cmd": "ls", "args": ["-la"], "select": ["nmae"]})
    assert bad.is_error and payload(bad)["failure"]["reason"] == "unknown_field"


async def test_budget_over_mcp(session: ClientSession, listing: dict[str, int]) -> None:
    env = await run(session, select=["name", "size_bytes"], budget={"max_tokens": 1300})
    assert env["budget"]["budget_met"] and env["budget"]["measured_tokens"] <= 1300
    assert env["budget"]["measured_tokens"] == approx(json.dumps(env, separators=(",", ":"), ensure_ascii=False))
    assert env["continuation"]["rows_left"] == env["continuation"]["total"] - len(env["stdout"]["parsed"]["entries"])
    small = await session.call_tool("run", {"cmd": "ls", "budget": {"max_tokens": 100}})
    assert small.is_error and payload(small)["failure"]["reason"] == "budget_too_small"


async def test_lean_default_and_explicit_json(session: ClientSession, listing: dict[str, int]) -> None:
    env = await run(session)
    table = env["stdout"]["parsed"]["entries"]
    assert env["stdout"]["raw"] == "" and set(table) <= {"schema", "same", "rows"}
    assert all(len(r) == len(table["schema"]) for r in table["rows"])  # one cell per schema name
    rows = {r["name"]: r for r in expand(env["stdout"]["parsed"])["entries"]}
    assert {n: rows[n]["size_bytes"] for n in listing} == listing
    seed = await run(session, format="json")
    assert "f001.txt" in seed["stdout"]["raw"]
    assert {e["name"] for e in seed["stdout"]["parsed"]["entries"]} >= set(listing)
