"""The result tools over MCP, driven by the SDK's client against a real server over stdio:
run(retain, budget) → fetch_result until no cursor; run(retain, evidence) → explain_result →
compare_results, and their refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from tests.unit.shape.test_naive_reader import naive_rows
from tests.e2e.conftest import git
from tests.e2e.test_mcp_stdio import payload

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert result.is_error is not True, result.content
    return payload(result)


async def test_retain_explain_compare(session: ClientSession, workdir: Path) -> None:
    repo = workdir / "repo"
    repo.mkdir()
    repo.chmod(0o755)
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "one")
    (repo / "a.txt").write_text("changed\n")
    for d in (repo, *repo.rglob("*")):
        d.chmod(0o755 if d.is_dir() else 0o644)

    listing = await call(session, "run", {"cmd": "ls", "args": ["-la"], "cwd": str(repo),
                                          "retain": True, "evidence": "fields"})
    assert listing["ok"] and listing["review"]["retained"] is True
    rid = listing["review"]["result_id"]
    rows = listing["stdout"]["parsed"]["entries"]
    i = next(n for n, r in enumerate(rows) if r["name"] == "a.txt")
    size = await call(session, "explain_result", {"result_id": rid, "pointer": f"/entries/{i}/size_bytes"})
    assert size["ok"] and size["value"] == (repo / "a.txt").stat().st_size == 8
    span = size["source_spans"][0]
    assert listing["stdout"]["raw"].encode()[span["start"]:span["end"]] == b"8"
    assert size["source_kind"] == "derived" and size["transform"] == "parseInt"

    base = await call(session, "run", {"cmd": "git", "args": ["status", "--porcelain"], "cwd": str(repo), "retain": True})
    (repo / "b.txt").write_text("new\n")
    (repo / "b.txt").chmod(0o644)
    cur = await call(session, "run", {"cmd": "git", "args": ["status", "--porcelain"], "cwd": str(repo), "retain": True})
    diff = await call(session, "compare_results", {"base_id": base["review"]["result_id"],
                                                   "current_id": cur["review"]["result_id"]})
    assert diff["comparable"] is True and diff["domain"] == "git"
    assert [r["key"] for r in diff["added"]] == [f"{repo.resolve()}:b.txt"]
    assert diff["removed"] == [] and diff["changed"] == [] and diff["unchanged_count"] == 1

    refused = await call(session, "compare_results", {"base_id": rid, "current_id": base["review"]["result_id"]})
    assert refused["comparable"] is False and refused["refusal_reason"] == "different_subject"
    miss = await call(session, "explain_result", {"result_id": "r_" + "0" * 24, "pointer": ""})
    assert miss["ok"] is False and miss["reason"] == "unknown_id"


async def test_result_tools_refuse_unknown_arguments(session: ClientSession) -> None:
    result = await session.call_tool("explain_result", {"result_id": "r_x", "pointer": "", "extra": 1})
    assert result.is_error is True
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert "unknown parameter 'extra'" in text and "result_id" in text


async def test_describe_lists_the_result_tools(session: ClientSession) -> None:
    described = await call(session, "describe", {})
    assert {"fetch_result", "explain_result", "compare_results"} <= set(described["tools"])
    assert described["result_store"]["max_items"] == 16
    one = await call(session, "describe", {"cmd": "git"})
    assert "status" in one["parser"]["evidence"]


async def test_retain_budget_fetch_until_no_cursor(session: ClientSession, workdir: Path) -> None:
    many = workdir / "many"
    many.mkdir()
    many.chmod(0o755)
    for n in range(120):
        (many / f"f{n:03d}.txt").write_text("x")
        (many / f"f{n:03d}.txt").chmod(0o644)
    first = await call(session, "run", {"cmd": "ls", "args": ["-la"], "cwd": str(many), "retain": True,
                                        "budget": {"max_tokens": 700}})
    assert first["ok"] and first["review"]["retained"] is True and first["budget"]["budget_met"] is True
    names = [r["name"] for r in naive_rows(first["stdout"]["parsed"]["entries"])]  # the default answer's table
    cont, pages = first["continuation"], 1
    while cont.get("cursor"):
        page = await call(session, "fetch_result", {"result_id": cont["result_id"], "cursor": cont["cursor"]})
        assert page["ok"] and page["budget"]["budget_met"] and page["duration_ms"] == 0
        names += [r["name"] for r in naive_rows(page["stdout"]["parsed"]["entries"])]
        cont, pages = page["continuation"], pages + 1
    assert pages > 2 and cont["rows_left"] == 0
    assert sorted(names) == sorted([".", "..", *(p.name for p in many.iterdir())])
    bad = await session.call_tool("fetch_result", {"result_id": first["review"]["result_id"], "cursor": "c1.x.y"})
    assert payload(bad)["failure"]["reason"] == "cursor_invalid"
