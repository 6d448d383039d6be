"""Listeners for the network tests: one on the host loopback, one in an "internet" stand-in.

The internet stand-in is a network namespace this module creates (``ip netns add``) with a veth
pair in 198.18.0.0/15 (the benchmarking range: never routed on the internet) and the cloud
metadata address 169.254.169.254 on its loopback, routed from the host through the veth for
the duration of the fixture. Nothing else is touched: no other non-loopback address is ever
contacted. Every listener counts the requests it got (method, path, Host) — the tests count
there, not in Parism's answers. Everything is removed in ``finally`` blocks.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

IP = shutil.which("ip") or "/usr/sbin/ip"
METADATA = "169.254.169.254"
LOCK_PATH = "/tmp/parism-netlab.lock"

# The HTTP server run inside the namespace: one line per request to the log file; paths
# /redirect/<url> answer 302 to <url>, anything else 200.
SERVER = r"""
import socket, sys, threading, urllib.parse
log, port = sys.argv[1], int(sys.argv[2])
srv = socket.create_server(("0.0.0.0", port), reuse_port=True)
def handle(conn):
    with conn:
        conn.settimeout(5)
        data = b""
        try:
            while b"\r\n\r\n" not in data and len(data) < 65536:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            return
        line = data.split(b"\r\n", 1)[0].decode("latin-1")
        host = [h.split(b":", 1)[1].strip().decode() for h in data.split(b"\r\n") if h.lower().startswith(b"host:")]
        with open(log, "a") as f:
            f.write(f"{line} host={host[0] if host else ''}\n")
        path = line.split(" ")[1] if line.count(" ") >= 2 else "/"
        if path.startswith("/redirect/"):
            to = urllib.parse.unquote(path[len("/redirect/"):])
            conn.sendall(f"HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\ninternet\n")
print("ready", flush=True)
while True:
    c, _ = srv.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
"""


# A DNS stand-in run inside the namespace (UDP and TCP port 53): every A question is answered
# with 192.0.2.99, and its name logged.
DNS = r"""
import socket, struct, sys, threading
log = sys.argv[1]
def answer(q):
    qid, flags, qd = struct.unpack(">HHH", q[:6])
    end = 12
    labels = []
    while q[end]:
        labels.append(q[end + 1:end + 1 + q[end]].decode("ascii", "replace"))
        end += q[end] + 1
    question = q[12:end + 5]
    with open(log, "a") as f:
        f.write(".".join(labels) + "\n")
    head = struct.pack(">HHHHHH", qid, 0x8180, 1, 1, 0, 0)
    rr = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton("192.0.2.99")
    return head + question + rr
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); udp.bind(("0.0.0.0", 53))
tcp = socket.create_server(("0.0.0.0", 53))
def serve_tcp():
    while True:
        c, _ = tcp.accept()
        with c:
            n = struct.unpack(">H", c.recv(2))[0]
            q = b""
            while len(q) < n:
                q += c.recv(n - len(q))
            a = answer(q)
            c.sendall(struct.pack(">H", len(a)) + a)
threading.Thread(target=serve_tcp, daemon=True).start()
print("ready", flush=True)
while True:
    q, peer = udp.recvfrom(4096)
    udp.sendto(answer(q), peer)
"""


def _ip(*args: str) -> None:
    subprocess.run([IP, *args], check=True, capture_output=True, timeout=20)


@dataclass
class Internet:
    """The namespace, its address (``addr``), its HTTP port, and the request log."""

    ns: str
    addr: str
    host_addr: str
    net: str  # the veth /30, what a test's network_allow opens
    port: int
    log: Path
    dns_log: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def hits(self) -> list[str]:
        return _lines(self.log)

    def queries(self) -> list[str]:
        return _lines(self.dns_log)

    def url(self, path: str = "/", host: str | None = None) -> str:
        return f"http://{host or self.addr}:{self.port}{path}"


@pytest.fixture(scope="module")
def internet() -> Iterator[Internet]:
    if os.geteuid() != 0 or not os.path.exists(IP):
        pytest.skip("needs root and iproute2 to build the internet stand-in namespace")
    tag = f"{os.getpid() % 10000:04d}{random.randrange(100):02d}"
    third, fourth = random.randrange(0, 256), random.randrange(0, 64) * 4
    base = f"198.18.{third}."
    ns, vh, vn = f"parism-t{tag}", f"pth{tag}", f"ptn{tag}"
    tmp = Path(tempfile.mkdtemp(prefix="parism-netlab-"))
    lab = Internet(ns, f"{base}{fourth + 2}", f"{base}{fourth + 1}", f"{base}{fourth}/30",
                   18080, tmp / "hits.log", tmp / "dns.log")
    routed = False
    # the metadata route lives in the host's own table: one lab at a time on this machine (a
    # second test run beside this one would find the route taken and fail with "File exists")
    lock = open(LOCK_PATH, "w")  # held for the fixture's whole life
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        _ip("netns", "add", ns)
        _ip("link", "add", vh, "type", "veth", "peer", "name", vn)
        _ip("link", "set", vn, "netns", ns)
        _ip("addr", "add", f"{lab.host_addr}/30", "dev", vh)
        _ip("link", "set", vh, "up")
        _ip("-n", ns, "addr", "add", f"{lab.addr}/30", "dev", vn)
        _ip("-n", ns, "link", "set", vn, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", ns, "addr", "add", f"{METADATA}/32", "dev", "lo")
        _ip("-n", ns, "route", "add", "default", "via", lab.host_addr)
        _ip("route", "add", f"{METADATA}/32", "via", lab.addr, "dev", vh)
        routed = True
        for code, args in ((SERVER, (str(lab.log), str(lab.port))), (DNS, (str(lab.dns_log),))):
            proc = subprocess.Popen([IP, "netns", "exec", ns, sys.executable, "-I", "-c", code, *args],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            lab.procs.append(proc)
            assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        yield lab
    finally:
        for proc in lab.procs:
            proc.kill()
            proc.wait(5)
        if routed:
            subprocess.run([IP, "route", "del", f"{METADATA}/32", "via", lab.addr, "dev", vh], capture_output=True)
        subprocess.run([IP, "link", "del", vh], capture_output=True)  # removes the peer too
        subprocess.run([IP, "netns", "del", ns], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
        lock.close()  # releases the flock


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except FileNotFoundError:
        return []


@dataclass
class Loopback:
    """An HTTP listener on the host's 127.0.0.1 that records each request line."""

    port: int
    hits: list[str]

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@contextlib.contextmanager
def recording_listener(answer: bytes) -> Iterator[tuple[int, list[str]]]:
    """A TCP listener on the host's 127.0.0.1: records each connection's first request line,
    answers ``answer`` and closes. Yields (port, lines)."""
    srv = socket.create_server(("127.0.0.1", 0))
    lines: list[str] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                try:
                    while b"\r\n" not in data:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    lines.append(data.split(b"\r\n", 1)[0].decode("latin-1"))
                    conn.sendall(answer)
                except OSError:
                    continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield srv.getsockname()[1], lines
    finally:
        srv.close()
        thread.join(5)


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    with recording_listener(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nloopback\n") as (port, hits):
        yield Loopback(port, hits)


def settle() -> None:
    """Give a listener's log a moment (the server writes after answering)."""
    time.sleep(0.05)
