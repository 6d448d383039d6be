"""Network containment in the kernel: a command with network is in its own network namespace
whose only way out is the egress proxy, which checks every address after DNS resolution.

The guard is bypassed (hand-made decisions, curl/python allowed with any argument) so the wall
alone is tested. Every refusal has its armed trap: the same request made by the same program
*without* Parism reaches the listener (counted there). Listeners: one on the host's 127.0.0.1,
one in an "internet" namespace this test creates (tests/security/sandbox/netlab.py).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from parism.run.sandbox import network_hint
from tests.security.sandbox.helpers import PY3, run, sandbox_factory, workspace
from tests.security.sandbox.netlab import METADATA, Internet, Loopback, internet, loopback, settle

__all__ = ["sandbox_factory", "workspace", "internet", "loopback"]

CURL = shutil.which("curl") or "/usr/bin/curl"
PING = shutil.which("ping") or "/usr/bin/ping"
pytestmark = pytest.mark.skipif(not Path(CURL).exists(), reason="curl not installed")

CONNECT = ("import socket, sys\ntry:\n    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)\n"
           "    s.sendall(b'GET /raw HTTP/1.0\\r\\n\\r\\n'); print('CONNECTED', s.recv(64).decode())\n"
           "except OSError as e:\n    print('REFUSED', e.errno)\n")


def box(sandbox_factory: Any, workspace: Path, allow: list[str] | None = None) -> Any:
    sb = sandbox_factory([str(workspace)])
    if allow:
        sb.settings = sb.settings.model_copy(update={"network_allow": allow})
    return sb


def direct(*argv: str) -> subprocess.CompletedProcess[str]:
    """The armed trap: the same program, same arguments, without Parism."""
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=20, env={"PATH": "/usr/bin:/bin"})


def curl(sb: Any, workspace: Path, *args: str, **dec: Any) -> Any:
    return run(sb, [CURL, "-sS", "--max-time", "8", *args], str(workspace), network=True, **dec)


# ---------------------------------------------------------------- no network at all


def test_network_denied_by_default(sandbox_factory, workspace: Path, loopback: Loopback) -> None:
    sb = box(sandbox_factory, workspace)
    r = run(sb, [PY3, "-c", CONNECT, "127.0.0.1", str(loopback.port)], str(workspace))
    assert r.out.startswith("REFUSED"), r.out + r.err
    assert loopback.hits == []
    assert direct(PY3, "-c", CONNECT, "127.0.0.1", str(loopback.port)).stdout.startswith("CONNECTED")
    assert len(loopback.hits) == 1  # armed: the same program reaches it without Parism


def test_denied_network_failure_gets_the_policy_hint(sandbox_factory, workspace: Path, loopback: Loopback) -> None:
    sb = box(sandbox_factory, workspace)
    r = run(sb, [CURL, "-sS", loopback.url()], str(workspace))
    assert r.cap.exit_code == 7  # curl: failed to connect
    assert network_hint("curl", False, r.cap.exit_code, r.err) == "network disabled by policy for curl"
    assert network_hint("ls", False, 2, "ls: cannot access 'x': No such file or directory") is None
    dns = run(sb, [CURL, "-sS", "http://parism-test.example.com/"], str(workspace))
    assert dns.cap.exit_code == 6, dns.err  # curl: could not resolve host — no DNS inside
    assert loopback.hits == []


# ---------------------------------------------------------------- network through the proxy


def test_host_loopback_is_refused_by_default(sandbox_factory, workspace: Path, loopback: Loopback) -> None:
    sb = box(sandbox_factory, workspace)
    for url in (loopback.url(), f"http://[::ffff:127.0.0.1]:{loopback.port}/", f"http://0:{loopback.port}/",
                f"http://localhost:{loopback.port}/"):
        r = curl(sb, workspace, "-f", url)
        assert r.cap.exit_code == 22 and "403" in r.err, (url, r.out, r.err)
    https = curl(sb, workspace, f"https://127.0.0.1:{loopback.port}/")
    assert https.cap.exit_code == 56 and "403" in https.err, https.err  # CONNECT refused
    raw = run(sb, [PY3, "-c", CONNECT, "127.0.0.1", str(loopback.port)], str(workspace), network=True)
    assert raw.out.startswith("REFUSED"), raw.out  # no proxy: the namespace's own loopback only
    assert loopback.hits == []
    assert direct(CURL, "-sS", loopback.url()).stdout == "loopback\n"
    assert len(loopback.hits) == 1  # armed


def test_network_allow_opens_a_loopback_listener(sandbox_factory, workspace: Path, loopback: Loopback) -> None:
    sb = box(sandbox_factory, workspace, [f"127.0.0.1:{loopback.port}"])
    r = curl(sb, workspace, loopback.url("/opened"))
    assert r.out == "loopback\n", r.out + r.err
    assert loopback.hits == ["GET /opened HTTP/1.1"]  # the proxy sends origin-form upstream


def test_allowed_destination_is_reached(sandbox_factory, workspace: Path, internet: Internet) -> None:
    sb = box(sandbox_factory, workspace, [internet.net])
    before = len(internet.hits())
    r = curl(sb, workspace, internet.url("/allowed"))
    assert r.out == "internet\n", r.out + r.err
    assert internet.hits()[before:] == [f"GET /allowed HTTP/1.1 host={internet.addr}:{internet.port}"]


def test_private_destination_is_refused_unless_allowed(sandbox_factory, workspace: Path, internet: Internet) -> None:
    sb = box(sandbox_factory, workspace)
    before = len(internet.hits())
    r = curl(sb, workspace, "-f", internet.url("/refused"))
    assert r.cap.exit_code == 22 and "403" in r.err, r.err
    assert len(internet.hits()) == before
    assert direct(CURL, "-sS", internet.url("/refused")).stdout == "internet\n"
    assert len(internet.hits()) == before + 1  # armed


@pytest.mark.parametrize("host", [METADATA, "[::ffff:169.254.169.254]", "0xa9fea9fe", "2852039166",
                                  "[::ffff:a9fe:a9fe]", "169.254.43518"])
def test_metadata_is_refused_even_when_its_network_is_reached(sandbox_factory, workspace: Path,
                                                              internet: Internet, host: str) -> None:
    sb = box(sandbox_factory, workspace, [internet.net])
    before = len(internet.hits())
    r = curl(sb, workspace, "-f", f"http://{host}:{internet.port}/latest/meta-data/")
    assert r.cap.exit_code == 22 and "403" in r.err, r.out + r.err
    settle()
    assert len(internet.hits()) == before
    trap = direct(CURL, "-sS", "--max-time", "5", f"http://{METADATA}:{internet.port}/latest/meta-data/")
    assert trap.stdout == "internet\n", trap.stderr
    assert len(internet.hits()) == before + 1  # armed: the host route leads to our listener


@pytest.mark.parametrize("target", ["loopback", "metadata"])
def test_redirects_go_through_the_same_check(sandbox_factory, workspace: Path, internet: Internet,
                                             loopback: Loopback, target: str) -> None:
    to = loopback.url("/stolen") if target == "loopback" else f"http://{METADATA}:{internet.port}/stolen"
    start = internet.url("/redirect/" + quote(to, safe=""))
    sb = box(sandbox_factory, workspace, [internet.net])
    before = len(internet.hits())
    r = curl(sb, workspace, "-f", "-L", start)
    assert r.cap.exit_code == 22 and "403" in r.err, r.out + r.err
    settle()
    assert [h for h in internet.hits()[before:] if "/stolen" in h] == [] and loopback.hits == []
    assert len(internet.hits()) == before + 1  # the first hop (allowed) was made
    trap = direct(CURL, "-sS", "-L", "--max-time", "5", start)
    assert trap.stdout in ("loopback\n", "internet\n"), trap.stderr
    stolen = loopback.hits if target == "loopback" else [h for h in internet.hits() if "/stolen" in h]
    assert len(stolen) == 1  # armed: curl -L without Parism follows the redirect there


def test_program_ignoring_the_proxy_has_no_route(sandbox_factory, workspace: Path, internet: Internet) -> None:
    sb = box(sandbox_factory, workspace, [internet.net])
    before = len(internet.hits())
    r = run(sb, [PY3, "-c", CONNECT, internet.addr, str(internet.port)], str(workspace), network=True)
    assert r.out.startswith("REFUSED"), r.out + r.err
    settle()
    assert len(internet.hits()) == before
    assert direct(PY3, "-c", CONNECT, internet.addr, str(internet.port)).stdout.startswith("CONNECTED")
    settle()
    assert len(internet.hits()) == before + 1  # armed


def test_ping_reaches_its_own_loopback_only(sandbox_factory, workspace: Path, internet: Internet) -> None:
    sb = box(sandbox_factory, workspace, [internet.net])
    own = run(sb, [PING, "-c", "1", "-W", "2", "127.0.0.1"], str(workspace), network=True)
    assert own.cap.exit_code == 0 and "1 received" in own.out, own.out + own.err
    out = run(sb, [PING, "-c", "1", "-W", "2", internet.addr], str(workspace), network=True)
    assert out.cap.exit_code != 0, out.out
    assert direct(PING, "-c", "1", "-W", "2", internet.addr).returncode == 0  # armed: reachable from the host


def test_host_net_reads_host_sockets_but_cannot_connect(sandbox_factory, workspace: Path, loopback: Loopback) -> None:
    sb = box(sandbox_factory, workspace)
    ss = run(sb, ["/usr/bin/ss", "-tln"], str(workspace), namespace="host_net")
    assert f"127.0.0.1:{loopback.port}" in ss.out, ss.out + ss.err  # the host's listening socket
    r = run(sb, [PY3, "-c", CONNECT, "127.0.0.1", str(loopback.port)], str(workspace), namespace="host_net")
    assert r.out == "REFUSED 13\n" and loopback.hits == [], r.out + r.err  # EACCES: no inet socket
    assert direct(PY3, "-c", CONNECT, "127.0.0.1", str(loopback.port)).stdout.startswith("CONNECTED")
    assert len(loopback.hits) == 1  # armed
