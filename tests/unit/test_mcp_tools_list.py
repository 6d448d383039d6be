"""The tool list a client receives is pinned byte for byte (names, descriptions, annotations and
the input/output JSON schemas), so start-up optimisations of the MCP layer cannot change it.

``mcp_tools_list.json`` was generated from the server as it stood before those optimisations and
checked by reading it.  A deliberate change of a tool or of a wire model regenerates it:
``REGEN_TOOLS_LIST=1 pytest tests/unit/test_mcp_tools_list.py`` (then read the diff).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from mcp.types import ListToolsResult

from parism.config import load_config
from parism.server.app import LazyEngine, build_server

GOLDEN = Path(__file__).with_name("mcp_tools_list.json")
REGEN = os.environ.get("REGEN_TOOLS_LIST") == "1"

#: The readonly profile with a network-free allowlist: run/run_paged are read-only, closed-world.
CONFIG = '[guard]\nallowed_commands = ["ls", "git", "ps"]\n'


def tools_list_text(config: Path) -> str:
    """The tools/list result as the SDK puts it on the wire (``_dump_result``), indented."""
    server = build_server(LazyEngine(load_config(str(config))), "0.1.0")
    tools = anyio.run(server.list_tools)
    wire = ListToolsResult(tools=tools).model_dump(by_alias=True, mode="json", exclude_none=True)
    return json.dumps(wire, indent=1, ensure_ascii=False) + "\n"


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in [n for n in os.environ if n.startswith("PARISM_")]:
        monkeypatch.delenv(name)
    path = tmp_path / "parism.toml"
    path.write_text(CONFIG)
    return path


def test_tools_list_is_byte_identical_to_the_pinned_one(config: Path) -> None:
    text = tools_list_text(config)
    if REGEN:
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()
