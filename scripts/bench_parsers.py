#!/usr/bin/env python3
"""Parser throughput: Parism's parsers against jc's on the same large inputs, in one run.

Inputs are built from real output rows (the corpus beside the repository when present, else
rows captured on this machine) repeated with unique names up to the target size, plus the same
input at a tenth of its size to show that time grows linearly. Prints lines/s for both and the
ratio Parism/jc (target ≥ 1.5 on every input) and the 10×-size time ratio (≈ 10 when linear; jc's
own ratio is printed beside it, since cache effects make both drift above 10). Times are CPU
times of the parsing process, Parism and jc run alternately, medians kept.

    python scripts/bench_parsers.py            # full sizes
    python scripts/bench_parsers.py --scale 0.1 --repeat 1   # quick look
    python scripts/bench_parsers.py --calls    # one engine call: parse and shape CPU per stage
    python scripts/bench_parsers.py --calls --baseline /tmp/main   # the same against another checkout

``--calls`` times the two in-process stages of one call on live output of this machine
(``ls -la /usr/bin``, ``ps aux``, run as the engine runs them: C.UTF-8, UTC): the parse, and the
shaping of the engine's default answer (``max_items`` 500, no format: the lean table) and of
``format: "compact"``, medians of CPU time.  ``--baseline DIR`` (a checkout, e.g. ``git archive``
unpacked) runs this script on it and on this checkout in alternating rounds over the same captured
output, and prints both sides' medians over the rounds (before → after).

jc is a benchmark-only dependency: ``pip install jc`` (or ``pip install -e .[bench]``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# the checkout whose parism is measured (--baseline runs this script again on another one)
ROOT = Path(os.environ.get("PARISM_BENCH_ROOT") or Path(__file__).resolve().parents[1])
sys.path.insert(0, str(ROOT))

from parism.config.model import Settings
from parism.parsers import registry
from parism.output.shape import shape

CORPUS = ROOT.parent / "shared" / "corpus" / "jc"

LS_ROWS = [
    "-rw-r--r--. 1 root root    1234 Aug 15 10:53 file name {i}.txt",
    "drwxr-xr-x. 2 root root    4096 Oct 21  2019 dir-{i}",
    "lrwxrwxrwx. 1 root root       7 Aug 15 10:53 link{i} -> usr/bin",
    "-rwsr-xr-x. 1 root root   32096 Oct 30  2018 suid-{i}",
]
PS_ROWS = [
    "root     {i:>6}  0.0  0.1 169812 13160 ?        Ss   Nov29   0:03 /sbin/init splash --opt={i}",
    "www-data {i:>6}  1.5  2.3 912344 98120 ?        Sl   10:02  12:41 /usr/sbin/apache2 -k start -x{i}",
    "root     {i:>6}  0.0  0.0      0     0 ?        I<   Nov29   0:00 [kworker/0:{i}-events]",
]
NETSTAT_ROWS = [
    "tcp        0      0 10.0.{a}.{b}:22          10.1.{b}.{a}:{p}        ESTABLISHED",
    "tcp6       0      0 :::{p}                  :::*                    LISTEN     ",
    "udp        0      0 127.0.0.53:{p}          0.0.0.0:*                          ",
]
GIT_COMMIT = (
    "commit {h}\nAuthor: Dev Person {i} <dev{i}@example.com>\nDate:   Mon Nov 30 06:{m:02d}:00 2026 +0000\n\n"
    "    Fix the thing number {i} in module {i}\n\n    Longer body line for commit {i}.\n\n"
)


def make_ls(n: int) -> str:
    rows = ["total 123456"] + [LS_ROWS[i % len(LS_ROWS)].format(i=i) for i in range(n - 1)]
    return "\n".join(rows) + "\n"


def make_ps(n: int) -> str:
    head = "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND"
    return "\n".join([head] + [PS_ROWS[i % len(PS_ROWS)].format(i=i + 1) for i in range(n - 1)]) + "\n"


def make_find(n: int) -> str:
    return "\n".join(f"./src/pkg{i % 97}/sub dir {i % 13}/file_{i}.py" for i in range(n)) + "\n"


def make_netstat(n: int) -> str:
    head = ["Active Internet connections (servers and established)",
            "Proto Recv-Q Send-Q Local Address           Foreign Address         State      "]
    rows = [NETSTAT_ROWS[i % 3].format(a=i % 250, b=(i // 250) % 250, p=1024 + i % 60000) for i in range(n - 2)]
    return "\n".join(head + rows) + "\n"


def make_git_log(commits: int) -> str:
    return "".join(GIT_COMMIT.format(h=f"{i:040x}", i=i, m=i % 60) for i in range(commits))


CASES: list[tuple[str, str, list[str], str, Callable[[int], str], int]] = [
    # name, cmd, args, jc parser, generator, full size (lines, or commits for git log)
    ("ls -l", "ls", ["-l"], "ls", make_ls, 100_000),
    ("ps aux", "ps", ["aux"], "ps", make_ps, 50_000),
    ("find", "find", ["."], "find", make_find, 200_000),
    ("netstat -an", "netstat", ["-an"], "netstat", make_netstat, 50_000),
    ("git log", "git", ["log"], "git_log", make_git_log, 20_000),
]


def cpu_time(fn: Callable[[], object]) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def paired_times(a: Callable[[], object], b: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median CPU time of ``a`` and of ``b``, run alternately so load changes hit both alike
    (wall-clock best-of-N swung the ratio by ±50 % on a shared machine)."""
    ta, tb = [], []
    for _ in range(repeat):
        ta.append(cpu_time(a))
        tb.append(cpu_time(b))
    return statistics.median(ta), statistics.median(tb)


CALLS = [("ls -la /usr/bin", "ls", ["-la", "/usr/bin"]), ("ps aux", "ps", ["aux"])]


STAGES = ("parse ms", "shape ms", "compact ms")


def capture(outdir: Path) -> None:
    """The live output of each call, run as the engine runs it, saved for the timing processes."""
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "TZ": "UTC"}
    for i, (_, cmd, args) in enumerate(CALLS):
        text = subprocess.run([cmd, *args], capture_output=True, text=True, env=env, check=False).stdout
        (outdir / f"{i}.out").write_text(text)


def per_call(repeat: int, texts: Path) -> dict[str, list[float]]:
    """Parse and shape CPU time of one call, per stage (see the module docstring), in ms."""
    settings = Settings()
    thresholds = settings.parsers.adaptive_format_threshold.model_dump(by_alias=True)
    out = {}
    for i, (name, cmd, args) in enumerate(CALLS):
        text = (texts / f"{i}.out").read_text()
        outcome = registry.parse(cmd, args, text, "linux")
        if outcome.parsed is None or outcome.parser is None:
            raise SystemExit(f"{name}: not parsed")
        parsed, rows_key, parser = outcome.parsed, outcome.parser.rows_key, outcome.parser
        t_parse = [cpu_time(lambda: registry.parse(cmd, args, text, "linux")) for _ in range(repeat)]  # noqa: B023
        t_shape, t_compact = [], []
        for _ in range(repeat):
            t_shape.append(cpu_time(lambda: shape(parsed, requested=None, rows_key=rows_key,  # noqa: B023
                                                  max_items=settings.guard.max_items, thresholds=thresholds,
                                                  parser=parser, args=args, text=text)))  # noqa: B023
            t_compact.append(cpu_time(lambda: shape(parsed, requested="compact", rows_key=rows_key,  # noqa: B023
                                                    max_items=settings.guard.max_items, thresholds=thresholds)))
        out[name] = [text.count("\n")] + [statistics.median(t) * 1e3 for t in (t_parse, t_shape, t_compact)]
    return out


def calls(repeat: int, baseline: str | None, rounds: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        texts = Path(tmp)
        capture(texts)
        if baseline is None:
            results = {"": [per_call(repeat, texts)]}
        else:
            results = {"before": [], "after": []}
            sides = [("before", baseline), ("after", str(ROOT))]
            for r in range(rounds):
                for side, root in sides[::-1] if r % 2 else sides:  # each side goes first in half the rounds
                    run = subprocess.run([sys.executable, __file__, "--calls-json", tmp, "--repeat", str(repeat)],
                                         capture_output=True, text=True, check=True,
                                         env={**os.environ, "PARISM_BENCH_ROOT": root})
                    results[side].append(json.loads(run.stdout))
    print(f"{'call':16s} {'lines':>6s} " + " ".join(f"{s:>{len(s) + 8 if baseline else 10}s}" for s in STAGES))
    for name, _, _ in CALLS:
        sides = {side: [statistics.median(r[name][j] for r in runs) for j in range(4)] for side, runs in results.items()}
        lines = int(next(iter(sides.values()))[0])
        cells = [" → ".join(f"{v[j]:.3f}" for v in sides.values()) for j in (1, 2, 3)]
        print(f"{name:16s} {lines:6d} " + " ".join(f"{c:>{len(s) + 8 if baseline else 10}s}" for c, s in zip(cells, STAGES)))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every input size (default 1)")
    ap.add_argument("--repeat", type=int, default=5, help="alternating runs per measurement; medians are kept")
    ap.add_argument("--calls", action="store_true", help="per-call parse and shape time of live ls and ps")
    ap.add_argument("--baseline", help="with --calls: another checkout, timed in alternating rounds (before → after)")
    ap.add_argument("--rounds", type=int, default=5, help="with --baseline: rounds per side (default 5)")
    ap.add_argument("--calls-json", metavar="DIR", help=argparse.SUPPRESS)  # one side's timing of DIR's outputs
    opts = ap.parse_args()
    if opts.calls_json:
        print(json.dumps(per_call(opts.repeat, Path(opts.calls_json))))
        return 0
    if opts.calls:
        return calls(max(opts.repeat, 200), opts.baseline, opts.rounds)
    try:
        import jc  # type: ignore[import-untyped]
    except ImportError:
        print("jc is not installed: pip install jc", file=sys.stderr)
        return 2

    print(f"{'input':12s} {'size':>8s} {'lines':>8s} {'parism l/s':>12s} {'jc l/s':>12s} {'ratio':>7s}  "
          f"{'10x time':>8s}  {'jc 10x':>8s}")
    failures = []
    for name, cmd, args, jc_name, gen, full in CASES:
        size = max(10, int(full * opts.scale))
        results = {}
        for label, n in (("1/10", max(10, size // 10)), ("full", size)):
            text = gen(n)
            lines = text.count("\n")
            outcome = registry.parse(cmd, args, text, "linux")
            if outcome.parse_error is not None or outcome.parsed is None:
                why = outcome.parse_error.message if outcome.parse_error else "no parser"
                print(f"{name}: parism could not parse the input: {why}")
                failures.append(name)
                break
            t_parism, t_jc = paired_times(lambda: registry.parse(cmd, args, text, "linux"),  # noqa: B023
                                          lambda: jc.parse(jc_name, text, quiet=True), opts.repeat)  # noqa: B023
            results[label] = (t_parism, t_jc)
            print(f"{name:12s} {label:>8s} {lines:8d} {lines / t_parism:12,.0f} {lines / t_jc:12,.0f} "
                  f"{t_jc / t_parism:7.2f}x", end="")
            if label == "full":
                small, big = results["1/10"][0], t_parism
                print(f"  {big / small:8.1f}  {t_jc / results['1/10'][1]:8.1f}")
                if t_jc / t_parism < 1.5:
                    failures.append(f"{name} ({t_jc / t_parism:.2f}x)")
            else:
                print()
    print()
    print("target: parism >= 1.5x jc on every input;",
          "met" if not failures else f"NOT met for: {', '.join(failures)}")
    return 0 if not failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
