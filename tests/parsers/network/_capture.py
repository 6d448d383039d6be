"""Capture real fixtures for ps, kill, ping, curl, netstat, ss, lsof and dig on this machine.

Run: ``.venv/bin/python -m tests.parsers.network._capture [cmd ...]`` (as root, Debian 12 with procps,
iputils-ping, busybox, curl, net-tools, iproute2, lsof and dnsutils installed).

Each fixture is ``tests/fixtures/linux/<cmd>/<name>.out`` plus ``<name>.json`` holding the argv
and the expected values.  Expected values never come from the parser: they come from the
processes, sockets and HTTP server this script sets up itself (pids from ``Popen``, ports it bound,
headers it sends), from ``/proc`` and ``psutil``, from Python's ``signal`` module and from the
resolver (``socket.getaddrinfo``).  Outputs are limited to this script's own processes and
sockets where the command allows it, so no unrelated host data lands in the repository.
"""

from __future__ import annotations

from typing import Any

import http.server
import ipaddress
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "linux"
ENV = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "TZ": "UTC"}
TCP_PORT, UDP_PORT, HTTP_PORT = 47811, 47812, 47813
ONLY: set[str] = set(sys.argv[1:])  # capture only these commands (default: all)


def run(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=60).stdout


def save(cmd: str, name: str, argv: list[str], expected: dict[str, Any], note: str,
         keep_pids: tuple[int, ...] = ()) -> None:
    """Write one fixture; ``keep_pids`` keeps only the header and the rows of those processes."""
    if ONLY and cmd not in ONLY:
        return
    d = ROOT / cmd
    d.mkdir(parents=True, exist_ok=True)
    text = run(argv)
    if keep_pids:
        lines = text.splitlines()
        text = "\n".join([lines[0]] + [ln for ln in lines[1:] if ln.split()[0] in {str(p) for p in keep_pids}]) + "\n"
    (d / f"{name}.out").write_text(text)
    (d / f"{name}.json").write_text(json.dumps(
        {"argv": argv, "note": note, "expected": expected}, indent=2, ensure_ascii=False) + "\n")


class _Handler(http.server.BaseHTTPRequestHandler):
    """/start → 302 → /final; /final → 200 with two Set-Cookie lines and a custom header."""

    protocol_version = "HTTP/1.1"

    def do_HEAD(self) -> None:  # noqa: N802 - http.server API
        if self.path == "/start":
            self.send_response(302, "Found")
            self.send_header("Location", "/final")
            self.send_header("Content-Length", "0")
        else:
            self.send_response(200, "OK")
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Set-Cookie", "a=1; Path=/")
            self.send_header("Set-Cookie", "b=2; Path=/")
            self.send_header("X-Parism-Test", "value with  two spaces")
            self.send_header("Content-Length", "12")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _workers() -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]]:
    code = ("import socket, time;  t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1);"
            f" t.bind(('127.0.0.1', {TCP_PORT})); t.listen();"
            f" u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('127.0.0.1', {UDP_PORT}));"
            " time.sleep(120)")
    listener = subprocess.Popen([sys.executable, "-c", code])
    sleeper = subprocess.Popen(["bash", "-c", 'exec -a "my server" sleep 120'])
    time.sleep(1.0)
    return listener, sleeper


def capture_process(listener: subprocess.Popen[bytes], sleeper: subprocess.Popen[bytes]) -> None:
    pids = f"{listener.pid},{sleeper.pid}"
    expect = []
    for p in (listener, sleeper):
        proc = psutil.Process(p.pid)
        expect.append({"pid": p.pid, "ppid": proc.ppid(), "user": proc.username(),
                       "args": " ".join(proc.cmdline()), "comm": proc.name()})
    note = "pids/ppids/users/args from psutil (/proc) of the processes this script started"
    save("ps", "u-p", ["ps", "u", "-p", pids], {"processes": expect}, note)
    save("ps", "f-p", ["ps", "-f", "-p", pids], {"processes": expect}, note)
    save("ps", "o-custom", ["ps", "-o", "pid,ppid,user,stat,etime,comm,args", "-p", pids], {"processes": expect}, note)
    save("ps", "o-noheader", ["ps", "-o", "pid=,ppid=,args=", "-p", pids], {"processes": expect}, note)
    save("ps", "o-lstart", ["ps", "-o", "pid,lstart,args", "-p", pids], {"processes": expect}, note)
    save("ps", "axo", ["ps", "axo", "pid,ppid,comm"], {"processes": expect},
         note + "; BSD 'o' takes the next word as the format; only this script's rows are kept",
         keep_pids=(listener.pid, sleeper.pid))
    save("ps", "v-p", ["ps", "v", "-p", pids], {"processes": expect}, note + "; BSD v format (MAJFL TRS DRS)")
    save("ps", "O-lstart", ["ps", "-O", "lstart", "-p", pids], {"processes": expect},
         note + "; -O adds lstart (five words) to the default columns")
    save("ps", "busybox", ["busybox", "ps"], {"processes": expect},
         "busybox ps (real output); only the header and this script's two processes are kept (the other rows"
         " are unrelated host processes). busybox shows {comm} before args when argv[0] differs",
         keep_pids=(listener.pid, sleeper.pid))
    sigs = sorted((s.value, s.name[3:]) for s in signal.Signals if s.name.startswith("SIG") and not s.name.startswith("SIGRT"))
    save("kill", "l", ["kill", "-l"], {"names": [n for _, n in sigs]},
         "names from Python's signal module (SIGIOT/SIGCLD/SIGPOLL aliases differ: compared as a subset)")
    save("kill", "L", ["kill", "-L"], {"pairs": [[v, n] for v, n in sigs]}, "number/name pairs from Python's signal module")
    save("kill", "l-9", ["kill", "-l", "9"], {"names": ["KILL"]}, "signal 9 is KILL")


def capture_network(listener: subprocess.Popen[bytes]) -> None:
    sock = {"tcp_port": TCP_PORT, "udp_port": UDP_PORT, "pid": listener.pid, "program": "python3"}
    note = "the listener this script started: TCP 127.0.0.1:47811 LISTEN and UDP 127.0.0.1:47812"
    save("netstat", "tuln", ["netstat", "-tuln"], sock, note)
    save("netstat", "tulpn", ["netstat", "-tulpn"], sock, note)
    save("netstat", "rn", ["netstat", "-rn"], {"routes": _routes()}, "routes from /proc/net/route")
    save("netstat", "g", ["netstat", "-g"], {"ipv6_groups": _groups6()}, "IPv6 memberships from /proc/net/igmp6")
    save("netstat", "rn6", ["netstat", "-rn6"], {"routes": _routes6()}, "destinations from /proc/net/ipv6_route")
    up = sorted(n for n, st in psutil.net_if_stats().items() if st.isup)
    save("netstat", "i", ["netstat", "-i"], {"interfaces": up}, "names of the interfaces that are up, from psutil")
    save("netstat", "tanpo", ["netstat", "-tanpo"], sock, note + "; -o adds the Timer column after the program")
    save("ss", "H-tln", ["ss", "-Htln"], sock, note + "; -H: no header line")
    save("ss", "tuln", ["ss", "-tuln"], sock, note)
    save("ss", "tulpn", ["ss", "-tulpn"], sock, note)
    save("ss", "tn-nonetid", ["ss", "-tn", "state", "listening"], sock, note + " (single family: no Netid column)")
    save("ss", "xa", ["ss", "-xa"], {"unix": True}, "UNIX sockets only; row count checked by hand")
    save("lsof", "p", ["lsof", "-n", "-P", "-p", str(listener.pid)], sock, note)
    save("lsof", "i", ["lsof", "-n", "-P", f"-i:{TCP_PORT}"], sock, note)


def _routes() -> list[str]:
    out = []
    for line in Path("/proc/net/route").read_text().splitlines()[1:]:
        f = line.split()
        dest = socket.inet_ntoa(int(f[1], 16).to_bytes(4, "little"))
        out.append(dest)
    return out


def _routes6() -> list[str]:
    out = []
    for line in Path("/proc/net/ipv6_route").read_text().splitlines():
        f = line.split()
        addr = str(ipaddress.IPv6Address(bytes.fromhex(f[0])))
        out.append(f"{addr}/{int(f[1], 16)}")
    return out


def _groups6() -> list[list[str]]:
    out = []
    for line in Path("/proc/net/igmp6").read_text().splitlines():
        f = line.split()
        out.append([f[1], str(ipaddress.IPv6Address(bytes.fromhex(f[2])))])
    return out


def capture_ping_curl_dig() -> None:
    save("ping", "c3", ["ping", "-c", "3", "127.0.0.1"], {"target": "127.0.0.1", "transmitted": 3, "seqs": [1, 2, 3]},
         "3 echo requests to loopback: all answered")
    save("ping", "c2-D", ["ping", "-c", "2", "-D", "127.0.0.1"], {"target": "127.0.0.1", "transmitted": 2, "seqs": [1, 2]},
         "-D prefixes each reply with a [unix time] stamp")
    save("ping", "busybox", ["busybox", "ping", "-c", "2", "127.0.0.1"],
         {"target": "127.0.0.1", "transmitted": 2, "seqs": [0, 1]}, "busybox numbers replies from seq=0")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", HTTP_PORT), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{HTTP_PORT}"
    headers = {"content-type": "text/plain; charset=utf-8", "set-cookie": "a=1; Path=/, b=2; Path=/",
               "x-parism-test": "value with  two spaces", "content-length": "12"}
    save("curl", "sI", ["curl", "-sI", f"{base}/final"], {"statuses": [200], "headers": headers},
         "headers sent by this script's HTTP server")
    save("curl", "sIL-redirect", ["curl", "-sIL", f"{base}/start"], {"statuses": [302, 200], "headers": headers},
         "302 to /final, then 200 with the same headers as sI")
    server.shutdown()
    save("curl", "sI-http2", ["curl", "-sI", "https://pypi.org/simple/"], {"statuses": [200], "http_version": "2"},
         "real HTTP/2 response (no reason phrase); status and version checked by hand against the raw text")
    addr = sorted({ai[4][0] for ai in socket.getaddrinfo("pypi.org", 80, socket.AF_INET)})
    dns = {"name": "pypi.org", "addresses": addr}
    note = "addresses from socket.getaddrinfo (the same resolver)"
    save("dig", "a", ["dig", "pypi.org"], dns, note)
    save("dig", "short", ["dig", "+short", "pypi.org"], dns, note)
    save("dig", "noall-answer", ["dig", "+noall", "+answer", "pypi.org"], dns, note)
    save("dig", "two", ["dig", "pypi.org", "files.pythonhosted.org"], dns, note + "; two queries")


def main() -> None:
    listener, sleeper = _workers()
    try:
        capture_process(listener, sleeper)
        capture_network(listener)
        capture_ping_curl_dig()
    finally:
        listener.kill()
        sleeper.kill()


if __name__ == "__main__":
    main()
