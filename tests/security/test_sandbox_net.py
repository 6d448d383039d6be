"""Network: a listener the test starts on 127.0.0.1 is unreachable unless the policy allows it."""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from parism.sandbox import network_hint
from tests.security.sandbox.helpers import PY3, run, sandbox_factory, workspace

__all__ = ["sandbox_factory", "workspace"]

CONNECT = ("import socket, sys\ntry:\n    s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3)\n"
           "    s.sendall(b'ping'); print('CONNECTED', s.recv(16).decode())\nexcept OSError as e:\n"
           "    print('REFUSED', e.errno)\n")


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server on the host loopback that records what each client sent."""
    srv = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                received.append(conn.recv(16))
                conn.sendall(b"pong")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], received
    srv.close()


def test_network_denied_by_default(sandbox_factory, workspace: Path, listener) -> None:
    port, received = listener
    sb = sandbox_factory([str(workspace)])
    r = run(sb, [PY3, "-c", CONNECT, str(port)], str(workspace))
    assert r.out.startswith("REFUSED"), r.out + r.err
    assert received == []


@pytest.mark.parametrize("dec", [{"network": True}, {"namespace": "host_net"}])
def test_network_allowed_by_policy(sandbox_factory, workspace: Path, listener, dec: dict) -> None:
    port, received = listener
    sb = sandbox_factory([str(workspace)])
    r = run(sb, [PY3, "-c", CONNECT, str(port)], str(workspace), **dec)
    assert r.out.strip() == "CONNECTED pong", r.out + r.err  # answered by this test's listener
    assert received == [b"ping"]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl not installed")
def test_denied_network_failure_gets_the_policy_hint(sandbox_factory, workspace: Path, listener) -> None:
    port, _ = listener
    sb = sandbox_factory([str(workspace)])
    r = run(sb, ["/usr/bin/curl", "-sS", f"http://127.0.0.1:{port}/"], str(workspace))
    assert r.cap.exit_code == 7  # curl: failed to connect
    assert network_hint("curl", False, r.cap.exit_code, r.err) == "network disabled by policy for curl"
    assert network_hint("curl", True, r.cap.exit_code, r.err) is None
    dns = run(sb, ["/usr/bin/curl", "-sS", "http://parism-test.example.com/"], str(workspace))
    assert dns.cap.exit_code == 6, dns.err  # curl: could not resolve host — no DNS inside
    assert network_hint("curl", False, dns.cap.exit_code, dns.err) == "network disabled by policy for curl"
    assert network_hint("ls", False, 2, "ls: cannot access 'x': No such file or directory") is None
