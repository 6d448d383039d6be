#!/usr/bin/env python3
"""Where one `tools/call run` spends its time inside the server: a timeline, per stage.

Starts `parism serve` with a few functions wrapped to write a monotonic timestamp (the clock is
shared by both processes), drives it with the SDK's ClientSession, and prints the median time
of each mark after the client sent the request:

  read      the transport has read and checked the line        (parism/server/jsonrpc.py read)
  run_in    the engine's call began (guard next)                (Engine._run)
  call_in   the SDK has dispatched the request to the handler   (mcp_server call_tool → tools.call)
  run_out   the engine's envelope is ready
  woke      the handler has the envelope (early start: Started.result)
  tr_in/out the CallToolResult is built                         (tools.tool_result)
  write_in  the writer has the SDK's answer                     (stdio._send)
  write_out the answer is on the wire
  done      the client has the validated result

    .venv/bin/python scripts/trace_call.py ls|ps|git [--calls 40] [--gap 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cpustat import CpuWindow

ROOT = Path(__file__).resolve().parent.parent


def _serve(log_path: str, config: str) -> int:
    """The server, with its stages marked (runs in the spawned process)."""
    sys.path.insert(0, str(ROOT))
    import parism.engine as engine
    import parism.server.early as early
    import parism.server.jsonrpc as jsonrpc
    import parism.server.stdio as stdio
    import parism.server.tools as tools
    import parism.server.app as server

    log = open(log_path, "a", buffering=1)

    def mark(name: str) -> None:
        log.write(f"{name} {time.monotonic():.6f}\n")

    def around(owner: object, attr: str, before: str | None, after: str | None) -> None:
        fn = getattr(owner, attr)
        if asyncio.iscoroutinefunction(fn):
            async def wrapped(*a, **k):  # type: ignore[no-untyped-def]
                if before:
                    mark(before)
                out = await fn(*a, **k)
                if after:
                    mark(after)
                return out
        else:
            def wrapped(*a, **k):  # type: ignore[no-untyped-def]
                if before:
                    mark(before)
                out = fn(*a, **k)
                if after:
                    mark(after)
                return out
        setattr(owner, attr, wrapped)

    around(jsonrpc, "read", None, "read")
    stdio.jsonrpc.read = jsonrpc.read
    around(engine.Engine, "_run", "run_in", "run_out")
    around(tools, "call", "call_in", None)
    server.call = tools.call
    around(early.EarlyCall, "result", None, "woke")
    around(tools, "tool_result", "tr_in", "tr_out")
    around(stdio, "_send", "write_in", "write_out")
    from parism.cli.main import main
    sys.argv = ["parism", "serve", "--config", config]
    return main()


async def _drive(which: str, calls: int, gap: float) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    work = Path(tempfile.mkdtemp(prefix="parism-trace-"))
    work.chmod(0o755)
    repo = work / "repo"
    if which == "git":
        repo.mkdir()
        script = "git init -q . && for i in $(seq 60); do echo $i > f; git add f; " \
                 "git -c user.name=a -c user.email=a@b commit -qm c$i; done"
        subprocess.run(script, shell=True, cwd=repo, check=True)
        time.sleep(2.2)  # the guard keeps git's reading only of files older than 2.1 s (gitcache)
    cmd, args, cwd = {"ls": ("ls", ["-la", "/usr/bin"], str(work)), "ps": ("ps", ["aux"], str(work)),
                      "git": ("git", ["log", "--oneline", "-n", "50"], str(repo))}[which]
    config = work / "parism.toml"
    config.write_text(f'[guard]\nallowed_paths = ["{work}", "/usr/bin"]\nmax_output_bytes = 1048576\n')
    log_path = work / "trace.log"
    log_path.write_text("")
    params = StdioServerParameters(command=sys.executable, args=[__file__, "--serve", str(log_path), str(config)],
                                   env=dict(os.environ))
    sent: list[tuple[float, float]] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        await asyncio.sleep(0.5)  # the engine is built after the tool list
        window = CpuWindow()
        for _ in range(calls):
            t0 = time.monotonic()
            await session.call_tool("run", {"cmd": cmd, "args": args, "cwd": cwd})
            sent.append((t0, time.monotonic()))
            await asyncio.sleep(gap)
        cpu = window.summary()
    per_call: list[dict[str, float]] = []
    for line in log_path.read_text().splitlines():
        name, stamp = line.split()
        if name == "read":
            per_call.append({})
        if per_call:
            per_call[-1].setdefault(name, float(stamp))
    per_call = [c for c in per_call if "run_in" in c][-len(sent):]
    rows = [{**{k: (v - t0) * 1e3 for k, v in c.items()}, "done": (t1 - t0) * 1e3}
            for (t0, t1), c in zip(sent, per_call)][5:]
    names = sorted({k for r in rows for k in r}, key=lambda k: statistics.median(r[k] for r in rows if k in r))
    print(f"{which}: {len(rows)} calls, ms after the client sent the request (medians)")
    for name in names:
        print(f"  {name:<10} {statistics.median(r[name] for r in rows if name in r):8.3f}")
    print(cpu)


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        sys.exit(_serve(sys.argv[2], sys.argv[3]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["ls", "ps", "git"])
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--gap", type=float, default=0.05, help="seconds between calls")
    ns = ap.parse_args()
    asyncio.run(_drive(ns.command, ns.calls, ns.gap))


if __name__ == "__main__":
    main()
