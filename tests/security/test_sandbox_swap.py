"""Check, then use (issue 9 item 4): a name swapped for a symlink after the guard checked it.

A thread exchanges the working directory — and, in other calls, a directory named by a path
argument — with a symlink to a directory outside the allowed paths, using
``renameat2(RENAME_EXCHANGE)`` (atomic: the name is always one or the other), while hundreds of
calls run through the real engine and real bubblewrap, pooled sandboxes included. Both shipped
profiles, and every identity rule the server can take — as root: ``workspace_owner`` (the
workspace belongs to uid 4242), ``unprivileged_uid`` (root-owned, listable: ``nobody``),
``root_masked`` (root-owned, private, inside an allowed path that is root's private tree too:
uid 0 in the namespace; in build that rule is refused, so every call there is); as uid 10001
(the appliance, ``scripts/test-nonroot``): ``server_user``. The outside directory holds a
marker; it must never appear in any answer. Armed control: the same reads through the swapped
names without Parism do return the outside marker.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

import parism
from parism.config import load_config
from parism.run.executor import ExecSpec
from parism.run.sandbox import Sandbox, SandboxRequest
from parism.run.sandbox import identity
from parism.run.sandbox.launcher import Prepared

AT_FDCWD = -100
RENAME_EXCHANGE = 2
OUTSIDE = "OUTSIDE-MARKER-5f1c"  # only in the outside directory
INSIDE = "inside-marker"
CALLS = 50  # per profile, rule and target: 600 calls in all (at least)
MIN_SWAPS = 20  # swaps that must have happened during a case's calls: two bursts
LIVE_RACE_WAIT_S = 30.0  # how long a case keeps calling until then
OWNER = 4242
# identity rule -> (workspace owner, mode): a root server's three; a server that is not root (the
# appliance, scripts/test-nonroot) has one, the commands run as itself
RULES = ({"workspace_owner": (OWNER, 0o755), "unprivileged_uid": (0, 0o755), "root_masked": (0, 0o700)}
         if os.geteuid() == 0 else {"server_user": (os.geteuid(), 0o755)})

_libc = ctypes.CDLL(None, use_errno=True)


def exchange(a: str, b: str) -> None:
    if _libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), a)


class Swapper:
    """Exchanges ``real`` and ``link`` (a symlink to the outside) over and over, in a thread."""

    def __init__(self, real: str, link: str) -> None:
        self.real, self.link = real, link
        self.swaps = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        """Bursts of swaps 0–2 ms apart (they hit every window of a call), each followed by a
        rest with the real directory in place (calls that fall into it run)."""
        while not self._stop.is_set():
            for i in range(10):
                exchange(self.real, self.link)
                self.swaps += 1
                time.sleep(0.0005 * (i % 5))
            self._stop.wait(0.06)

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        if os.path.islink(self.real):  # leave the real directory under its own name
            exchange(self.real, self.link)


def build_tree(base: Path, owner: int, mode: int) -> dict[str, str]:
    """base/ws (allowed) holds proj/ (the cwd) with sub/; base/outside holds the marker.
    Two symlinks to the outside wait next to the names they will be exchanged with. A private
    proj lies in a private ws (root_masked needs an allowed path that is root's own tree)."""
    outside = base / "outside"
    outside.mkdir()
    (outside / "marker.txt").write_text(OUTSIDE + "\n")
    (outside / "sub").mkdir()
    (outside / "sub" / "marker.txt").write_text(OUTSIDE + "\n")
    for path in (outside, outside / "sub"):
        path.chmod(0o755)
    ws = base / "ws"
    proj = ws / "proj"
    (proj / "sub").mkdir(parents=True)
    (proj / "marker.txt").write_text(INSIDE + "\n")
    (proj / "sub" / "marker.txt").write_text(INSIDE + "\n")
    os.symlink(str(outside), ws / "proj.swap")
    os.symlink(str(outside / "sub"), proj / "sub.swap")
    base.chmod(0o755)
    ws.chmod(0o755 if mode & 0o005 else 0o700)
    for path in (proj, proj / "sub"):
        path.chmod(mode)
    if os.geteuid() == 0:
        for path in (proj, proj / "sub", proj / "marker.txt", proj / "sub" / "marker.txt"):
            os.chown(path, owner, owner)
    return {"ws": str(ws), "cwd": str(proj), "cwd.swap": str(ws / "proj.swap"),
            "sub": str(proj / "sub"), "sub.swap": str(proj / "sub.swap")}


@pytest.fixture(params=["readonly", "build"])
def profile(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=list(RULES))
def tree(request: pytest.FixtureRequest) -> Iterator[tuple[str, dict[str, str]]]:
    base = Path(tempfile.mkdtemp(prefix="parism-swap-", dir="/tmp"))
    try:
        yield request.param, build_tree(base, *RULES[request.param])
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _config(paths: dict[str, str], profile: str = "readonly") -> Path:
    cfg = Path(paths["ws"]).parent / f"parism-{profile}.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"profile": profile, "allowed_paths": [paths["ws"]]},
                                  "sandbox": {"mode": "required"}}))
    return cfg


def _engine(profile: str, paths: dict[str, str]) -> parism.Engine:
    engine = parism.create_engine(str(_config(paths, profile)))
    assert engine.errors == []
    return engine


def test_armed_control_the_swap_does_reach_outside(tree: tuple[str, dict[str, str]]) -> None:
    _, paths = tree
    exchange(paths["cwd"], paths["cwd.swap"])
    try:
        assert Path(paths["cwd"], "marker.txt").read_text().strip() == OUTSIDE
    finally:
        exchange(paths["cwd"], paths["cwd.swap"])
    exchange(paths["sub"], paths["sub.swap"])
    try:
        assert Path(paths["sub"], "marker.txt").read_text().strip() == OUTSIDE
    finally:
        exchange(paths["sub"], paths["sub.swap"])


@pytest.mark.parametrize("target", ["cwd", "path_argument"])
def test_a_swapped_name_never_shows_the_outside(profile: str, tree: tuple[str, dict[str, str]], target: str) -> None:
    rule, paths = tree
    engine = _engine(profile, paths)
    args = ["marker.txt"] if target == "cwd" else ["sub/marker.txt"]
    swapped = (paths["cwd"], paths["cwd.swap"]) if target == "cwd" else (paths["sub"], paths["sub.swap"])
    outcomes: Counter[str] = Counter()
    assert identity.choose(paths["cwd"]).rule == rule
    refused_by_rule = rule == "root_masked" and profile == "build"  # never host uid 0 writing
    try:
        with Swapper(*swapped) as swapper:
            calls, deadline = 0, time.monotonic() + LIVE_RACE_WAIT_S
            # CALLS calls, and more while the race has not yet been live for MIN_SWAPS swaps
            # (50 quick calls once fitted into one burst and its rest: 10 swaps in a CI run)
            while calls < CALLS or (not refused_by_rule and swapper.swaps < MIN_SWAPS
                                    and time.monotonic() < deadline):
                env = engine.run("cat", args, cwd=paths["cwd"])
                calls += 1
                text = env.to_json()
                assert OUTSIDE not in text, (rule, profile, target, text)
                outcomes[env.stdout.raw.strip() if env.exitCode == 0 else _refusal(env)] += 1
        # the race was live during the calls: several bursts of swaps happened (not 'more swaps
        # than calls', which a starved swapper thread misses on a loaded machine); calls refused
        # before any sandbox starts end too fast for that
        assert refused_by_rule or swapper.swaps >= MIN_SWAPS, swapper.swaps
    finally:
        engine.close()
    if refused_by_rule:
        assert outcomes["exec:sandbox_unsupported"] > 0, outcomes
        assert set(outcomes) <= {"exec:sandbox_unsupported", "guard:path_not_allowed", "guard:arg_not_allowed"}
        return
    assert outcomes[INSIDE] > 0, outcomes  # calls did run (the test is not passing by refusing all)
    assert set(outcomes) <= {INSIDE, *REFUSALS}, outcomes


# How a call that met a swapped name ends (never with the outside content): the guard saw the
# symlink (path_not_allowed) or a name changing under its realpath walk (it refuses what it
# could not check: arg_not_allowed); the sandbox could not open the name without a symlink
# (ELOOP), bwrap's own setup met the swapped name (EIO: "Can't chdir", "Can't get type of
# source"), or the helper found another inode there (ESTALE); or, for a path argument, cat
# met the symlink, whose target is not in the sandbox (exit 1, "No such file").
REFUSALS = {"guard:path_not_allowed", "guard:arg_not_allowed", "exec:spawn_failed:ESTALE",
            "exec:spawn_failed:ELOOP", "exec:spawn_failed:EIO", "exit:1"}


def _refusal(env: parism.Envelope) -> str:
    failure = env.failure
    if failure is None or failure.reason == "non_zero_exit":
        return f"exit:{env.exitCode}"
    return ":".join(p for p in (failure.kind, failure.reason, failure.errorCode) if p)


def test_helper_runs_nothing_in_another_directory(tree: tuple[str, dict[str, str]]) -> None:
    """Deterministic form of the race: the guard checked one inode, the sandbox finds another
    under the name (here: told so). Nothing runs, and the refusal names the reason."""
    _, paths = tree
    sb = Sandbox.from_config(load_config(str(_config(paths))))
    spec = ExecSpec(argv=["/usr/bin/cat", "marker.txt"], cwd=paths["cwd"], env={"PATH": "/usr/bin:/bin"},
                    timeout_s=10, max_stdout=1 << 16, max_stderr=1 << 16)
    plan = sb.plan(SandboxRequest(), spec)
    other = os.stat(paths["sub"])
    started = Prepared(plan).handover(spec.argv, (other.st_dev, other.st_ino))
    try:
        assert started.wait(10) == 127
        assert started.spawn_error is not None and started.spawn_error.startswith("ESTALE: working directory")
        assert INSIDE not in started.stdout.read().decode()
    finally:
        started.kill_tree()
        started.stdout.close()
        started.stderr.close()
    sb.close()
