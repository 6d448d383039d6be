#!/usr/bin/env python3
"""What Parism's MCP layer costs per ``tools/call run``, without the engine's own work.

Each server under test is the real stack (``parism.server.app._serve``: the stdio transport, the
SDK session, the tool table, the writer) spawned over a real stdio pipe, with a stub engine that
answers each command with the envelope the real engine gave it (recorded once, pickled, so the
Python objects are the engine's own).  The stub notes the server's CPU (``time.process_time``,
all threads) at each call; the difference between two consecutive calls of one block is one
whole request cycle of the server: the previous answer's result, serialisation and write, then
reading the next line, the SDK's dispatch, the options model and the tool's call.

Servers are driven alternately (blocks of ``--block`` calls, shuffled per round) so that load
drift hits them alike; ``--baseline DIR`` adds the same server from another checkout (``git
archive main | tar -x -C DIR``).  Every server's answer must be the same bytes (ids aside), or
the run stops.

    .venv/bin/python scripts/bench_mcp_layer.py [--baseline DIR] [--rounds 20] [--block 10]
        [--only ls|ps|git] [--progress-token] [--profile OUT]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cpustat import CpuWindow

REPO_ROOT = Path(__file__).resolve().parent.parent
WORK = Path(tempfile.gettempdir()) / "parism-bench-mcp-layer"
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "mcp", "version": "0.1.0"}}


@dataclass(frozen=True)
class Command:
    label: str
    argv: list[str]
    cwd: str


def commands(repo: Path) -> list[Command]:
    return [Command("ls", ["ls", "-la", "/usr/bin"], str(WORK)),
            Command("ps", ["ps", "aux"], str(WORK)),
            Command("git", ["git", "log", "--oneline", "-n", "50"], str(repo))]


def setup() -> tuple[Path, Path]:
    """The work directory (a private HOME), its config and a repository with 60 commits."""
    repo = WORK / "repo"
    cfg = WORK / "parism.toml"
    if not (repo / ".git").exists():
        repo.mkdir(parents=True)
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@e", "GIT_COMMITTER_NAME": "b",
               "GIT_COMMITTER_EMAIL": "b@e", "GIT_CONFIG_GLOBAL": "/dev/null"}
        subprocess.run(["git", "init", "-q"], cwd=repo, env=env, check=True)
        for i in range(60):
            (repo / "file.txt").write_text(f"line {i}\n")
            subprocess.run(["git", "add", "file.txt"], cwd=repo, env=env, check=True)
            subprocess.run(["git", "commit", "-q", "-m", f"commit {i}"], cwd=repo, env=env, check=True)
    WORK.chmod(0o755)
    cfg.write_text(f'[guard]\nallowed_paths = ["{WORK}", "{repo}", "/usr/bin"]\nmax_output_bytes = 1048576\n')
    return cfg, repo


def child_env(checkout: Path) -> dict[str, str]:
    return {"HOME": str(WORK), "PYTHONPATH": str(checkout), "PATH": os.environ.get("PATH", "")}


# -- in the child processes -------------------------------------------------------------------

def record(cfg: str, out: str, repo: str) -> None:
    """The real engine's envelope for each command, pickled (the stub's answers)."""
    import anyio

    import parism

    engine = parism.create_engine(cfg)

    async def each() -> dict[tuple[str, ...], Any]:
        got = {}
        for c in commands(Path(repo)):
            env = await engine.arun(c.argv[0], c.argv[1:], c.cwd)
            if not env.ok:
                raise SystemExit(f"{c.argv}: {env.failure}")
            got[tuple(c.argv)] = env
        return got

    Path(out).write_bytes(pickle.dumps(anyio.run(each)))


class StubEngine:
    """Answers with the recorded envelope and notes the server's CPU at each call."""

    def __init__(self, answers: dict[tuple[str, ...], Any]) -> None:
        self.answers = answers
        self.marks: list[float] = []

    async def acall(self, opts: Any) -> Any:
        import anyio.lowlevel

        self.marks.append(time.process_time())
        await anyio.lowlevel.checkpoint()  # the real engine awaits a worker thread
        return self.answers[(opts.cmd, *opts.args)]

    def handler(self, opts: Any) -> Any:
        """The early start's entry (parism/server/early.py): called in a worker with the token."""
        def work(token: Any) -> Any:
            self.marks.append(time.process_time())
            return self.answers[(opts.cmd, *opts.args)]
        return work


def serve(cfg: str, answers: str, marks_out: str, profile_out: str | None) -> None:
    """``parism serve`` with the stub engine; the CPU marks are written once stdin closes."""
    gc.disable()  # as parism/cli/serve.py; _serve's warm-up turns it back on
    import anyio

    import parism
    from parism.config import load_config
    from parism.server import host
    from parism.server.app import LazyEngine, _serve, build_server

    host.bound_heap()
    stub = StubEngine(pickle.loads(Path(answers).read_bytes()))
    engine = LazyEngine(load_config(cfg), stub)  # type: ignore[arg-type]
    server = build_server(engine, parism.__version__)
    if profile_out:
        import yappi

        yappi.set_clock_type("cpu")
        yappi.start()
    anyio.run(_serve, server, engine)
    if profile_out:
        yappi.stop()
        yappi.get_func_stats().save(profile_out, type="pstat")
    Path(marks_out).write_text(json.dumps({"parism": parism.__file__, "marks": stub.marks}))


# -- the driver -------------------------------------------------------------------------------

@dataclass
class Server:
    """One spawned server, driven with raw JSON-RPC lines."""

    name: str
    checkout: Path
    proc: subprocess.Popen[bytes]
    marks_path: Path
    calls: list[tuple[str, int]] = field(default_factory=list)  # (command, block) per call
    next_id: int = 1
    answers: dict[str, bytes] = field(default_factory=dict)

    def request(self, method: str, params: dict[str, Any] | None = None) -> bytes:
        rid = self.next_id
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"{self.name}: the server ended")
            if f'"id":{rid}'.encode() in line[:40] or line.endswith(f'"id":{rid}}}\n'.encode()):
                return line.replace(f'"id":{rid}'.encode(), b'"id":0', 1)

    def call(self, c: Command, block: int, token: bool) -> None:
        params: dict[str, Any] = {"name": "run", "arguments": {"cmd": c.argv[0], "args": c.argv[1:], "cwd": c.cwd}}
        if token:
            params["_meta"] = {"progressToken": self.next_id}
        answer = self.request("tools/call", params)
        self.calls.append((c.label, block))
        self.answers.setdefault(c.label, answer)

    def close(self) -> list[float]:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(30)
        got = json.loads(self.marks_path.read_text())
        if not Path(got["parism"]).is_relative_to(self.checkout):
            raise SystemExit(f"{self.name}: served {got['parism']}, not from {self.checkout}")
        return got["marks"]


def spawn(name: str, checkout: Path, cfg: Path, answers: Path, profile: str | None) -> Server:
    marks = WORK / f"marks-{name}.json"
    marks.unlink(missing_ok=True)
    argv = [sys.executable, str(Path(__file__).resolve()), "serve", str(cfg), str(answers), str(marks),
            profile or ""]
    proc = subprocess.Popen(argv, cwd=WORK, env=child_env(checkout), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    server = Server(name, checkout, proc, marks)
    server.request("initialize", INIT)
    assert proc.stdin
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    server.request("tools/list")
    return server


def per_call_ms(server: Server, marks: list[float]) -> dict[str, list[float]]:
    """CPU ms of each call that follows a call of the same block (the first of a block spans
    the other servers' blocks)."""
    out: dict[str, list[float]] = {}
    for i in range(1, len(marks)):
        (label, block), (_, prev_block) = server.calls[i], server.calls[i - 1]
        if block == prev_block:
            out.setdefault(label, []).append((marks[i] - marks[i - 1]) * 1000)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, help="another checkout served the same way, in the same run")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--block", type=int, default=10, help="calls per server per round")
    ap.add_argument("--only", choices=["ls", "ps", "git"])
    ap.add_argument("--progress-token", action="store_true", help="every call carries a progressToken")
    ap.add_argument("--record", action="store_true", help="record the envelopes again")
    ap.add_argument("--profile", help="yappi (CPU clock, all threads) of this checkout's server, pstat file")
    ns = ap.parse_args()
    WORK.mkdir(exist_ok=True)
    cfg, repo = setup()
    answers = WORK / "envelopes.pkl"
    if ns.record or not answers.exists():
        subprocess.run([sys.executable, __file__, "record", str(cfg), str(answers), str(repo)],
                       cwd=WORK, env=child_env(REPO_ROOT), check=True)
    cmds = [c for c in commands(repo) if ns.only in (None, c.label)]
    servers = [spawn("after", REPO_ROOT, cfg, answers, ns.profile)]
    if ns.baseline:
        if not (ns.baseline / "parism" / "__init__.py").exists():
            raise SystemExit(f"{ns.baseline}: not a checkout")
        servers.append(spawn("before", ns.baseline.resolve(), cfg, answers, None))
    for c in cmds:  # warm-up: first calls build caches
        for s in servers:
            for _ in range(5):
                s.call(c, -1, ns.progress_token)
    block = 0
    window = CpuWindow()
    for _ in range(ns.rounds):
        for c in cmds:
            for s in random.sample(servers, len(servers)):
                block += 1
                for _ in range(ns.block):
                    s.call(c, block, ns.progress_token)
    for c in cmds:
        shapes = {s.answers[c.label] for s in servers}
        if len(shapes) != 1:
            raise SystemExit(f"{c.label}: the servers' answers differ")
    cpu = window.summary()
    results = {s.name: per_call_ms(s, s.close()) for s in servers}
    print(f"server CPU per tools/call run, ms (median of {ns.rounds * (ns.block - 1)} calls; "
          f"load {os.getloadavg()[0]:.2f}; progressToken {'yes' if ns.progress_token else 'no'})")
    print(f"{'command':8}{'answer':>10}" + "".join(f"{s.name:>10}" for s in servers)
          + ("   after/before" if ns.baseline else ""))
    for c in cmds:
        med = [statistics.median(results[s.name][c.label]) for s in servers]
        size = len(servers[0].answers[c.label])
        row = f"{c.label:8}{size:>9}B" + "".join(f"{m:>10.3f}" for m in med)
        if ns.baseline:
            row += f"   {med[0] / med[1]:.2f} ({med[0] - med[1]:+.3f})"
        print(row)
    print(cpu)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "record":
        record(*sys.argv[2:5])
    elif len(sys.argv) > 1 and sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] or None)
    else:
        sys.exit(main())
