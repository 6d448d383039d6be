"""Exact names over MCP (docs/envelope.md, "Exact names"): the real server over stdio.

- A client that writes a byte that is not UTF-8 as ``\\udcff`` in ``args`` (JavaScript's
  ``JSON.stringify`` of a surrogateescaped name does) gets the file, not ``-32602``.
- The SDK client (pydantic-core's JSON reader, which refuses a lone surrogate) reads an answer
  listing ``bad\\xff`` and ``bad\\xfe``, and the two names' ``name_b64`` give back the bytes
  ``os.listdir`` reports.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pydantic_core
import pytest

from tests.e2e.conftest import make_workdir, open_session
from tests.e2e.rawrpc import RawServer

pytestmark = [pytest.mark.timeout(120)]


def _names(rows: list[dict]) -> set[bytes]:
    return {base64.b64decode(r["name_b64"]) if "name_b64" in r else r["name"].encode() for r in rows}


@pytest.fixture
def hostile() -> Iterator[Path]:
    work = make_workdir()
    d = work / "t"
    d.mkdir()
    d.chmod(0o755)
    for name in (b"bad\xff", b"bad\xfe"):
        with open(os.path.join(os.fsencode(d), name), "wb") as fh:
            fh.write(b"x")
    yield work
    shutil.rmtree(work, ignore_errors=True)


def test_the_sdk_reader_refuses_a_lone_surrogate() -> None:
    """Why the names travel as ``_b64`` and not as ``\\udcff`` (the armed trap)."""
    with pytest.raises(ValueError, match="surrogate"):
        pydantic_core.from_json(b'{"name": "bad\\udcff"}')


def test_a_json_client_passes_a_byte_as_udcff_in_args(hostile: Path) -> None:
    server = RawServer(hostile)
    try:
        server.initialize()
        line = json.dumps({"jsonrpc": "2.0", "id": "b1", "method": "tools/call", "params": {
            "name": "run", "arguments": {"cmd": "ls", "args": ["-l", "--", "bad\udcff"],
                                         "cwd": str(hostile / "t"), "format": "json"}}}).encode()
        assert b"\\udcff" in line
        (answer,) = server.probe(line, wait_for="b1")
        result = answer["result"]
        env = result["structuredContent"]
        assert result["isError"] is False and env["ok"] is True, env
        assert _names(env["stdout"]["parsed"]["entries"]) == {b"bad\xff"}
        assert json.loads(result["content"][0]["text"]) == env  # the text block mirrors it
        # a lone surrogate that is no byte is still refused, naming where
        bad = line.replace(b"bad\\udcff", b"bad\\ud800").replace(b'"b1"', b'"b2"')
        (answer,) = server.probe(bad, wait_for="b2")
        assert answer["error"]["code"] == -32602 and "args" in answer["error"]["message"]
    finally:
        assert server.close() == 0


@pytest.mark.anyio
async def test_the_sdk_client_reads_two_names_that_differ_in_one_byte(hostile: Path) -> None:
    async with open_session(hostile) as session:
        result = await session.call_tool("run", {"cmd": "ls", "args": ["-la"], "cwd": str(hostile / "t"),
                                                 "format": "json"})
    env = result.structured_content
    assert env is not None and env["ok"] is True, env
    names = _names(env["stdout"]["parsed"]["entries"]) - {b".", b".."}
    assert names == set(os.listdir(os.fsencode(hostile / "t")))
