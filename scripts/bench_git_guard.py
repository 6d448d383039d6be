#!/usr/bin/env python3
"""What pinning git's reading costs (issue 9): the guard's check and the whole sandboxed call of
``git status`` and ``git log -n 5``, with the config copies and sealed gitlinks (as shipped)
against the same engine with them switched off, interleaved in one run, medians printed with
the ratio. The floor is one plain ``git status`` process (``baseline``). The repository has an
embedded repository (status enters it) and an include, so every part of the reading is paid.

    python scripts/bench_git_guard.py                # 40 rounds
    python scripts/bench_git_guard.py --rounds 100
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tomli_w  # noqa: E402

import parism.guard as guard_mod  # noqa: E402
from parism.engine import create_engine  # noqa: E402

ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin",
       "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@x"}
QUERIES = {"git status": ["status"], "git log -n 5": ["log", "-n", "5"]}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True)


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("a\n")
    _git(path, "add", ".")
    _git(path, "commit", "-q", "-m", "a")
    return path


def _build(base: Path) -> Path:
    top = _repo(base / "ws" / "top")
    _repo(top / "emb")
    _git(top, "add", "emb")
    _git(top, "commit", "-q", "-m", "emb")
    with (top / ".git/config").open("a") as fh:
        fh.write("[include]\n\tpath = extra.cfg\n")
    (top / ".git/extra.cfg").write_text('[remote "origin"]\n\turl = https://example.invalid/x.git\n')
    return top


def _ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    rounds = parser.parse_args().rounds
    base = Path(tempfile.mkdtemp(prefix="parism-bench-git-"))
    os.chmod(base, 0o755)
    try:
        top = _build(base)
        cfg = base / "parism.toml"
        cfg.write_text(tomli_w.dumps({"guard": {"allowed_paths": [str(base / "ws")]}, "sandbox": {"mode": "required"}}))
        engine = create_engine(str(cfg))
        pin = guard_mod._pin_reading
        off: Callable[..., None] = lambda decision, repo: None  # noqa: E731
        times: dict[tuple[str, str, str], list[float]] = {}
        floor: list[float] = []
        for _ in range(rounds):
            floor.append(_ms(lambda: _git(top, "status")))
            for name, args in QUERIES.items():
                for mode, fn in (("pinned", pin), ("off", off)):
                    guard_mod._pin_reading = fn
                    times.setdefault((name, "check", mode), []).append(
                        _ms(lambda: engine.dry_run("git", args, str(top))))
                    times.setdefault((name, "call", mode), []).append(_ms(lambda: engine.run("git", args, str(top))))
        guard_mod._pin_reading = pin
        engine.close()
        print(f"baseline: one plain git status process {statistics.median(floor):.2f} ms (median of {rounds})")
        print(f"{'query':<14} {'stage':<6} {'pinned ms':>10} {'off ms':>8} {'ratio':>6}")
        for name in QUERIES:
            for stage in ("check", "call"):
                on, no = (statistics.median(times[(name, stage, m)]) for m in ("pinned", "off"))
                print(f"{name:<14} {stage:<6} {on:>10.2f} {no:>8.2f} {on / no:>6.2f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
