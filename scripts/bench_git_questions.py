#!/usr/bin/env python3
"""What asking git's questions as the call, in the call's sandbox, costs (issue 23): one
uncached reading of a repository (``guard/git/repo.read_repo``: the top repository, an embedded
one that ``status`` enters, an include) by each asker, interleaved in one run, medians printed
with the ratio to the baseline measured in the same rounds — the old way, the same git
questions asked on the host as plain processes (three at once per repository).

    python scripts/bench_git_questions.py              # 30 rounds
    python scripts/bench_git_questions.py --rounds 60

Askers: ``sandbox, pooled`` (what the engine does: a pre-started sandbox of the call's plan
takes the questions), ``sandbox, cold`` (no pool: bwrap and its helper start for each reading),
``direct`` (the same script on the host: a call whose command runs unsandboxed).
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import tomli_w  # noqa: E402

from cpustat import CpuWindow  # noqa: E402
from parism.config import load_config  # noqa: E402
from parism.guard import Setup  # noqa: E402
from parism.guard.git.ask import direct_asker  # noqa: E402
from parism.guard.git.repo import DIRS_ARGS, FORCED_FLAGS, INDEX_ARGS, LIST_ARGS, Repo, read_repo  # noqa: E402
from parism.run.sandbox import Sandbox  # noqa: E402

ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin",
       "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@x"}


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


POOL = ThreadPoolExecutor(max_workers=3)


def host_questions(top: Path) -> None:
    """The old reading's processes: three git questions at once per repository, on the host."""
    for where in (top, top / "emb"):
        jobs = [["git", "--no-pager", *FORCED_FLAGS, *args] for args in (DIRS_ARGS, LIST_ARGS, INDEX_ARGS)]
        list(POOL.map(lambda argv: subprocess.run(argv, cwd=where, env=ENV, capture_output=True, timeout=10), jobs))


def _ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    base = Path(tempfile.mkdtemp(prefix="parism-bench-gitq-"))
    os.chmod(base, 0o755)
    try:
        top = _build(base)
        cfg_file = base / "parism.toml"
        cfg_file.write_text(tomli_w.dumps({"guard": {"allowed_paths": [str(base / "ws")]},
                                           "sandbox": {"mode": "required"}}))
        cfg = load_config(str(cfg_file))
        pooled, cold = Sandbox.from_config(cfg), Sandbox.from_config(cfg)
        cold.pool_size = 0
        st = os.stat(top)
        askers = {"sandbox, pooled": Setup(cfg, pooled).git_asker(str(top), st, []),
                  "sandbox, cold": Setup(cfg, cold).git_asker(str(top), st, []),
                  "direct": direct_asker(Setup(cfg, cold).child_env, FORCED_FLAGS)}
        for name, asker in askers.items():
            got = read_repo(str(top), asker, enter_submodules=True)  # type: ignore[arg-type]
            assert isinstance(got, Repo) and len(got.repos) == 2, (name, got)
        times: dict[str, list[float]] = {"host git (baseline)": [], **{name: [] for name in askers}}
        window = CpuWindow()
        for _ in range(rounds):
            times["host git (baseline)"].append(_ms(lambda: host_questions(top)))
            for name, asker in askers.items():
                times[name].append(_ms(lambda: read_repo(str(top), asker, enter_submodules=True)))  # type: ignore[arg-type]
                time.sleep(0.3)  # the pool's refill (25 ms after the reading, then a start) is not measured
        print(window.summary())
        pool = pooled._pool
        if pool is not None:
            print(f"pool of the pooled asker: {pool.hits} hits, {pool.misses} misses (a miss starts cold)")
        floor = statistics.median(times["host git (baseline)"])
        print(f"{'reading (top + embedded repository, include)':<46} {'median ms':>10} {'ratio':>6}")
        for name, values in times.items():
            med = statistics.median(values)
            print(f"{name:<46} {med:>10.2f} {med / floor:>6.2f}")
        pooled.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
