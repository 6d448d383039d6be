#!/usr/bin/env python3
"""Where one engine call spends its time, stage by stage, in-process (no MCP), against a bare
``subprocess.run`` of the same argv in the same rounds.

Wraps the engine's stages with timers and prints the median wall and thread-CPU ms of each:

  prepare       config check, guard, binary lookup, sandbox plan/launcher
  execute       the sandboxed run, hand-over to the helper's exit report (bare: the same command)
    first_out   … the first output read, after the hand-over
    eof         … both pipes at EOF
    exit_report … the helper's wait status read (the gap after eof: the command's exit, the
                  helper's wake-up and report)
  redact        decoding and masking
  parse         the parser (registry.parse)
  shape         cut, lean/compact
  run_envelope  the envelope (parse and shape included)
  to_wire       the wire dict (Envelope.to_wire)

    .venv/bin/python scripts/bench_stages.py ls|ps|git [--calls 60] [--gap 0.05]

Thread CPU is the calling thread's: the helper, bwrap and the command run in other processes.
"""

from __future__ import annotations

import argparse
import collections
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_overhead import make_repo, write_parism_config
from cpustat import CpuWindow

ROOT = Path(__file__).resolve().parent.parent
Marks = dict[str, list[tuple[float, float]]]


def timed(owner: Any, attr: str, label: str, marks: Marks) -> None:
    fn = getattr(owner, attr)

    def wrapper(*a: Any, **k: Any) -> Any:
        t, c = time.perf_counter(), time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            marks[label].append(((time.perf_counter() - t) * 1e3, (time.thread_time() - c) * 1e3))

    setattr(owner, attr, wrapper)


def executor_marks(executor: Any, engine_mod: Any, marks: Marks) -> None:
    """first_out / eof / exit_report, in ms after the hand-over (wall only)."""
    state: dict[str, Any] = {}
    run, read_ready, wait_leader = engine_mod.execute, executor._read_ready, executor._wait_leader

    def note(name: str) -> None:
        if "t0" in state:  # only the engine's own run (the guard runs git through the executor too)
            marks[name].append(((time.perf_counter() - state["t0"]) * 1e3, 0.0))

    def execute(spec: Any, launcher: Any = None, *a: Any, **k: Any) -> Any:
        start = launcher.start

        def started(s: Any) -> Any:
            out = start(s)
            state["t0"], state["first"] = time.perf_counter(), True
            return out

        launcher.start = started
        try:
            return run(spec, launcher, *a, **k)
        finally:
            state.clear()

    def ready(*a: Any) -> int:
        n = read_ready(*a)
        if n and state.pop("first", False):
            note("  first_out")
        return n

    def leader(*a: Any) -> Any:
        note("  eof")
        out = wait_leader(*a)
        note("  exit_report")
        return out

    engine_mod.execute, executor._read_ready, executor._wait_leader = execute, ready, leader


def commands(work: Path) -> tuple[Path, dict[str, tuple[list[str], str]]]:
    """bench_overhead's repository and configuration, and its three commands."""
    repo = make_repo(work)
    time.sleep(2.2)  # git's reading of a repository is kept only for files older than 2 s
    cfg = write_parism_config(work, repo)
    return cfg, {"ls": (["ls", "-la", "/usr/bin"], str(work)), "ps": (["ps", "aux"], str(work)),
                 "git": (["git", "log", "--oneline", "-n", "50"], str(repo))}


def bare(argv: list[str], cwd: str) -> Callable[[], None]:
    return lambda: subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["ls", "ps", "git"])
    ap.add_argument("--calls", type=int, default=60)
    ap.add_argument("--gap", type=float, default=0.05, help="seconds between calls")
    ns = ap.parse_args()
    if ns.calls < 1:
        ap.error("--calls must be at least 1")
    sys.path.insert(0, str(ROOT))
    import parism.engine as engine_mod
    import parism.run.executor as executor
    import parism.pipeline as pipeline
    from parism.config import load_config
    from parism.server.app import GEN0_THRESHOLD
    from parism.parsers import registry

    with tempfile.TemporaryDirectory(prefix="parism-stages-") as tmp:
        work = Path(tmp).resolve()
        work.chmod(0o755)  # the sandbox's unprivileged user mounts it
        cfg, table = commands(work)
        argv, cwd = table[ns.command]
        engine = engine_mod.Engine(load_config(str(cfg), cwd=cwd))
        gc.freeze()  # what the server does once its engine is built (parism/server/app.py _warm_up)
        gc.set_threshold(GEN0_THRESHOLD, *gc.get_threshold()[1:])
        marks: Marks = collections.defaultdict(list)
        for owner, attr, label in ((engine, "_prepare", "prepare"), (engine_mod, "execute", "execute"),
                                   (engine.finisher, "redact", "redact"), (registry, "parse", "parse"),
                                   (pipeline, "shape", "shape"), (engine.finisher, "run_envelope", "run_envelope")):
            timed(owner, attr, label, marks)
        executor_marks(executor, engine_mod, marks)
        run_bare = bare(argv, cwd)
        for _ in range(5):  # warm-up: the sandbox pool, caches
            engine.run(argv[0], argv[1:], cwd=cwd)
            run_bare()
        marks.clear()
        window = CpuWindow()
        for _ in range(ns.calls):
            t, c = time.perf_counter(), time.thread_time()
            env = engine.run(argv[0], argv[1:], cwd=cwd)
            marks["total"].append(((time.perf_counter() - t) * 1e3, (time.thread_time() - c) * 1e3))
            t = time.perf_counter()
            env.to_wire()
            marks["to_wire"].append(((time.perf_counter() - t) * 1e3, 0.0))
            time.sleep(ns.gap)
            t = time.perf_counter()
            run_bare()
            marks["bare run"].append(((time.perf_counter() - t) * 1e3, 0.0))
            time.sleep(ns.gap)
        cpu = window.summary()
        if not env.ok:
            raise SystemExit(f"the call failed: {env.failure}")
    print(f"{' '.join(argv)}: {ns.calls} calls, {ns.gap * 1e3:.0f} ms apart; median ms (wall / thread CPU)")
    order = ["bare run", "prepare", "execute", "  first_out", "  eof", "  exit_report", "redact", "parse",
             "shape", "run_envelope", "to_wire", "total"]
    for name in order:
        rows = marks.get(name)
        if rows:
            cpu_ms = statistics.median(r[1] for r in rows)
            print(f"  {name:<14}{statistics.median(r[0] for r in rows):8.2f}"
                  + (f"  {cpu_ms:6.2f}" if cpu_ms else ""))
    print(cpu)


if __name__ == "__main__":
    main()
