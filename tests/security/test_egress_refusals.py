"""Refusals are visible (issue 23 class 9): a destination the egress proxy refused is in the
envelope — the failure's hint when the command failed because of it, and an ``egress_refused``
note in every answer (the lean default one, without ``review``, too) — and the proxy's 403 body
names the proxy, so ``curl`` without ``-f`` (exit 0) cannot pass it off as the destination's
answer. A normal proxied call leaves the server's stderr free of tracebacks.

Loopback listeners only (opened by ``sandbox.network_allow``); requests are counted there. The
armed trap: the same ``curl -L`` without Parism follows the redirect to the listener the proxy
refused.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e.conftest import REPO_ROOT, make_workdir
from tests.e2e.rawrpc import RawServer
from tests.security.test_egress_engine import engine

pytestmark = [pytest.mark.skipif(shutil.which("curl") is None, reason="curl needed"), pytest.mark.timeout(120)]


@dataclass
class Listener:
    """An HTTP listener on the host's 127.0.0.1: ``/redirect`` answers 302 to ``to``, anything
    else 200 ``upstream``; with ``keep`` it holds each connection open after its answer (as a
    keep-alive server that ignores ``Connection: close`` does)."""

    keep: bool = False
    to: str = ""
    hits: list[str] = field(default_factory=list)
    sock: socket.socket = field(default_factory=socket.socket)
    held: list[socket.socket] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            self.hits.append(line)
            if " /redirect" in line:
                conn.sendall(f"HTTP/1.1 302 Found\r\nLocation: {self.to}\r\nContent-Length: 0\r\n\r\n".encode())
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nupstream\n")
            if self.keep:
                self.held.append(conn)
            else:
                conn.close()

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def target() -> Iterator[Listener]:
    listener = Listener()
    yield listener
    listener.close()


@pytest.fixture
def redirector(target: Listener) -> Iterator[Listener]:
    listener = Listener(to=target.url("/stolen"))
    yield listener
    listener.close()


def direct_follows(start: str, target: Listener) -> None:
    """The armed trap: curl -L without Parism reaches the refused listener."""
    before = len(target.hits)
    trap = subprocess.run(["curl", "-sS", "-L", "--max-time", "5", start], capture_output=True, text=True, timeout=20)
    assert trap.stdout == "upstream\n", trap.stderr
    assert len(target.hits) == before + 1


@pytest.mark.parametrize("contract", [None, "next"], ids=["default-answer", "review"])
def test_a_refusal_on_exit_0_is_a_note_and_the_body_names_the_proxy(tmp_path: Path, redirector: Listener,
                                                                   target: Listener, contract: str | None) -> None:
    e = engine(tmp_path, build=True, network_allow=[f"127.0.0.1:{redirector.port}"])
    try:
        kw = {"contract_version": contract} if contract else {}
        env = e.run("curl", ["-sS", "-L", redirector.url("/redirect")], str(tmp_path / "ws"), **kw).to_wire()
    finally:
        e.close()
    assert target.hits == [] and redirector.hits == ["GET /redirect HTTP/1.1"], (target.hits, redirector.hits)
    assert env["exitCode"] == 0, env  # curl without -f prints the 403's body and exits 0
    (note,) = env["notes"]
    assert note["name"] == "egress_refused" and note["count"] == 1, note
    assert "loopback" in note["message"] and "not the destination's" in note["message"], note
    raw = env["stdout"]["raw"]
    assert raw.startswith("parism egress proxy: request refused") and "upstream" not in raw, raw
    if contract is None:
        assert "review" not in env  # the note is not only in review
    else:
        assert "egress_refused" in env["review"]["warnings"]
    direct_follows(redirector.url("/redirect"), target)


def test_a_refusal_the_command_failed_on_is_in_the_failure_and_the_note(tmp_path: Path, redirector: Listener,
                                                                       target: Listener) -> None:
    e = engine(tmp_path, build=True, network_allow=[f"127.0.0.1:{redirector.port}"])
    try:
        env = e.run("curl", ["-sS", "-f", "-L", redirector.url("/redirect")], str(tmp_path / "ws")).to_wire()
    finally:
        e.close()
    assert target.hits == []
    assert env["ok"] is False and env["exitCode"] == 22, env
    assert env["failure"]["reason"] == "non_zero_exit" and "egress proxy refused" in env["failure"]["hint"], env
    assert [n["name"] for n in env["notes"]] == ["egress_refused"], env
    direct_follows(redirector.url("/redirect"), target)


def test_no_note_when_nothing_was_refused(tmp_path: Path, target: Listener) -> None:
    e = engine(tmp_path, network_allow=[f"127.0.0.1:{target.port}"])
    try:
        env = e.run("curl", ["-sS", target.url("/fine")], str(tmp_path / "ws")).to_wire()
    finally:
        e.close()
    assert env["stdout"]["raw"] == "upstream\n" and "notes" not in env, env
    assert target.hits == ["GET /fine HTTP/1.1"]


def test_a_proxied_call_leaves_the_servers_stderr_free_of_tracebacks() -> None:
    """The upstream keeps its connection after answering, so the proxy's splice is still open
    when the call ends and is cancelled then (before the fix: asyncio printed
    ``Exception in callback …`` with a CancelledError traceback for every such call)."""
    keeper = Listener(keep=True)
    work = make_workdir()
    try:
        (work / "parism-test.toml").write_text(
            f'[guard]\nallowed_commands = ["curl"]\nallowed_paths = ["{work}"]\n'
            f'[sandbox]\nmode = "required"\nnetwork_allow = ["127.0.0.1:{keeper.port}"]\n')
        # the server's imports as this test's (scripts/test-nonroot runs the system python3 with
        # the virtualenv's packages on PYTHONPATH)
        path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
        server = RawServer(work, env={"PYTHONPATH": path})
        try:
            server.initialize()
            for i in range(3):
                answer = server.request("tools/call", {"name": "run", "arguments": {
                    "cmd": "curl", "args": ["-sS", keeper.url(f"/call{i}")]}})
                content = answer["result"]["structuredContent"]
                assert content["exitCode"] == 0 and content["stdout"]["raw"] == "upstream\n", content
                assert "notes" not in content
        finally:
            assert server.close() == 0
        assert keeper.hits == [f"GET /call{i} HTTP/1.1" for i in range(3)]
        stderr = server.stderr.decode("utf-8", "replace")
        assert "Traceback" not in stderr and "CancelledError" not in stderr, stderr
    finally:
        keeper.close()
        shutil.rmtree(work, ignore_errors=True)
