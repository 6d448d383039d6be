"""``parsers.strict_schemas`` has an effect (issue 12, seed behaviour): a parser whose value does
not fit its declared schema gives ``parse/schema_violation`` with the schema's complaint, the raw
output kept; with the setting off the same value is served as parsed. Shown on a parser pack (a
real worker under bubblewrap) declaring its schema both ways a pack may (a JSON Schema, a pydantic
model), through the library and through the MCP server with the SDK's client. The value the
pack returns is checked against the real command (``rev`` of a file, reversed here)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from parism.engine import create_engine

ROOT = Path(__file__).resolve().parents[2]

#: ``count`` is declared an integer; the pack writes it as a string.
PACKS = {
    "json_schema": """
        SCHEMA = {"type": "object", "required": ["lines", "count"], "additionalProperties": False,
                  "properties": {"lines": {"type": "array", "items": {"type": "string"}},
                                 "count": {"type": "integer"}}}
    """,
    "pydantic": """
        from pydantic import BaseModel

        class SCHEMA(BaseModel):
            lines: list[str]
            count: int
    """,
}

PARSE = """
    from parism.packs.types import ParserPack

    def parse(raw, args, ctx):
        lines = raw.splitlines()
        return {"lines": lines, "count": str(len(lines))}

    PACK = ParserPack(name="rev", parse=parse, schema=SCHEMA, accepted_positionals={"max": 1})
"""

TEXT = "abc\nhello world\n"


def setup(tmp_path: Path, schema: str, strict: bool) -> Path:
    """A pack directory, a work directory with the input file, and the configuration."""
    tmp_path.chmod(0o755)
    pack = tmp_path / "packs" / "rev"
    pack.mkdir(parents=True)
    (pack / "parser.py").write_text(textwrap.dedent(PACKS[schema]) + textwrap.dedent(PARSE))
    work = tmp_path / "work"
    work.mkdir()
    (work / "in.txt").write_text(TEXT)
    (tmp_path / "home").mkdir()
    (tmp_path / "c.toml").write_text(textwrap.dedent(f"""\
        [guard]
        allowed_commands = ["rev"]
        allowed_paths = ["{work}"]
        [guard.command_policies.rev]
        positionals = "any"
        [parsers]
        pack_paths = ["{tmp_path / 'packs'}"]
        strict_schemas = {str(strict).lower()}
        external_time_limit_ms = 10000  # the worker imports jsonschema on a loaded CI machine
    """))
    for d in (tmp_path / "packs", pack, work):
        d.chmod(0o755)
    return work


def reversed_lines() -> list[str]:
    return [line[::-1] for line in TEXT.splitlines()]


def check(envelope: dict[str, Any], strict: bool) -> None:
    assert envelope["exitCode"] == 0, envelope
    assert envelope["stdout"]["raw"] == "".join(line + "\n" for line in reversed_lines())
    if not strict:
        assert envelope.get("failure") is None, envelope
        assert envelope["stdout"]["parsed"] == {"lines": reversed_lines(), "count": "2"}
        return
    failure = envelope["failure"]
    assert (failure["kind"], failure["reason"]) == ("parse", "schema_violation"), envelope
    assert "count" in failure["message"], failure
    assert envelope["stdout"]["parse_error"]["reason"] == "schema_violation"
    assert envelope["stdout"].get("parsed") is None


@pytest.mark.parametrize("schema", sorted(PACKS))
@pytest.mark.parametrize("strict", [False, True])
def test_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, schema: str, strict: bool) -> None:
    work = setup(tmp_path, schema, strict)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(work)
    engine = create_engine(str(tmp_path / "c.toml"))
    try:
        envelope = engine.run("rev", ["in.txt"], cwd=str(work), format="json")
    finally:
        engine.close()
    check(envelope.to_wire(), strict)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("strict", [False, True])
async def test_mcp(tmp_path: Path, strict: bool) -> None:
    work = setup(tmp_path, "json_schema", strict)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "parism", "serve", "--config", str(tmp_path / "c.toml")],
        env={"HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"]}, cwd=str(work))
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        result = await session.call_tool("run", {"cmd": "rev", "args": ["in.txt"], "format": "json"})
    assert result.is_error is False  # a parse problem is data, not a tool error (decision 11)
    assert result.structured_content is not None
    check(result.structured_content, strict)
