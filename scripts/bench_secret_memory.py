#!/usr/bin/env python3
"""What the memory of masked values costs: ``Redactor.mask`` CPU with and without it.

Two redactors in this process mask the same clean ``ls -l``-like text of growing size: one
that never masked anything (the memory is empty: no cost) and one that masked one secret
before (every text is then also searched for 12+ character slices of it). Thread CPU time,
best of N rounds (wall time on a shared machine mostly measures the wait for a CPU), and the
ratio per size, so linear cost shows as a constant ms/MB.

    .venv/bin/python scripts/bench_secret_memory.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from parism.output.redact import Redactor

WORDS = ["drwxr-xr-x", "root", "2026-01-01", "README.md", "total", "1024", "lib", "usr",
         "-rw-r--r--", "x86_64-linux-gnu", "\n"]
SIZES = (10_000, 100_000, 1_000_000)


def cpu_ms(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    rounds = ap.parse_args().rounds
    rng = random.Random(1)
    text = " ".join(rng.choice(WORDS) for _ in range(120_000))[: max(SIZES)]
    empty, remembering = Redactor(), Redactor()
    remembering.mask("DB_PASSWORD=Zq8vN3xR7tLp2mKw9sYb4HcJ")
    print(f"{'bytes':>9} {'empty ms':>9} {'remembering ms':>15} {'ratio':>6} {'memory ms/MB':>13}")
    for size in SIZES:
        chunk = text[:size]
        base = cpu_ms(lambda: empty.mask(chunk), rounds)
        with_memory = cpu_ms(lambda: remembering.mask(chunk), rounds)
        per_mb = (with_memory - base) * 1_000_000 / size
        print(f"{size:>9} {base:>9.2f} {with_memory:>15.2f} {with_memory / base:>6.1f} {per_mb:>13.1f}")


if __name__ == "__main__":
    main()
