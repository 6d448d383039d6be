"""A raw JSON-RPC peer for the real server: bytes in on stdin, answers read off stdout by a
thread, so a test can say "exactly these answers arrived for this line" without any SDK between.

Each probe is followed by a ``ping`` sentinel with a fresh id: Parism's reader answers a refused
line before it reads the next one, so every answer the line is owed by the reader arrives before
the sentinel's; answers the SDK gives (unknown method, tool errors) are matched by their id.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.e2e.conftest import server_params

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}


class RawServer:
    def __init__(self, workdir: Path, env: dict[str, str] | None = None) -> None:
        params = server_params(workdir)
        self.proc = subprocess.Popen(
            [params.command, *params.args], cwd=params.cwd, env={**(params.env or {}), **(env or {})},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.answers: queue.Queue[bytes] = queue.Queue()
        self.stderr = b""
        self._ids = itertools.count()
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.answers.put(line)

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None, rid: Any = None) -> dict[str, Any]:
        """Send one well-formed request and return its answer (other answers are an error)."""
        rid = f"r{next(self._ids)}" if rid is None else rid
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(json.dumps(msg).encode())
        answer = self.next_answer(60)
        assert answer.get("id") == rid, answer
        return answer

    def initialize(self) -> None:
        answer = self.request("initialize", INIT)
        assert "result" in answer, answer
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def next_answer(self, timeout: float) -> dict[str, Any]:
        raw = self.answers.get(timeout=timeout)
        answer = json.loads(raw)
        assert_well_formed(answer)
        return answer

    def probe(self, line: bytes, wait_for: Any = None, timeout: float = 60) -> list[dict[str, Any]]:
        """Send ``line`` then a sentinel; every answer up to the sentinel's (and the answer with
        id ``wait_for``, should it come after it)."""
        sentinel = f"sentinel-{next(self._ids)}"
        self.send(line)
        self.send(json.dumps({"jsonrpc": "2.0", "id": sentinel, "method": "ping"}).encode())
        got: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        seen_sentinel = False
        while not seen_sentinel or (wait_for is not None and not any(a.get("id") == wait_for for a in got)):
            answer = self.next_answer(max(0.1, deadline - time.monotonic()))
            if answer.get("id") == sentinel:
                assert answer == {"jsonrpc": "2.0", "id": sentinel, "result": {}}, answer
                seen_sentinel = True
            else:
                got.append(answer)
        return got

    def close(self) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def assert_well_formed(answer: Any) -> None:
    """JSON-RPC 2.0 §5: jsonrpc, id (string, integer or null), exactly one of result/error."""
    assert isinstance(answer, dict) and answer.get("jsonrpc") == "2.0", answer
    assert "id" in answer, answer
    rid = answer["id"]
    assert rid is None or isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)), answer
    assert ("result" in answer) != ("error" in answer), answer
    if "error" in answer:
        err = answer["error"]
        assert isinstance(err.get("code"), int) and isinstance(err.get("message"), str), answer
        assert set(err) <= {"code", "message", "data"}, answer
    else:
        assert isinstance(answer["result"], dict), answer
