"""Output that is not text, over the real server (issue 27): NUL, random and invalid-UTF-8 floods
at a raised output cap. Each answer carries the bytes once (base64 in ``structuredContent``,
a short summary as the text block): the whole JSON-RPC line is at most 3x the captured bytes
(it was 13x for NUL, 8x for random bytes), the bytes decode back to the file exactly, and the
server's peak RSS (``VmHWM``, reset through ``/proc/<pid>/clear_refs``) is at most 3x the output
above its start, for one call and for 4 at once (invalid UTF-8 had peaked at 7.5x).

The expected bytes are the files themselves; the start is the RSS after the handshake and one
call (the engine built), as in ``test_mcp_memory.py``.
"""

from __future__ import annotations

import base64
import json
import os
import random
from pathlib import Path

import psutil
import pytest

from tests.e2e.rawrpc import RawServer
from tests.e2e.test_mcp_memory import high_water, reset_high_water

pytestmark = [pytest.mark.timeout(240)]

MIB = 1 << 20
SIZE = 16 * MIB

CONFIG = """\
[guard]
allowed_commands = ["ls", "cat"]
max_output_bytes = {cap}
timeout_ms = 120000
max_concurrency = 4

[guard.command_policies.cat]
positionals = "any"
"""


def flood(kind: str, size: int = SIZE) -> bytes:
    if kind == "nul":
        return bytes(size)
    if kind == "random":
        return os.urandom(size)
    # invalid UTF-8: bytes 0x80-0xFF only (continuation bytes and lead bytes without their
    # continuations), each two UTF-8 bytes when read as text: the costliest class to carry
    rng = random.Random(27)
    return bytes(rng.randrange(0x80, 0x100) for _ in range(64 * 1024)) * (size // (64 * 1024))


def started(workdir: Path) -> tuple[RawServer, int]:
    (workdir / "parism-test.toml").write_text(CONFIG.format(cap=SIZE + MIB))
    server = RawServer(workdir)
    server.initialize()
    assert "result" in server.request("tools/list", {})
    answer = server.request("tools/call", {"name": "run", "arguments": {"cmd": "ls"}})
    assert answer["result"]["structuredContent"]["ok"] is True, answer
    return server, psutil.Process(server.proc.pid).memory_info().rss


def call_raw(server: RawServer, rid: str, path: Path) -> None:
    server.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                            "params": {"name": "run", "arguments": {"cmd": "cat", "args": [str(path)]}}}).encode())


def check(line: bytes, expected: bytes) -> None:
    """The answer carries exactly the file's bytes, once, and its text block is a summary."""
    answer = json.loads(line)
    result = answer["result"]
    assert result["isError"] is False, str(result)[:2000]
    stdout = result["structuredContent"]["stdout"]
    assert stdout["raw"] == "" and stdout["parsed"] is None
    assert base64.b64decode(stdout["raw_base64"], validate=True) == expected
    text = result["content"][0]["text"]
    assert len(text) < 4096, len(text)  # a summary, not the bytes again
    summary = json.loads(text)
    assert summary["stdout"]["raw_base64"].startswith(f"<{len(expected)} bytes that are not text")


@pytest.mark.parametrize("kind", ["nul", "random", "invalid_utf8"])
def test_one_flood(workdir: Path, kind: str) -> None:
    data = flood(kind)
    path = workdir / f"{kind}.bin"
    path.write_bytes(data)
    path.chmod(0o644)
    server, start = started(workdir)
    try:
        reset_high_water(server.proc.pid)
        call_raw(server, "flood", path)
        line = server.answers.get(timeout=120)
        peak = high_water(server.proc.pid)
    finally:
        server.close()
    check(line, data)
    assert len(line) <= 3 * len(data), f"{kind}: answer {len(line) / len(data):.2f}x the output"
    ratio = (peak - start) / len(data)
    assert ratio <= 3, f"{kind}: peak RSS {ratio:.2f}x the output above the start"


def test_four_floods_at_once(workdir: Path) -> None:
    kinds = ["nul", "random", "invalid_utf8", "random"]
    files = {}
    for i, kind in enumerate(kinds):
        path = workdir / f"f{i}.bin"
        path.write_bytes(flood(kind))
        path.chmod(0o644)
        files[f"f{i}"] = path
    server, start = started(workdir)
    try:
        reset_high_water(server.proc.pid)
        for rid, path in files.items():
            call_raw(server, rid, path)
        lines = {}
        for _ in files:
            line = server.answers.get(timeout=200)
            lines[json.loads(line[:200].split(b',"result"')[0] + b"}")["id"]] = line
        peak = high_water(server.proc.pid)
    finally:
        server.close()
    for rid, path in files.items():
        check(lines[rid], path.read_bytes())
        assert len(lines[rid]) <= 3 * SIZE
    ratio = (peak - start) / (len(files) * SIZE)
    assert ratio <= 3, f"peak RSS {ratio:.2f}x the 4 outputs above the start"
