"""What git reads in the sandbox is what the guard checked (issue 9: the sanitised config copy).

The guard asks git which programs a repository's configuration names and disarms them with
``-c``; the command's git reads the configuration files again, later.  Each attack here changes
a configuration file *between* the two readings — at the worst moment, deterministically: the
guard's reading (``read_repo``, as the cache calls it) is wrapped so the file is rewritten right after git answered the
guard, which is what a concurrent build step (a file in the work tree) or the agent's own
editor (any file) can do in that window.  Runs per attack:

* **control** — plain git with the guard's ``exec_args`` after the change: the trap fires, so
  the ``-c`` settings alone do not hold and the test can fail;
* **pinning off** — the real engine in the sandbox without the copies and sealed gitlinks: the
  trap fires there too (seen on stderr: the markers lie outside the repository, read-only to
  its sandbox);
* **engine** — the real engine in the sandbox: the git that runs reads the sanitised copy
  bound over the configuration, a gitlink it did not enter when checked is an empty read-only
  directory, nothing fires and the query succeeds.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import parism.guard as guard_mod
from parism.config import load_config
import parism.guard.git.cache as gitcache
from parism.guard.git.repo import read_repo
from tests.security.sandbox.gitrepos import (GIT_ENV, Trap, dirty, fired, git, make_engine, make_repo, own,
                                             workspace)

pytestmark = [pytest.mark.skipif(shutil.which("git") is None, reason="git not installed"),
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")]
__all__ = ["workspace"]  # the fixture, used by name

BENIGN = "[user]\n\tname = someone\n"


def _filter(trap: Trap, name: str) -> str:
    return f'[filter "late"]\n\tclean = {trap(name)}\n'


@dataclass(frozen=True)
class Late:
    """A repository whose configuration is benign when checked; ``swap`` arms it afterwards."""

    repo: Path
    swap: Callable[[], None]


def include_in_work_tree(ws: Path, trap: Trap) -> Late:
    """``.git/config`` includes a file of the project (writable in build)."""
    repo = make_repo(ws / "repo", "data.txt filter=late\n")
    with (repo / ".git/config").open("a") as fh:
        fh.write("[include]\n\tpath = ../settings.cfg\n")
    (repo / "settings.cfg").write_text(BENIGN)
    return Late(repo, lambda: (repo / "settings.cfg").write_text(_filter(trap, "include-late")))


def config_symlink_into_work_tree(ws: Path, trap: Trap) -> Late:
    """``.git/config`` is a symlink to a file of the project."""
    repo = make_repo(ws / "repo", "data.txt filter=late\n")
    real = repo / "gitconfig"
    real.write_text((repo / ".git/config").read_text())
    (repo / ".git/config").unlink()
    (repo / ".git/config").symlink_to("../gitconfig")
    return Late(repo, lambda: real.write_text(real.read_text() + _filter(trap, "symlink-late")))


def config_rewritten(ws: Path, trap: Trap) -> Late:
    """``.git/config`` itself, rewritten by the agent's own file tools."""
    repo = make_repo(ws / "repo", "data.txt filter=late\n")
    config = repo / ".git/config"
    return Late(repo, lambda: config.write_text(config.read_text() + _filter(trap, "config-late")))


def worktree_config_rewritten(ws: Path, trap: Trap) -> Late:
    """A linked worktree's ``config.worktree`` (extensions.worktreeConfig)."""
    main = make_repo(ws / "main", "data.txt filter=late\n")
    git(main, "worktree", "add", "-q", str(ws / "wt"))
    git(main, "config", "extensions.worktreeConfig", "true")
    git(ws / "wt", "config", "--worktree", "user.name", "someone")
    path = main / ".git/worktrees/wt/config.worktree"
    return Late(ws / "wt", lambda: path.write_text(path.read_text() + _filter(trap, "worktree-late")))


def embedded_include_rewritten(ws: Path, trap: Trap) -> Late:
    """An embedded repository (entered by status) includes a file of its work tree."""
    top = make_repo(ws / "repo")
    emb = make_repo(top / "emb", "data.txt filter=late\n")
    with (emb / ".git/config").open("a") as fh:
        fh.write("[include]\n\tpath = ../local.cfg\n")
    (emb / "local.cfg").write_text(BENIGN)
    git(top, "add", "emb")
    git(top, "commit", "-q", "-m", "embed")
    dirty(emb)
    return Late(top, lambda: (emb / "local.cfg").write_text(_filter(trap, "embedded-late")))


def submodule_populated_late(ws: Path, trap: Trap) -> Late:
    """A gitlink whose directory is empty when checked (git does not enter it) is populated
    with a repository of its own (its config naming a filter) before the run."""
    top = make_repo(ws / "repo")
    emb = make_repo(top / "emb", "data.txt filter=late\n")
    git(top, "add", "emb")
    git(top, "commit", "-q", "-m", "embed")
    shutil.move(str(emb), str(ws / "emb.later"))
    emb.mkdir()
    later = ws / "emb.later"
    with (later / ".git/config").open("a") as fh:
        fh.write(_filter(trap, "populated-late"))
    dirty(later)

    def populate() -> None:
        for item in later.iterdir():
            shutil.move(str(item), str(emb / item.name))
    return Late(top, populate)


ATTACKS = {
    "include in the work tree": (include_in_work_tree, "include-late"),
    ".git/config symlinked into the work tree": (config_symlink_into_work_tree, "symlink-late"),
    ".git/config rewritten": (config_rewritten, "config-late"),
    "config.worktree rewritten": (worktree_config_rewritten, "worktree-late"),
    "embedded repository's include": (embedded_include_rewritten, "embedded-late"),
    "submodule populated after the check": (submodule_populated_late, "populated-late"),
}


@pytest.fixture
def late(workspace: tuple[Path, Path, Trap], request: pytest.FixtureRequest,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path, Late, str]]:
    """(ws, markers, attack, marker): the guard's reading arms the attack once git answered it."""
    ws, markers, trap = workspace
    build, marker = ATTACKS[request.param]
    attack = build(ws, trap)
    dirty(attack.repo)

    def reading_then_swap(*args: object, **kwargs: object) -> object:
        answer = read_repo(*args, **kwargs)  # type: ignore[arg-type]
        attack.swap()
        return answer

    monkeypatch.setattr(gitcache, "read_repo", reading_then_swap)
    yield ws, markers, attack, marker


@pytest.mark.parametrize("late", list(ATTACKS), indirect=True)
def test_control_the_guards_settings_alone_let_the_late_config_fire(late: tuple[Path, Path, Late, str]) -> None:
    ws, markers, attack, marker = late
    cfg = load_config(cwd=str(attack.repo), environ={"HOME": str(ws.parent), "PARISM_ALLOWED_PATHS": str(ws)})
    decision = guard_mod.check("git", ["status"], str(attack.repo), cfg)
    assert decision.allowed, decision.failure
    subprocess.run(["git", *decision.exec_args], cwd=attack.repo, env=GIT_ENV | {"PATH": "/usr/bin:/bin"},
                   capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert fired(markers) == [marker]


@pytest.mark.parametrize("late", list(ATTACKS), indirect=True)
def test_control_without_the_pinning_the_sandboxed_git_fires(late: tuple[Path, Path, Late, str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    ws, _markers, attack, marker = late
    monkeypatch.setattr(guard_mod, "_pin_reading", lambda decision, repo: None)
    own(ws)
    env = make_engine(ws).run("git", ["status"], cwd=str(attack.repo))
    # the trap runs (the markers are read-only from the repository's sandbox: it says so on stderr)
    assert env.stderr is not None and f"TRAPFIRED-{marker}" in (env.stderr.raw or ""), env


@pytest.mark.parametrize("late", list(ATTACKS), indirect=True)
def test_engine_git_reads_the_checked_copy(late: tuple[Path, Path, Late, str]) -> None:
    ws, markers, attack, _marker = late
    own(ws)
    env = make_engine(ws).run("git", ["status", "--porcelain"], cwd=str(attack.repo))
    text = f"{env.stdout.raw if env.stdout else ''}{env.stderr.raw if env.stderr else ''}"
    assert fired(markers) == [] and "TRAPFIRED" not in text, text[-400:]
    assert env.failure is None and env.exitCode == 0, (env.failure, text[-400:])


def test_the_copy_changes_nothing_git_reports(workspace: tuple[Path, Path, Trap]) -> None:
    """Remotes, an included user setting and a worktree's branch come out as plain git prints
    them (the copy holds every entry that names no program)."""
    ws, _markers, _trap = workspace
    repo = make_repo(ws / "repo")
    git(repo, "remote", "add", "origin", "https://example.invalid/a b \"q\".git")
    git(repo, "config", "remote.origin.pushurl", "ssh://example.invalid/x\\y")
    with (repo / ".git/config").open("a") as fh:
        fh.write('[include]\n\tpath = extra.cfg\n[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n')
    (repo / ".git/extra.cfg").write_text('[remote "up"]\n\turl = "  spaced ; # value"\n\tfetch = +refs/*:refs/up/*\n')
    expected = git(repo, "remote", "-v").stdout.decode()
    assert "spaced ; # value" in expected and "a b" in expected  # the control reads all three
    own(ws)
    env = make_engine(ws).run("git", ["remote", "-v"], cwd=str(repo))
    assert env.failure is None and env.stdout is not None
    assert env.stdout.raw == expected



def test_a_gitlink_without_a_directory_of_its_own_is_refused(workspace: tuple[Path, Path, Trap]) -> None:
    """No empty directory can be shown there (bwrap would have to create it in the project):
    status and diff are refused rather than let a repository made there be entered unread;
    log (which enters no submodule) still runs. Control: plain git enters one made there."""
    ws, markers, trap = workspace
    top = make_repo(ws / "repo")
    emb = make_repo(top / "emb", "data.txt filter=late\n")
    git(top, "add", "emb")
    git(top, "commit", "-q", "-m", "embed")
    shutil.move(str(emb), str(ws / "emb.later"))
    cfg = load_config(cwd=str(top), environ={"HOME": str(ws.parent), "PARISM_ALLOWED_PATHS": str(ws)})
    for query in (["status"], ["diff"]):
        decision = guard_mod.check("git", query, str(top), cfg)
        assert decision.failure is not None and decision.failure.reason == "arg_not_allowed", query
        assert "has no directory of its own" in decision.failure.message
    assert guard_mod.check("git", ["log", "-1"], str(top), cfg).allowed
    shutil.move(str(ws / "emb.later"), str(emb))  # the repository appears there
    with (emb / ".git/config").open("a") as fh:
        fh.write(_filter(trap, "missing-late"))
    dirty(emb)
    git(top, "status", check_rc=False)
    assert fired(markers) == ["missing-late"]


def test_a_git_dir_made_below_the_work_tree_after_the_check_is_not_discovered(
        workspace: tuple[Path, Path, Trap], monkeypatch: pytest.MonkeyPatch) -> None:
    """git run in a subdirectory of its work tree discovers the nearest ``.git`` on the way up:
    one made in between after the check (a concurrent build can) would be another repository,
    read by nobody. The guard names the repository it read (``--git-dir``, ``--work-tree``).
    Control: the same arguments without those two fire the trap."""
    ws, markers, trap = workspace
    repo = make_repo(ws / "repo")
    sub = repo / "sub"
    evil = make_repo(ws / "evil", "data.txt filter=late\n")
    with (evil / ".git/config").open("a") as fh:
        fh.write(_filter(trap, "discovered-late"))
    dirty(evil)
    shutil.copytree(evil, sub, ignore=shutil.ignore_patterns(".git"))  # its work tree, untracked in repo

    def reading_then_swap(*args: object, **kwargs: object) -> object:
        answer = read_repo(*args, **kwargs)  # type: ignore[arg-type]
        if not (sub / ".git").exists():
            shutil.copytree(evil / ".git", sub / ".git")
        return answer

    monkeypatch.setattr(gitcache, "read_repo", reading_then_swap)
    cfg = load_config(cwd=str(sub), environ={"HOME": str(ws.parent), "PARISM_ALLOWED_PATHS": str(ws)})
    decision = guard_mod.check("git", ["status"], str(sub), cfg)
    assert decision.allowed, decision.failure
    pins = [f"--git-dir={repo}/.git", f"--work-tree={repo}"]
    assert all(p in decision.exec_args for p in pins), decision.exec_args
    plain_env = GIT_ENV | {"PATH": "/usr/bin:/bin"}
    unpinned = [a for a in decision.exec_args if a not in pins]
    subprocess.run(["git", *unpinned], cwd=sub, env=plain_env, capture_output=True, timeout=60)
    assert fired(markers) == ["discovered-late"]  # control
    (markers / "discovered-late").unlink()
    subprocess.run(["git", *decision.exec_args], cwd=sub, env=plain_env, capture_output=True, timeout=60)
    assert fired(markers) == []  # pinned even without a sandbox
    shutil.rmtree(sub / ".git")
    own(ws)
    env = make_engine(ws).run("git", ["status", "--porcelain"], cwd=str(sub))
    text = f"{env.stdout.raw if env.stdout else ''}{env.stderr.raw if env.stderr else ''}"
    assert fired(markers) == [] and "TRAPFIRED" not in text, text[-400:]
    assert env.failure is None and env.exitCode == 0, (env.failure, text[-400:])
    shutil.rmtree(sub / ".git")
    rev_parse = guard_mod.check("git", ["rev-parse", "--git-common-dir"], str(sub), cfg).exec_args
    assert not any(a.startswith(("--git-dir=", "--work-tree=")) for a in rev_parse)  # it runs nothing
