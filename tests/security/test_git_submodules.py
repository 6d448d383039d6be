"""Submodules made by ``git submodule add`` work, and still run nothing their configuration names
(issue #25 class 5, keeping issue #9's guarantee).

``git submodule add`` writes ``core.worktree = ../../../sub`` into ``.git/modules/sub/config``;
every status/diff in such a repository was refused ("moves its work tree").  A ``core.worktree``
that names the submodule's own directory is now read (``guard/git/repo.py`` ``_names_itself``);
one that moves it elsewhere — where the gitlinks the guard read are not — stays refused.

Each attack arms a trap in a submodule made the ordinary way, and runs three times, as in
``test_git_drivers.py``: **control** — plain git (the attack's own control command) fires the
trap; **guard** — plain git with the guard's ``exec_args`` fires nothing; **engine** — the real
engine in the sandbox (build profile, the project writable by the call's uid) fires nothing and
``status``, ``diff`` and ``log`` all succeed.  A functional test checks the answers against plain
git for populated and unpopulated submodules.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from parism.config import load_config
from parism.guard import check
from tests.security.sandbox.gitrepos import GIT_ENV, Trap, append, dirty, fired, git, make_engine, make_repo, own, \
    workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
__all__ = ["workspace"]  # the fixture, used by name

QUERIES = (("status",), ("diff",), ("log", "--oneline"), ("status", "--porcelain=v2"))


def with_submodule(ws: Path, attributes: str = "") -> tuple[Path, Path, Path]:
    """(top, its submodule's work tree, the submodule's git dir) — ``git submodule add``."""
    make_repo(ws / "lib", attributes)
    top = make_repo(ws / "repo")
    git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../lib", "sub")
    git(top, "commit", "-q", "-m", "add sub")
    gitdir = top / ".git" / "modules" / "sub"
    assert "worktree = ../../../sub" in (gitdir / "config").read_text()  # what the refusal was about
    return top, top / "sub", gitdir


def sub_filter(ws: Path, trap: Trap) -> Path:
    top, sub, gitdir = with_submodule(ws, "data.txt filter=sm\n")
    append(gitdir / "config", f'[filter "sm"]\n\tclean = {trap("sub-filter")}\n\tsmudge = cat\n')
    dirty(sub)
    return top


def sub_fsmonitor(ws: Path, trap: Trap) -> Path:
    top, sub, gitdir = with_submodule(ws)
    git(sub, "config", "core.fsmonitor", trap("sub-fsmonitor", False))
    return top


def sub_textconv(ws: Path, trap: Trap) -> Path:
    top, sub, gitdir = with_submodule(ws, "data.txt diff=tc\n")
    git(sub, "config", "diff.tc.textconv", trap("sub-textconv"))
    (sub / "data.txt").write_text("changed\n")
    return top


def sub_update_command(ws: Path, trap: Trap) -> Path:
    top, sub, _gitdir = with_submodule(ws)
    git(top, "config", "submodule.sub.update", f"!{trap('sub-update', False)}")
    (sub / "data.txt").write_text("newer\n")
    git(sub, "commit", "-q", "-am", "newer")  # HEAD differs from the recorded commit: update runs it
    return top


def sub_worktree_moved(ws: Path, trap: Trap) -> Path:
    """The submodule's core.worktree names another directory, whose nested repository (a gitlink
    of the submodule's index) has a filter: git enters it there, not where the guard looked."""
    lib = make_repo(ws / "lib")
    make_repo(lib / "low")
    git(lib, "add", "low")
    git(lib, "commit", "-q", "-m", "low")
    top = make_repo(ws / "repo")
    git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../lib", "sub")
    git(top, "commit", "-q", "-m", "add sub")
    elsewhere = ws / "elsewhere"
    shutil.copytree(top / "sub", elsewhere, ignore=shutil.ignore_patterns(".git"))
    low = make_repo(elsewhere / "low2", "data.txt filter=mv\n")
    shutil.rmtree(elsewhere / "low")
    low.rename(elsewhere / "low")
    append(elsewhere / "low" / ".git/config", f'[filter "mv"]\n\tclean = {trap("moved")}\n')
    dirty(elsewhere / "low")
    git(top / "sub", "config", "core.worktree", str(elsewhere))
    return top


@dataclass(frozen=True)
class Attack:
    build: Callable[[Path, Trap], Path]
    control: tuple[str, ...]  # what plain git runs to show the trap is armed
    fires: str
    refused: bool = False


ATTACKS = {
    "submodule filter": Attack(sub_filter, ("status",), "sub-filter"),
    "submodule fsmonitor": Attack(sub_fsmonitor, ("status",), "sub-fsmonitor"),
    "submodule textconv": Attack(sub_textconv, ("-c", "diff.submodule=diff", "diff"), "sub-textconv"),
    "submodule.<name>.update = !command": Attack(sub_update_command, ("submodule", "update"), "sub-update"),
    "submodule work tree moved elsewhere": Attack(sub_worktree_moved, ("status",), "moved", refused=True),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_control_plain_git_fires_the_trap(workspace: tuple[Path, Path, Trap], name: str) -> None:
    ws, markers, trap = workspace
    attack = ATTACKS[name]
    repo = attack.build(ws, trap)
    git(repo, *attack.control, check_rc=False)
    assert attack.fires in fired(markers), f"{name}: the trap is not armed"


@pytest.mark.parametrize("name", list(ATTACKS))
def test_guard_exec_args_disarm_plain_git(workspace: tuple[Path, Path, Trap], name: str) -> None:
    ws, markers, trap = workspace
    attack = ATTACKS[name]
    repo = attack.build(ws, trap)
    cfg = load_config(cwd=str(repo), environ={"HOME": str(ws.parent), "PARISM_ALLOWED_PATHS": str(ws)})
    for query in QUERIES:
        decision = check("git", list(query), str(repo), cfg)
        if attack.refused:
            if query[0] == "log":  # log enters no submodule: nothing of it is read or run
                continue
            assert decision.failure is not None and decision.failure.reason == "arg_not_allowed", decision.failure
            assert "moves its work tree elsewhere" in decision.failure.message
            continue
        assert decision.allowed, (query, decision.failure)
        result = subprocess.run(["git", *decision.exec_args], cwd=repo, env={**os.environ, **GIT_ENV},
                                capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
        assert fired(markers) == [], (query, result.stderr[-400:])
        assert result.returncode == 0, (query, result.stderr[-400:])


@pytest.mark.parametrize("name", list(ATTACKS))
def test_engine_in_the_sandbox_fires_nothing(workspace: tuple[Path, Path, Trap], name: str) -> None:
    ws, markers, trap = workspace
    attack = ATTACKS[name]
    repo = attack.build(ws, trap)
    own(ws)
    engine = make_engine(ws)
    for query in QUERIES:
        env = engine.run("git", list(query), cwd=str(repo))
        text = f"{env.stdout.raw if env.stdout else ''}{env.stderr.raw if env.stderr else ''}"
        assert fired(markers) == [] and "TRAPFIRED" not in text, (query, text[-400:])
        if attack.refused and query[0] != "log":
            assert env.failure is not None and env.failure.reason == "arg_not_allowed", env.failure
            continue
        assert env.failure is None and env.exitCode == 0, (query, env.failure, text[-400:])


def _plain(repo: Path, *args: str) -> str:
    return git(repo, *args).stdout.decode()


@pytest.mark.parametrize("populated", [True, False])
def test_status_diff_log_match_plain_git(workspace: tuple[Path, Path, Trap], populated: bool) -> None:
    """Populated (changed inside the submodule, a new commit there) and unpopulated (a clone
    without --recurse-submodules): Parism's rows are plain git's porcelain/log answers."""
    ws, _markers, _trap = workspace
    top, sub, _gitdir = with_submodule(ws)
    if populated:
        (sub / "data.txt").write_text("changed in sub\n")
        (top / "data.txt").write_text("changed in top\n")
    else:
        git(ws, "clone", "-q", str(top), str(ws / "clone"))
        top = ws / "clone"
        assert list((top / "sub").iterdir()) == []
    own(ws)
    engine = make_engine(ws)
    env = engine.run("git", ["status", "--porcelain=v2"], cwd=str(top), format="json")
    assert env.failure is None, env.failure
    want = [line.rsplit(" ", 1)[-1] for line in _plain(top, "status", "--porcelain=v2").splitlines()]
    got = [row["path"] for row in env.stdout.parsed["entries"]]
    assert sorted(got) == sorted(want) and (("sub" in want) == populated), (got, want)
    env = engine.run("git", ["log", "--format=%H"], cwd=str(top), format="json")
    assert env.failure is None, env.failure
    assert env.stdout.raw.split() == _plain(top, "log", "--format=%H").split()
    env = engine.run("git", ["diff", "--numstat"], cwd=str(top), format="json")
    assert env.failure is None, env.failure
    assert env.stdout.raw == _plain(top, "-c", "diff.submodule=short", "diff", "--numstat")
