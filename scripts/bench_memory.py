#!/usr/bin/env python3
"""Memory of the MCP server under large inputs and outputs (issue 12 item 3), measured with psutil
from the server's RSS right after ``initialize`` (and one warm-up call), printed as ratios:

    .venv/bin/python scripts/bench_memory.py output     # one 64 MiB answer (rev of a 64 MiB file)
    .venv/bin/python scripts/bench_memory.py refused    # 24 refused 10 MB requests, 200 small calls
    .venv/bin/python scripts/bench_memory.py bytes [MiB] # cat of NUL, random and invalid-UTF-8 floods
                                                         # (64 MiB each by default), one at a time

bytes: for each class the answer line's size and the server's peak RSS above its start (the
kernel's VmHWM, reset before the call), both as multiples of the output (issue 27: <= 3x each).

Targets (issue 12): a call's peak RSS at most ~3x its output; RSS back within 50 MB of its start.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
MIB = 1 << 20
CONFIG = """[guard]
allowed_commands = ["ls", "rev", "cat"]
max_output_bytes = 0
timeout_ms = 300000
[guard.command_policies.rev]
positionals = "any"
[guard.command_policies.cat]
positionals = "any"
"""


class Server:
    def __init__(self, work: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "parism", "serve", "--config", str(work / "c.toml")], cwd=work,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={"PYTHONPATH": str(REPO), "HOME": str(work), "PATH": os.environ["PATH"]})
        self.ps = psutil.Process(self.proc.pid)
        self.peak = 0
        self._stop = False
        self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.tool("run", {"cmd": "ls"})
        time.sleep(1.5)  # the engine is built and warm
        self.start = self.rss()
        threading.Thread(target=self._watch, daemon=True).start()

    def rss(self) -> int:
        return self.ps.memory_info().rss

    def _watch(self) -> None:
        while not self._stop:
            try:
                self.peak = max(self.peak, self.rss())
            except psutil.Error:
                return
            time.sleep(0.005)

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, method: str, params: dict) -> int:
        self.send({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        assert self.proc.stdout is not None
        return len(self.proc.stdout.readline())

    def tool(self, name: str, arguments: dict) -> int:
        return self.call("tools/call", {"name": name, "arguments": arguments})

    def close(self) -> None:
        self._stop = True
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def output(work: Path) -> None:
    big = work / "big.txt"
    big.write_bytes(base64.encodebytes(os.urandom(48 * MIB))[: 64 * MIB])
    server = Server(work)
    answer = server.tool("run", {"cmd": "rev", "args": [str(big)]})
    time.sleep(1)
    after = server.rss()
    server.close()
    print(f"64 MiB output: answer {answer} bytes; start {server.start // MIB} MB, peak {server.peak // MIB} MB "
          f"(peak-start = {(server.peak - server.start) / (64 * MIB):.2f}x the output, target <= 3), "
          f"after {after // MIB} MB (delta {(after - server.start) // MIB} MB, target <= 50)")


def refused(work: Path) -> None:
    server = Server(work)
    for _ in range(24):
        answer = server.tool("run", {"cmd": "x" * 10_000_000})
    after_big = server.rss()
    for _ in range(200):
        server.tool("run", {"cmd": "ls"})
    time.sleep(1)
    after = server.rss()
    server.close()
    print(f"24 refused 10 MB requests: answer {answer} bytes; start {server.start // MIB} MB, after them "
          f"{after_big // MIB} MB, after 200 small calls {after // MIB} MB "
          f"(delta {(after - server.start) // MIB} MB, target <= 50)")


def high_water(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def flood(kind: str, size: int) -> bytes:
    if kind == "nul":
        return bytes(size)
    if kind == "random":
        return os.urandom(size)
    block = bytes(b | 0x80 for b in os.urandom(64 * 1024))  # 0x80-0xFF only: invalid UTF-8 throughout
    return block * (size // len(block))


def byte_classes(work: Path, mib: int = 64) -> None:
    size = mib * MIB
    for kind in ("nul", "random", "invalid"):
        path = work / f"{kind}.bin"
        path.write_bytes(flood(kind, size))
        path.chmod(0o644)
        server = Server(work)
        Path(f"/proc/{server.proc.pid}/clear_refs").write_text("5")
        answer = server.tool("run", {"cmd": "cat", "args": [str(path)]})
        peak = high_water(server.proc.pid)
        server.close()
        path.unlink()
        print(f"{kind:8s} {mib} MiB: answer {answer / size:.2f}x the output ({answer} bytes), "
              f"peak RSS {(peak - server.start) / size:.2f}x above the start (start {server.start // MIB} MB, "
              f"VmHWM {peak // MIB} MB)", flush=True)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="parism-mem-") as tmp:
        work = Path(tmp)
        (work / "c.toml").write_text(CONFIG)
        mode = sys.argv[1] if len(sys.argv) > 1 else "output"
        if mode == "bytes":
            byte_classes(work, *(int(a) for a in sys.argv[2:3]))
        else:
            {"output": output, "refused": refused}[mode](work)
