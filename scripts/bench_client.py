#!/usr/bin/env python3
"""What the MCP client spends on each answer, split by the SDK client's own steps, per server.

``bench_overhead.py`` shows that a structured answer costs more to deliver than raw text
(``delivery - floor``). This script says where, in the client, by wrapping three steps of the
SDK's client (mcp 2.x) in this process and reading this thread's CPU time around them:

  decode   the stdio reader turning the answer's line into a JSON-RPC message
           (``mcp.client.stdio._parse_line``: pydantic over jiter, every JSON value a Python object)
  result   the SDK's check of the result against the negotiated revision's surface model
           (``validate_server_result``: a validate and a ``mode="json"`` dump of the whole result)
  schema   the ``outputSchema`` check of ``structuredContent`` (``validate_tool_result``: jsonschema)
  rest     the call's remaining client CPU: the request, the streams, the tasks

Variants (servers from ``bench_overhead.py``, called in a shuffled order each round):

  parism    ``parism serve``: the lean default answer
  delivery  a minimal SDK server answering with the envelope Parism gave for the command
  floor     a minimal SDK server answering with the raw text (no ``outputSchema``)

``parism - floor`` in the client is the price of the structured answer that any server pays
at the client, whatever it does itself; ``delivery`` checks that Parism's own writer sends
nothing the client pays more for.

    .venv/bin/python scripts/bench_client.py [--calls 60] [--gap 0.03] [--only ls|ps|git]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import mcp.client.session as client_session
import mcp.client.stdio as client_stdio
from bench_overhead import (DELIVERY_SERVER, Command, bench_commands, checked, floor_params, make_repo,
                            parism_params, record_answers, script_params, session_for, write_parism_config)
from cpustat import CpuWindow
from mcp import ClientSession

ROOT = Path(__file__).resolve().parent.parent
STEPS = ("decode", "result", "schema")


class Meter:
    """Thread CPU of the wrapped steps, charged to the variant whose call is in flight (calls
    are sequential, so the one answer being read belongs to it)."""

    def __init__(self) -> None:
        self.current: str | None = None
        self.calls: dict[str, list[dict[str, float]]] = collections.defaultdict(list)
        self._call: dict[str, float] = {}

    def begin(self, variant: str | None) -> None:
        self.current, self._call = variant, collections.defaultdict(float)

    def end(self, total_s: float) -> None:
        if self.current is not None:
            self._call["total"] = total_s
            self.calls[self.current].append(dict(self._call))
        self.current = None

    def add(self, step: str, seconds: float) -> None:
        if self.current is not None:
            self._call[step] += seconds

    def wrap(self, owner: Any, attr: str, step: str) -> None:
        """Wrap ``owner.attr``; a missing name means another SDK than this script was written for."""
        fn = getattr(owner, attr, None)
        if fn is None:
            raise SystemExit(f"bench_client: the SDK has no {getattr(owner, '__name__', owner)}.{attr}; "
                             "this script measures mcp 2.x's client")
        if asyncio.iscoroutinefunction(fn):
            async def timed_async(*a: Any, **k: Any) -> Any:
                c = time.thread_time()
                try:
                    return await fn(*a, **k)
                finally:
                    self.add(step, time.thread_time() - c)
            setattr(owner, attr, timed_async)
            return

        def timed(*a: Any, **k: Any) -> Any:
            c = time.thread_time()
            try:
                if step == "decode" and a:
                    self.add("chars", len(a[0]))
                return fn(*a, **k)
            finally:
                self.add(step, time.thread_time() - c)
        setattr(owner, attr, timed)


def install(meter: Meter) -> None:
    meter.wrap(client_stdio, "_parse_line", "decode")
    meter.wrap(client_session._methods, "validate_server_result", "result")
    meter.wrap(ClientSession, "validate_tool_result", "schema")


def summary(rows: list[dict[str, float]]) -> dict[str, float]:
    """Medians in ms per call (chars: the line read), ``rest`` = total − the steps, per call."""
    out = {k: statistics.median(r.get(k, 0.0) for r in rows) * 1e3 for k in ("total", *STEPS)}
    out["rest"] = statistics.median((r["total"] - sum(r.get(k, 0.0) for k in STEPS)) for r in rows) * 1e3
    out["chars"] = statistics.median(r.get("chars", 0.0) for r in rows)
    return out


async def measure(commands: list[Command], sessions: dict[str, ClientSession], meter: Meter,
                  calls: int, gap: float) -> dict[tuple[str, str], dict[str, float]]:
    order, shuffler = list(sessions.items()), random.Random(1)
    results: dict[tuple[str, str], dict[str, float]] = {}
    for c in commands:
        arguments = {"cmd": c.argv[0], "args": c.argv[1:], "cwd": c.cwd}
        for _, session in order:  # warm-up: the sandbox pool, the validators' caches
            checked(await session.call_tool("run", arguments))
        meter.calls.clear()
        for _ in range(calls):
            shuffler.shuffle(order)
            for name, session in order:
                await asyncio.sleep(gap)
                meter.begin(name)
                c0 = time.thread_time()
                checked(await session.call_tool("run", arguments))
                meter.end(time.thread_time() - c0)
        for name in sessions:
            results[(c.label, name)] = summary(meter.calls[name])
    return results


def report(results: dict[tuple[str, str], dict[str, float]], commands: list[Command], names: list[str]) -> None:
    print("client CPU per call, medians in ms (this thread); chars: the length of the answer's line")
    print(f"\n{'command':<26}{'variant':<10}{'total':>8}{'decode':>8}{'result':>8}{'schema':>8}{'rest':>8}{'chars':>9}")
    for c in commands:
        for name in names:
            r = results[(c.label, name)]
            print(f"{c.label:<26}{name:<10}{r['total']:>8.2f}{r['decode']:>8.2f}{r['result']:>8.2f}"
                  f"{r['schema']:>8.2f}{r['rest']:>8.2f}{r['chars']:>9,.0f}")
        p, f = results[(c.label, "parism")], results[(c.label, "floor")]
        parts = ", ".join(f"{k} {p[k] - f[k]:+.2f}" for k in (*STEPS, "rest"))
        print(f"{'':<26}the structured answer at the client: parism - floor = {p['total'] - f['total']:+.2f} ms CPU "
              f"({parts}); parism / delivery = {p['total'] / results[(c.label, 'delivery')]['total']:.2f}")


async def run(calls: int, gap: float, only: str | None) -> None:
    meter = Meter()
    install(meter)
    sys.path.insert(0, str(ROOT))
    import parism

    with tempfile.TemporaryDirectory(prefix="parism-client-") as tmp:
        root = Path(tmp).resolve()
        root.chmod(0o755)  # the sandbox's unprivileged user mounts it
        repo = make_repo(root)
        time.sleep(2.2)  # git's reading of a repository is kept only for files older than 2 s
        cfg = write_parism_config(root, repo)
        commands = bench_commands(root, repo, only)
        answers = root / "answers.json"
        params: dict[str, Callable[[], Any]] = {
            "parism": lambda: parism_params(root, cfg),
            "floor": lambda: floor_params(root),
            "delivery": lambda: script_params(root, "delivery_server.py", DELIVERY_SERVER, str(answers)),
        }
        async with AsyncExitStack() as stack:
            sessions: dict[str, ClientSession] = {}
            for name, make in params.items():
                if name == "delivery":  # recorded once the others run: `ps aux` lists what it will list
                    await record_answers(parism.create_engine(str(cfg)), commands, answers)
                sessions[name] = await stack.enter_async_context(session_for(make()))
            for session in sessions.values():
                await session.list_tools()  # the output schemas the client validates with
            window = CpuWindow()
            results = await measure(commands, sessions, meter, calls, gap)
            cpu = window.summary()
    report(results, commands, list(params))
    print(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=60, help="calls per variant and command")
    ap.add_argument("--gap", type=float, default=0.03, help="seconds before each call")
    ap.add_argument("--only", choices=["ls", "ps", "git"])
    ns = ap.parse_args()
    if ns.calls < 1:
        ap.error("--calls must be at least 1")
    asyncio.run(run(ns.calls, ns.gap, ns.only))


if __name__ == "__main__":
    main()
