#!/usr/bin/env python3
"""What exact names and zoned times cost on a long listing, against the parse in the same run.

    .venv/bin/python scripts/bench_truth_names.py [--entries 500] [--rounds 200]

A directory of N files (names ASCII; a second run of the listing has two bytes that are not
UTF-8 in each tenth name) is listed with the real ``ls -la``; then, in-process, medians of:

  parse         registry.parse of the listing (the baseline)
  zoned         output/zone.zoned: the offset of each row's local time (every ls run)
  exact_names   output/exact.exact_names (only runs whose output was not UTF-8, or escaped)
  mask          the redactor on the text (UTF-8 vs with lone surrogates: the display probe)
  listed        output/listed.verify on the name list (``ls``): one os.lstat per name

Each cost is printed in ms and as a ratio to the parse.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable

from parism.output.exact import decode, exact_names
from parism.output.redact.redactor import Redactor
from parism.output.zone import zoned
from parism.output import listed
from parism.parsers import registry


def _median(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=200)
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = os.fsencode(tmp)
        for i in range(ns.entries):
            name = f"file-{i:05d}.txt".encode() + (b"\xff\xfe" if i % 10 == 0 else b"")
            open(os.path.join(base, name), "wb").close()
        env = {"LC_ALL": "C.UTF-8", "TZ": "UTC", "PATH": "/usr/bin:/bin"}
        raw = subprocess.run(["ls", "-la"], cwd=tmp, capture_output=True, check=True, env=env).stdout
        names_raw = subprocess.run(["ls"], cwd=tmp, capture_output=True, check=True, env=env).stdout
        names, _ = decode(names_raw)
        name_list = registry.parse("ls", [], names, "linux").parsed
        names_ms = _median(lambda: registry.parse("ls", [], names, "linux"), ns.rounds)
        listed_ms = _median(lambda: listed.verify([], name_list, tmp), ns.rounds)
    exact_text, _ = decode(raw)
    clean_text = raw.replace(b"\xff\xfe", b"ok").decode()
    redactor = Redactor()
    rows = {}
    for label, text in (("UTF-8", clean_text), ("not UTF-8", exact_text)):
        parsed = registry.parse("ls", ["-la"], text, "linux").parsed
        base_ms = _median(lambda: registry.parse("ls", ["-la"], text, "linux"), ns.rounds)
        rows[label] = [("parse", base_ms),
                       ("zoned", _median(lambda: zoned("ls", parsed, "Asia/Kathmandu"), ns.rounds)),
                       ("exact_names", _median(lambda: exact_names(parsed), ns.rounds)),
                       ("mask", _median(lambda: redactor.mask(text), ns.rounds))]
    print(f"ls -la, {ns.entries} entries, median of {ns.rounds} rounds")
    print(f"  ls (name list): parse {names_ms:7.3f} ms, listed {listed_ms:7.3f} ms  {listed_ms / names_ms:5.2f}x parse")
    for label, stages in rows.items():
        base_ms = stages[0][1]
        print(f"  {label}:")
        for name, ms in stages:
            print(f"    {name:12} {ms:7.3f} ms  {ms / base_ms:5.2f}x parse")


if __name__ == "__main__":
    main()
