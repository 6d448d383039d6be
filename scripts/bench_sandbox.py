#!/usr/bin/env python3
"""What the sandbox costs per call: rows for scripts/bench_overhead.py, plus a quick mode.

Variants, each a Parism engine in this process running the same argv:

  sbx-off      sandbox.mode = "off" (guard only, direct spawn)
  sbx-pooled   sandbox on, pre-started sandboxes (the default)
  sbx-cold     sandbox on, no pool: every call starts bwrap and the helper

Default (quick) mode: calls back to back in one process, interleaved off → pooled → cold, for
`ls -la /usr/bin`; prints median/p95 per variant, pooled − off (target ≤ 1.5 ms at the median)
and the pool hit rate. Then a burst of pooled calls with no gap at all, to show what happens
when calls come faster than the pool refills.

``--full`` adds the three variants as extra rows of scripts/bench_overhead.py (its hook).

    .venv/bin/python scripts/bench_sandbox.py [--iterations 50] [--full]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
VARIANTS = {"sbx-off": "off", "sbx-pooled": "auto", "sbx-cold": "auto"}


class Engines:
    """One engine per variant, created on first use with a config allowing the call's cwd."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="parism-bench-sbx-")
        self._engines: dict[str, Any] = {}

    def get(self, variant: str, cwd: str) -> Any:
        if variant not in self._engines:
            import parism

            cfg = Path(self._tmp.name) / f"{variant}.toml"
            paths = sorted({cwd, str(Path(cwd).parent), "/usr/bin"})
            # the same 1 MiB output cap as bench_overhead's own config (`ps aux` on a busy host)
            cfg.write_text(f"[guard]\nallowed_paths = {paths!r}\nmax_output_bytes = 1048576\n\n"
                           f"[sandbox]\nmode = \"{VARIANTS[variant]}\"\n".replace("'", '"'))
            engine = parism.create_engine(str(cfg))
            if variant == "sbx-cold":
                engine.sandbox.pool_size = 0
            self._engines[variant] = engine
        return self._engines[variant]

    def runner(self, variant: str) -> Any:
        async def run(argv: list[str], cwd: str) -> object:
            env = await self.get(variant, cwd).arun(argv[0], argv[1:], cwd)
            if not env.ok:
                raise RuntimeError(f"{variant}: {env.failure}")
            return env

        return run

    def check_levels(self) -> None:
        """Refuse to report figures for a sandbox that was not really there."""
        for name, engine in self._engines.items():
            level = engine.sandbox.status()["level"]
            want = "none" if name == "sbx-off" else "full"
            if (level if name != "sbx-off" else "none") != want:
                raise SystemExit(f"{name}: sandbox level is {level}, expected {want}")


def _stats(xs: list[float]) -> str:
    ordered = sorted(xs)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(xs):7.2f} ms   p95 {p95:7.2f} ms"


async def quick(iterations: int) -> None:
    engines = Engines()
    argv, cwd = ["ls", "-la", "/usr/bin"], tempfile.gettempdir()
    runners = {name: engines.runner(name) for name in VARIANTS}
    for run in runners.values():  # warm-up: probe, imports, first pool fill
        await run(argv, cwd)
    engines.check_levels()
    await asyncio.sleep(0.2)
    samples: dict[str, list[float]] = {name: [] for name in runners}
    pool = engines.get("sbx-pooled", cwd).sandbox._pool
    hits0 = pool.hits
    for _ in range(iterations):
        for name, run in runners.items():
            start = time.perf_counter()
            await run(argv, cwd)
            samples[name].append((time.perf_counter() - start) * 1000)
    print(f"{' '.join(argv)}: {iterations} back-to-back rounds, interleaved; Python "
          f"{sys.version.split()[0]}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}")
    for name, xs in samples.items():
        print(f"  {name:<11} {_stats(xs)}")
    off, pooled, cold = (statistics.median(samples[n]) for n in ("sbx-off", "sbx-pooled", "sbx-cold"))
    print(f"  pooled - off = {pooled - off:+.2f} ms (target <= +1.5); cold - off = {cold - off:+.2f} ms; "
          f"pool hits {pool.hits - hits0}/{iterations}")
    burst: list[float] = []
    hits0, misses0 = pool.hits, pool.misses
    for _ in range(iterations):
        start = time.perf_counter()
        await runners["sbx-pooled"](argv, cwd)
        burst.append((time.perf_counter() - start) * 1000)
    print(f"  burst (pooled only, no gap): {_stats(burst)}; hits {pool.hits - hits0}, "
          f"cold starts {pool.misses - misses0}")
    executor_only(engines.get("sbx-pooled", cwd), argv, cwd, iterations)


def executor_only(engine: Any, argv: list[str], cwd: str, iterations: int) -> None:
    """The same comparison below the pipeline (no guard, redaction, parsing, shaping): what
    the sandbox itself adds to one execution, without the pipeline's noise."""
    import shutil
    from parism.run.executor import ExecSpec, execute
    from parism.run.sandbox import SandboxRequest

    spec = ExecSpec(argv=[shutil.which(argv[0]) or argv[0], *argv[1:]], cwd=cwd,
                    env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}, timeout_s=30,
                    max_stdout=1 << 22, max_stderr=1 << 20)
    dec = SandboxRequest()
    sandbox = engine.sandbox
    execute(spec, sandbox.launcher(dec, spec))
    time.sleep(0.2)
    direct: list[float] = []
    pooled: list[float] = []
    pool = sandbox._pool
    hits0, misses0 = pool.hits, pool.misses
    for _ in range(iterations):
        start = time.perf_counter()
        execute(spec)
        direct.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        execute(spec, sandbox.launcher(dec, spec))
        pooled.append((time.perf_counter() - start) * 1000)
        time.sleep(0.15)  # the pool refills between calls, as it does between an agent's calls
    print(f"executor only: direct {_stats(direct)}; pooled {_stats(pooled)}; "
          f"pooled - direct = {statistics.median(pooled) - statistics.median(direct):+.2f} ms (median), "
          f"{min(pooled) - min(direct):+.2f} ms (best); pool hits {pool.hits - hits0}, "
          f"cold starts {pool.misses - misses0}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--full", action="store_true", help="run scripts/bench_overhead.py with these rows")
    ns = ap.parse_args()
    sys.path.insert(0, str(REPO_ROOT))
    if ns.full:
        sys.path.insert(0, str(REPO_ROOT / "scripts"))
        import bench_overhead

        engines = Engines()
        bench_overhead.main({name: engines.runner(name) for name in VARIANTS},
                            ["--iterations", str(ns.iterations)])
    else:
        asyncio.run(quick(ns.iterations))


if __name__ == "__main__":
    main()
