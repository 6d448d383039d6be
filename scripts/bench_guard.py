#!/usr/bin/env python3
"""Guard cost against argument count: ``Engine.dry_run`` with 1k, 10k and 100k arguments.

The guard must be linear in the argument bytes (issue 9: the old injection step was
O(args × data values) — 16k arguments took 13–16 s).  Each size runs the same shapes of argv —
``grep -e P … FILE`` (every pattern a data value, the worst case of the old step),
``echo W …`` (data positionals) and ``ls P …`` (path positionals resolved against the cwd) —
and prints the median wall time and the ratio to the 1k time divided by the size ratio
(≈ 1 when linear; the 10× step of a quadratic check would print ≈ 10).  A refusal for size is
timed too: it must cost nothing like a check.

    python scripts/bench_guard.py            # 1k, 10k, 100k, median of 3
    python scripts/bench_guard.py --repeat 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from parism.engine import create_engine  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
SHAPES: dict[str, Callable[[int], tuple[str, list[str]]]] = {
    "grep -e P …": lambda n: ("grep", [a for i in range(n // 2) for a in ("-e", f"p{i}")] + ["f.txt"]),
    "echo W …": lambda n: ("echo", [f"w{i}" for i in range(n)]),
    "ls P …": lambda n: ("ls", [f"d{i % 10}" for i in range(n)]),
}


def _median(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="parism-bench-guard-") as tmp:
        for i in range(10):
            os.mkdir(os.path.join(tmp, f"d{i}"))
        Path(tmp, "f.txt").write_text("x\n")
        config = Path(tmp, "parism.toml")
        # the bench raises the count limit (default 32768) so 100k arguments reach every step
        config.write_text(f'[guard]\nallowed_paths = ["{tmp}"]\nmax_args = 200000\n')
        engine = create_engine(str(config))
        print(f"{'argv':<14}{'args':>9}{'seconds':>11}{'per-arg ratio to 1k':>22}")
        for name, build in SHAPES.items():
            base = None
            for size in SIZES:
                cmd, args = build(size)
                result = engine.dry_run(cmd, args, tmp)
                assert result.would_pass, (name, size, result)
                took = _median(lambda: engine.dry_run(cmd, args, tmp), ns.repeat)
                base = base if base is not None else took / size
                print(f"{name:<14}{size:>9}{took:>11.4f}{took / size / base:>22.2f}")
        big = ["a" * 200_000]
        refused = engine.dry_run("echo", big, tmp)
        took = _median(lambda: engine.dry_run("echo", big, tmp), ns.repeat)
        print(f"\nrefusal of one 200,000-byte argument: {took * 1000:.2f} ms ({refused.reason})")
        many = ["x"] * 300_000
        refused = engine.dry_run("echo", many, tmp)
        took = _median(lambda: engine.dry_run("echo", many, tmp), ns.repeat)
        print(f"refusal of 300,000 arguments (over max_args): {took * 1000:.2f} ms ({refused.reason})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
