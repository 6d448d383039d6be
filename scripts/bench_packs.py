#!/usr/bin/env python3
"""Per-call cost of a parser pack in its bwrap-isolated worker against the same pack in-process.

    .venv/bin/python scripts/bench_packs.py [--iterations 300]

The pack is docs/examples/ip-brief; inputs of 20 and 500 lines of `ip -br addr`-shaped text.
In-process = the pack's ``parse`` called directly (what ``external_isolation = "none"`` would cost
without its process hop); worker = ``Worker.call`` (JSON over a pipe, the limits, the reaping of
forked children). Both interleaved in one run; medians in ms and the ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from parism.packs.worker import Limits, Worker  # noqa: E402
from parism.packs.types import PackContext  # noqa: E402

PACK_DIR = ROOT / "docs" / "examples" / "ip-brief"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=300)
    ns = ap.parse_args()
    spec = importlib.util.spec_from_file_location("bench_pack", PACK_DIR / "parser.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    worker = Worker(str(PACK_DIR), Limits(time_ms=5000))
    worker.start()
    try:
        print(f"{'lines':>6} {'in-process':>11} {'worker':>9} {'ratio':>7}   (median ms over {ns.iterations})")
        for n in (20, 500):
            raw = "".join(f"eth{i}@if{i + 1}     UP     10.0.{i // 250}.{i % 250}/24 fe80::{i:x}/64 \n" for i in range(n))
            local, remote = [], []
            for _ in range(ns.iterations):
                t0 = time.perf_counter()
                mod.PACK.parse(raw, ["-br", "addr"], PackContext())
                local.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                worker.call({"op": "parse", "raw": raw, "args": ["-br", "addr"]})
                remote.append((time.perf_counter() - t0) * 1000)
            lm, rm = statistics.median(local), statistics.median(remote)
            print(f"{n:6d} {lm:11.3f} {rm:9.3f} {rm / lm:7.1f}")
    finally:
        worker.stop()


if __name__ == "__main__":
    main()
