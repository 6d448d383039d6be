#!/usr/bin/env python3
"""What ``retain`` and ``evidence: "fields"`` cost per call, and what the store holds, in one run.

Per call: ``ls -la /usr/bin`` and ``ps aux`` through a real engine (readonly profile, sandbox as
configured), each variant in shuffled rounds so the sandbox pool's refill and the machine's
noise fall on every variant alike; the figure is the median CPU time of this process per call
(the engine's own work: guard, redact, parse, shape, retain, locate — the child's CPU is not in
it) and the ratio against the plain call measured in the same run. The parse itself is also
timed alone on the same text (``registry.parse``), beside the locator's time: the parsers do not
know about evidence, so the parse costs the same with or without it.

Store: 16 results of ~2 MiB accounted each retained (``cat`` of a generated text file: the masked
text + its parsed lines), then the store's accounted bytes, the Python heap it keeps
(tracemalloc, after the answers are dropped) and the RSS growth.

    python scripts/bench_results.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from parism.engine import create_engine  # noqa: E402
from parism.results.evidence import locate  # noqa: E402
from parism.parsers import registry  # noqa: E402

CALLS = {"ls -la /usr/bin": ("ls", ["-la", "/usr/bin"]), "ps aux": ("ps", ["aux"])}
VARIANTS = {
    "plain": {},
    "format json": {"format": "json"},
    "retain": {"retain": True},
    "retain + evidence fields": {"retain": True, "evidence": "fields"},
}


def engine_for(tmp: Path, **store: int):
    conf = tmp / "bench.toml"
    lines = ["[guard]", f'allowed_paths = ["{tmp}", "/usr/bin"]', "max_output_bytes = 8388608"]
    if store:
        lines.append("[store]")
        lines += [f"{k} = {v}" for k, v in store.items()]
    conf.write_text("\n".join(lines) + "\n")
    engine = create_engine(str(conf))
    assert not engine.errors, engine.errors
    return engine


def cpu_of(fn) -> float:
    t0 = time.process_time()
    fn()
    return (time.process_time() - t0) * 1000


def per_call(engine, tmp: Path, rounds: int) -> None:
    print(f"per-call CPU of this process (median of {rounds}, ms) and ratio to plain")
    for label, (cmd, args) in CALLS.items():
        samples: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for _ in range(2):  # warm-up: imports, sandbox pool
            for opts in VARIANTS.values():
                engine.run(cmd, args, cwd=str(tmp), **opts)
        for _ in range(rounds):
            order = list(VARIANTS)
            random.shuffle(order)
            for name in order:
                gc.collect()
                samples[name].append(cpu_of(lambda: engine.run(cmd, args, cwd=str(tmp), **VARIANTS[name])))
        base = statistics.median(samples["plain"])
        for name, vals in samples.items():
            med = statistics.median(vals)
            print(f"  {label:18} {name:26} {med:7.2f} ms  x{med / base:5.2f}")
        text = subprocess.run([cmd, *args], capture_output=True, text=True,
                              env={**os.environ, "LC_ALL": "C.UTF-8", "TZ": "UTC"}).stdout
        outcome = registry.parse(cmd, args, text, "linux")
        parse = statistics.median(cpu_of(lambda: registry.parse(cmd, args, text, "linux")) for _ in range(rounds))
        loc = statistics.median(cpu_of(lambda: locate(text, outcome.parsed, outcome.parser.rows_key,
                                                       outcome.parser.id, "fields")) for _ in range(rounds))
        rows = len(outcome.parsed.get(outcome.parser.rows_key) or [])
        print(f"  {label:18} parse alone {parse:6.2f} ms, locate (fields) alone {loc:6.2f} ms, {rows} rows")


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def store_memory(tmp: Path) -> None:
    big = tmp / "one-mib.txt"
    big.write_text("".join(f"row {n:07d} " + "x" * 100 + "\n" for n in range(9_000)))  # ~1 MiB
    engine = engine_for(tmp, max_items=16, max_total_bytes=32 * 1024 * 1024)
    engine.run("cat", [str(big)], cwd=str(tmp))  # warm
    gc.collect()
    rss0 = rss_kib()
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    kept = 0
    for _ in range(16):
        env = engine.run("cat", [str(big)], cwd=str(tmp), retain=True)
        kept += bool(env.review and env.review.retained)
        del env
    gc.collect()
    snap1 = tracemalloc.take_snapshot()
    heap = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    tracemalloc.stop()
    stats = engine.results.store.stats()
    print(f"store: {kept} of 16 retained, {stats['items']} items, {stats['bytes'] / 2**20:.2f} MiB accounted "
          f"({stats['bytes'] / max(1, stats['items']) / 2**20:.2f} MiB each); Python heap kept "
          f"{heap / 2**20:.2f} MiB; RSS +{(rss_kib() - rss0) / 1024:.1f} MiB")
    engine.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        engine = engine_for(tmp)
        per_call(engine, tmp, a.rounds)
        engine.close()
        store_memory(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
