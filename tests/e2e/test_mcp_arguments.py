"""Tool arguments over MCP go through ``parism.wire.options.build`` (issue 12 item 2, issue 10 item 2):
no bool↔int coercion, bounded integers, unknown parameters refused naming them and listing the
valid ones — each an ``isError`` result (SEP-1303) — and an unknown tool is a JSON-RPC error.

The control for every refusal is the same session answering a valid call right after it, and the
valid list is checked against the advertised ``inputSchema``, not against the server's own text.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import ClientSession, MCPError

from tests.e2e.test_mcp_stdio import error_text, payload

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

REFUSED = [
    ("run", {"cmd": "ls", "includeDiff": 0}, "includeDiff", "a boolean"),
    ("run", {"cmd": "ls", "includeDiff": 1}, "includeDiff", "a boolean"),
    ("run_paged", {"cmd": "ls", "page": True}, "page", "an integer"),
    ("run_paged", {"cmd": "ls", "page_size": True}, "page_size", "an integer"),
    ("run_paged", {"cmd": "ls", "page": 10**30}, "page", "less than or equal to 2147483647"),
    ("run_paged", {"cmd": "ls", "page": 1.0}, "page", "an integer"),
    ("run_paged", {"cmd": "ls", "page": "1"}, "page", "an integer"),
    ("run", {"cmd": "ls", "contract_version": "bogus"}, "contract_version", "'stable' or 'next'"),
    ("run", {"cmd": 7}, "cmd", "a string"),
    ("dry_run", {"cmd": "ls", "args": [1]}, "args.0", "a string"),
    ("describe", {"cmd": ""}, "cmd", "at least 1 character"),
]


@pytest.mark.parametrize(("tool", "arguments", "param", "says"), REFUSED)
async def test_loose_types_are_refused_naming_the_parameter(
    session: ClientSession, tool: str, arguments: dict[str, Any], param: str, says: str
) -> None:
    text = error_text(await session.call_tool(tool, arguments))
    assert text.startswith(f"invalid arguments for {tool}: ") and f"'{param}'" in text, text
    assert says in text, text
    assert "Arguments" not in text and "pydantic" not in text  # no internal model names


@pytest.mark.parametrize("tool", ["run", "run_paged", "describe", "dry_run"])
async def test_unknown_parameter_is_refused_listing_the_valid_ones(session: ClientSession, tool: str) -> None:
    schemas = {t.name: t.input_schema for t in (await session.list_tools()).tools}
    base = {} if tool == "describe" else {"cmd": "ls"}
    text = error_text(await session.call_tool(tool, {**base, "timeout": 5}))
    assert "unknown parameter 'timeout'" in text
    listed = text.split("(valid: ", 1)[1].rstrip(")").split(", ")
    assert listed == list(schemas[tool]["properties"])
    if tool != "describe":
        good = await session.call_tool(tool, base)
        assert good.is_error is False


async def test_projection_parameters_are_unknown_to_run_paged(session: ClientSession) -> None:
    text = error_text(await session.call_tool("run_paged", {"cmd": "ls", "select": ["name"]}))
    assert "unknown parameter 'select'" in text


async def test_nested_unknown_key_names_its_path(session: ClientSession) -> None:
    where = [{"field": "name", "op": "eq", "value": "x", "typo": 1}]
    text = error_text(await session.call_tool("run", {"cmd": "ls", "where": where}))
    assert "unknown parameter 'where.0.typo' (valid: field, op, value)" in text


async def test_a_huge_unknown_key_is_not_echoed_whole(session: ClientSession) -> None:
    key = "k" * 1_000_000
    result = await session.call_tool("run", {"cmd": "ls", key: 1})
    text = error_text(result)
    assert len(text) < 2_000 and "…[+" in text


async def test_unknown_tool_is_a_json_rpc_error_with_its_name(session: ClientSession) -> None:
    with pytest.raises(MCPError) as info:
        await session.call_tool("rm_everything", {"cmd": "ls"})
    assert info.value.code == -32602
    assert "rm_everything" in info.value.message
    assert info.value.data["tool"] == "rm_everything"
    assert set(info.value.data["valid"]) == {t.name for t in (await session.list_tools()).tools}
    after = await session.call_tool("run", {"cmd": "ls"})
    assert payload(after)["ok"] is True
