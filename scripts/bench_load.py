#!/usr/bin/env python3
"""The MCP server under a burst of calls (issue 27): raw JSON-RPC over stdio, timed from outside.

    .venv/bin/python scripts/bench_load.py storm 45 64 200 500   # ping latency after a cancelled burst
    .venv/bin/python scripts/bench_load.py exit 40 100 500       # stdin EOF with N calls in flight
    .venv/bin/python scripts/bench_load.py sigterm 40 100 500    # SIGTERM with N calls in flight

storm N: N ``run sleep`` calls (max_concurrency 4, timeout 10 s), then ``notifications/cancelled``
for all of them, 1 s later a ``ping``: its latency (capped at 30 s), how many cancelled ids were
answered anyway, and the sleeps still alive 2 s after the ping. exit/sigterm N: the same N calls,
then stdin closed (or SIGTERM sent): seconds until the server exits, and the sleeps left after it.
Each run starts its own server; nothing here is a ratio, the figures are the issue's own.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
CONFIG = """[guard]
allowed_commands = ["sleep"]
timeout_ms = 10000
max_concurrency = 4
[guard.command_policies.sleep]
positionals = "any"
"""
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


class Server:
    def __init__(self, work: Path) -> None:
        (work / "c.toml").write_text(CONFIG)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "parism", "serve", "--config", str(work / "c.toml")], cwd=work,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={"PYTHONPATH": str(REPO), "HOME": str(work), "PATH": os.environ["PATH"]})
        self.answers: queue.Queue[tuple[float, dict]] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT})
        self.wait_for("init", 30)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.send({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
        self.wait_for("list", 30)
        time.sleep(1.5)  # the engine is built
        self.seen: list[dict] = []

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.answers.put((time.monotonic(), json.loads(line)))

    def send(self, msg: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def wait_for(self, rid: str, timeout: float) -> float | None:
        """Arrival time of the answer to ``rid`` (others are kept in ``seen``), None on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                at, answer = self.answers.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if answer.get("id") == rid:
                return at
            getattr(self, "seen", []).append(answer)

    def burst(self, n: int, mark: str) -> list[str]:
        ids = [f"c{i}" for i in range(n)]
        for rid in ids:
            self.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": "run", "arguments": {"cmd": "sleep", "args": [mark]}}})
        return ids


def sleeps(mark: str) -> int:
    count = 0
    for p in psutil.process_iter(["cmdline"]):
        if mark in (p.info["cmdline"] or []):
            count += 1
    return count


def wait_running(mark: str, want: int, timeout: float = 10) -> int:
    deadline = time.monotonic() + timeout
    while (got := sleeps(mark)) < want and time.monotonic() < deadline:
        time.sleep(0.05)
    return got


def storm(n: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        mark = f"9.{uuid.uuid4().int % 10**6:06d}"  # a unique duration: sleep 9.xxxxxx
        try:
            ids = server.burst(n, mark)
            wait_running(mark, 4)
            for rid in ids:
                server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}})
            time.sleep(1)
            sent = time.monotonic()
            server.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
            got = server.wait_for("ping", 30)
            latency = None if got is None else got - sent
            time.sleep(2)
            left = sleeps(mark)
            while True:  # whatever else arrived meanwhile
                try:
                    server.seen.append(server.answers.get_nowait()[1])
                except queue.Empty:
                    break
            answered = sum(1 for a in server.seen if a.get("id") in set(ids))
        finally:
            server.proc.kill()
            server.proc.wait()
        return {"in_flight": n, "ping_s": None if latency is None else round(latency, 3),
                "cancelled_answered": answered, "sleeps_left": left}


def shutdown(n: int, how: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        mark = f"9.{uuid.uuid4().int % 10**6:06d}"
        try:
            server.burst(n, mark)
            wait_running(mark, 4)
            time.sleep(0.5)
            t0 = time.monotonic()
            if how == "exit":
                assert server.proc.stdin is not None
                server.proc.stdin.close()
            else:
                server.proc.send_signal(signal.SIGTERM)
            try:
                server.proc.wait(timeout=60)
                took = round(time.monotonic() - t0, 3)
            except subprocess.TimeoutExpired:
                took = None
            time.sleep(0.5)
            left = sleeps(mark)
        finally:
            if server.proc.poll() is None:
                server.proc.kill()
                server.proc.wait()
        return {"in_flight": n, "exit_s": took, "status": server.proc.returncode, "sleeps_left": left}


def main(argv: list[str]) -> None:
    mode, counts = argv[0], [int(a) for a in argv[1:]]
    for n in counts:
        row = storm(n) if mode == "storm" else shutdown(n, mode)
        print(json.dumps({"mode": mode, **row}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
