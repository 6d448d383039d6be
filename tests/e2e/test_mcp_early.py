"""The early start of ``tools/call run`` (parism/server/early.py): the command is handed over while
the SDK dispatches the request, and the handler awaits that call instead of starting its own.

What must hold, whatever the timing: each request runs its command at most once (the audit log
has one ``allowed`` entry per answered call — a handler that failed to claim the early call
would run the command a second time), every request still gets its one answer, a request the
session may not serve yet runs nothing, and a cancelled request's command dies even when the
cancellation arrives before the SDK has dispatched the request.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.e2e.conftest import sleep_procs
from tests.e2e.rawrpc import RawServer


def _audit_on(workdir: Path) -> Path:
    log = workdir / "audit.jsonl"
    with (workdir / "parism-test.toml").open("a") as cfg:
        cfg.write(f'\n[audit]\nenabled = true\npath = "{log}"\n')
    return log


def _allowed(log: Path) -> list[dict]:
    if not log.exists():
        return []
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [e for e in entries if e.get("decision") == "allowed"]


def _ready(server: RawServer) -> None:
    """Handshake, tool list (the engine is built once it is out), and the engine warm."""
    server.initialize()
    assert "result" in server.request("tools/list", {})
    assert "result" in server.request("tools/call", {"name": "run", "arguments": {"cmd": "ls"}})


def _until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for: {what}"
        time.sleep(0.05)


def test_each_call_runs_its_command_once(workdir: Path) -> None:
    log = _audit_on(workdir)
    server = RawServer(workdir, env={"PARISM_LOG_LEVEL": "DEBUG"})
    try:
        _ready(server)
        ids = [7, "seven", 8, "x-9", 0]
        for rid in ids:
            answer = server.request("tools/call", {"name": "run", "arguments": {"cmd": "ls", "args": ["-la"]}},
                                    rid=rid)
            assert answer["result"]["structuredContent"]["ok"] is True, answer
    finally:
        server.close()
    assert len(_allowed(log)) == len(ids) + 1  # the warm-up call, then one run per request
    started_early = server.stderr.decode().count("early start of request")
    assert started_early >= len(ids), server.stderr.decode()[-2000:]  # the path under test ran


def _comparable(answer: dict) -> dict:
    """An answer without what differs between two runs of one command (its duration)."""
    result = json.loads(json.dumps(answer["result"]))
    result["structuredContent"].pop("duration_ms")
    text = json.loads(result["content"][0]["text"])
    text.pop("duration_ms")
    result["content"][0]["text"] = text
    return result


def test_an_answer_written_by_the_worker_is_the_sdks_answer_once(workdir: Path) -> None:
    """Without a progress token the worker writes the answer itself (Wire.answer_now) and the
    writer drops the SDK's; the same call with a token takes the SDK's path. Both answers must
    be the same, each id answered once, and the drop marker never on the wire."""
    server = RawServer(workdir, env={"PARISM_LOG_LEVEL": "DEBUG"})
    args = {"cmd": "ls", "args": ["-la"]}
    try:
        _ready(server)
        direct = server.request("tools/call", {"name": "run", "arguments": args}, rid=501)
        via_sdk = server.request("tools/call", {"name": "run", "arguments": args, "_meta": {"progressToken": "p"}},
                                 rid=502)
        # commands that outlast the SDK's dispatch: the handler has claimed each before its envelope is ready
        slow = {"cmd": "sleep", "args": ["0.1"]}
        for rid in range(503, 513):
            assert server.request("tools/call", {"name": "run", "arguments": slow}, rid=rid)["id"] == rid
        assert server.request("ping", {}, rid="after")["result"] == {}  # nothing else came first
        time.sleep(0.3)
        assert server.answers.empty(), "an id was answered twice"
    finally:
        server.close()
    assert _comparable(direct) == _comparable(via_sdk)
    assert "parism/answered" not in json.dumps(direct)
    assert server.stderr.decode().count("answer written by the call's worker") >= 10  # the path ran


def test_invalid_arguments_start_nothing_and_are_refused_once(workdir: Path) -> None:
    log = _audit_on(workdir)
    server = RawServer(workdir)
    try:
        _ready(server)
        answer = server.request("tools/call", {"name": "run", "arguments": {"cmd": "ls", "bogus": 1}}, rid=41)
        assert answer["result"]["isError"] is True and "bogus" in answer["result"]["content"][0]["text"]
    finally:
        server.close()
    assert len(_allowed(log)) == 1  # the warm-up only


def test_before_the_handshake_nothing_runs(workdir: Path) -> None:
    log = _audit_on(workdir)
    server = RawServer(workdir)
    try:
        got = server.probe(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run",'
                           b'"arguments":{"cmd":"ls"}}}', wait_for=1)
        refusal = next(a for a in got if a.get("id") == 1)
        assert refusal["error"]["data"]["reason"] == "not_initialised", refusal
    finally:
        server.close()
    assert _allowed(log) == []


def test_cancelled_before_dispatch_kills_the_command(workdir: Path, sleep_arg: str) -> None:
    """The request and its cancellation in one write: the early start has handed the command
    over before the SDK reads the cancellation; the command must still die, and run once."""
    log = _audit_on(workdir)
    server = RawServer(workdir)
    try:
        _ready(server)
        call = {"jsonrpc": "2.0", "id": 55, "method": "tools/call",
                "params": {"name": "run", "arguments": {"cmd": "sleep", "args": [sleep_arg]}}}
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 55}}
        server.send(json.dumps(call).encode() + b"\n" + json.dumps(cancel).encode())
        _until(lambda: not sleep_procs(sleep_arg) and len(_allowed(log)) >= 2, 15, "the cancelled sleep to end")
        time.sleep(0.5)
        assert not sleep_procs(sleep_arg)  # not started a second time by the handler
        assert "result" in server.request("ping", {})  # still serving
    finally:
        server.close()
    assert len(_allowed(log)) == 2  # the warm-up and the cancelled sleep, once
