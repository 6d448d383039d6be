"""The fast path's fence (parism/server/fastpath.py): it is taken with the installed SDK, a
missing internal is found and falls back, and the fallback's answers are the fast path's.

``test_the_installed_sdk_takes_the_fast_path`` is the CI alarm: an SDK release that moved one
of the internals the fast path uses makes it fail, naming what moved (the server itself would
keep working on the plain SDK path, slower, and say so only in ``describe`` and its log).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from parism.server import fastpath
from parism.server.app import ParismServer
from tests.e2e.conftest import REPO_ROOT, server_params

pytestmark = [pytest.mark.timeout(120)]


def test_the_installed_sdk_takes_the_fast_path() -> None:
    status = fastpath.check(ParismServer("t", version="0"), environ={})
    assert status.active, (f"the MCP fast path FELL BACK with mcp {status.sdk}: the SDK lacks "
                           f"{', '.join(status.missing)}; move the use in parism/server/fastpath.py")
    assert status.missing == () and status.describe() == {
        "fast_path": True, "sdk": status.sdk, "sdk_tested": fastpath.TESTED_SDK}


def test_the_sdk_pin_is_the_tested_range() -> None:
    deps = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"mcp{fastpath.TESTED_SDK}" in deps
    low, high = re.fullmatch(r">=(\d+\.\d+),<(\d+\.\d+)", fastpath.TESTED_SDK).groups()
    installed = tuple(int(p) for p in fastpath.sdk_version().split(".")[:2])
    assert tuple(map(int, low.split("."))) <= installed < tuple(map(int, high.split(".")))


@pytest.mark.parametrize("gone", ["mcp.shared._context_streams", "mcp.server._otel"])
def test_a_module_the_sdk_no_longer_has_is_named_and_falls_back(monkeypatch: pytest.MonkeyPatch, gone: str) -> None:
    server = ParismServer("t", version="0")
    assert fastpath.check(server, environ={}).active  # armed: with the module there, the fast path
    monkeypatch.setitem(sys.modules, gone, None)  # import of it now raises ImportError
    status = fastpath.check(server, environ={})
    assert not status.active and all(m.startswith(gone + ".") for m in status.missing) and status.missing
    assert gone in status.describe()["note"]


def test_a_server_without_its_low_level_server_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    server = ParismServer("t", version="0")
    monkeypatch.delattr(server, "_lowlevel_server")
    assert fastpath.check(server, environ={}).missing == ("MCPServer._lowlevel_server",)
    server2 = ParismServer("t", version="0")
    monkeypatch.setattr(server2._lowlevel_server, "_request_handlers", None)
    assert fastpath.check(server2, environ={}).missing == ("lowlevel.Server._request_handlers",)


def test_an_unknown_fast_path_setting_is_refused_naming_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"PARISM_FAST_PATH='fast' is not one of auto, off"):
        fastpath.check(ParismServer("t", version="0"), environ={"PARISM_FAST_PATH": "fast"})
    assert not fastpath.check(ParismServer("t", version="0"), environ={"PARISM_FAST_PATH": "off"}).active


# -- the fallback, end to end --------------------------------------------------------------

def _params(workdir: Path, mode: str) -> StdioServerParameters:
    p = server_params(workdir)
    return p.model_copy(update={"env": {**(p.env or {}), "PARISM_FAST_PATH": mode}})


def _payload(result: CallToolResult) -> dict[str, Any]:
    assert len(result.content) == 1
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.structured_content is not None and json.loads(text) == result.structured_content
    return result.structured_content


async def _session_answers(workdir: Path, mode: str) -> dict[str, Any]:
    async with stdio_client(_params(workdir, mode)) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            tools = await s.list_tools()
            ls = _payload(await s.call_tool("run", {"cmd": "ls", "args": ["-1"], "cwd": str(workdir / "d")}))
            refused = await s.call_tool("run", {"cmd": "rm", "args": ["x"], "cwd": str(workdir)})
            bad = await s.call_tool("run", {"cmd": "ls", "nope": 1})
            desc = _payload(await s.call_tool("describe", {}))
    return {"caps": init.capabilities.model_dump(), "tools": [t.model_dump() for t in tools.tools],
            "ls": ls, "refused": _payload(refused), "bad": (bad.is_error, bad.content[0].text), "describe": desc}


@pytest.mark.anyio
async def test_the_plain_sdk_path_answers_as_the_fast_path_does(workdir: Path) -> None:
    (workdir / "d").mkdir()
    names = sorted(["b.txt", "a b.txt", "c"])
    for name in names:
        (workdir / "d" / name).write_text("x")
    fast, plain = await _session_answers(workdir, "auto"), await _session_answers(workdir, "off")
    assert fast["describe"]["server"]["fast_path"]["fast_path"] is True
    off = plain["describe"]["server"]["fast_path"]
    assert off["fast_path"] is False and "PARISM_FAST_PATH=off" in off["note"]
    assert fast["tools"] == plain["tools"]  # the same table and schemas
    # the rows are the directory's own entries (os.listdir), on both paths
    for side in (fast, plain):
        table = side["ls"]["stdout"]["parsed"]["entries"]  # the lean table {schema, rows}
        assert table["schema"] == ["name"]
        assert [r[0] for r in table["rows"]] == sorted(os.listdir(workdir / "d"))
    for key in ("ls", "refused"):
        a, b = (dict(side[key], duration_ms=0) for side in (fast, plain))
        assert a == b, key
    assert fast["bad"] == plain["bad"] and fast["bad"][0] is True and "nope" in fast["bad"][1]
    tools_cap = {k: v for k, v in fast["caps"].items() if v is not None}
    assert set(tools_cap) >= {"tools"}
