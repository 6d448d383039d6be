"""Git's reading kept between calls (parism/guard/git/cache.py): used while nothing git read has
changed, read again after every kind of change that changes git's answer.

Oracle: ``read_repo`` run fresh (git's own reading now).  Each change is checked to change that
answer, so a cache that missed it would return the old one and fail.  The cache's clock runs 10 s
ahead (the repositories here were just written; in use an answer is kept only once its files are
:data:`SETTLE_NS` old); changes are made a few ticks after the writes they replace, so their
timestamps differ — the margin the settle rule gives in use.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from parism.run.childenv import build_child_env
from parism.config import load_config
from parism.guard.git.cache import RepoCache
from parism.guard.git.ask import Answer, Asker, Job, direct_asker
from parism.guard.git.repo import FORCED_FLAGS, Repo, read_repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "A",
           "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com"}
AHEAD_NS = 10_000_000_000
TICK_S = 0.03  # longer than a kernel tick: a later write gets a later timestamp
PAD = "# " + "x" * 50 + "\n"  # a config line an in-place edit turns into a filter of the same size
FILTER = '[filter "f"]\n\tclean = /bin/false-xxxxxxxxxxxxxxxxxxx\n'
assert len(PAD) == len(FILTER)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "safe.directory=*", *args], cwd=cwd, env={**os.environ, **GIT_ENV},
                   check=True, capture_output=True, timeout=30)


def repo_at(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("a\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "one")
    return path


class Counting:
    """The engine's asker (real git, asked as this process), counting the questions asked."""

    def __init__(self, tmp: Path) -> None:
        cfg = load_config(cwd=str(tmp), environ={"HOME": str(tmp)})
        self.inner: Asker = direct_asker(build_child_env(cfg, os.environ).env, FORCED_FLAGS)
        self.key = self.inner.key
        self.calls = 0

    def ask(self, jobs: list[Job]) -> list[Answer] | str:
        self.calls += len(jobs)
        return self.inner.ask(jobs)


@pytest.fixture
def run(tmp_path: Path) -> Counting:
    return Counting(tmp_path)


def ahead() -> RepoCache:
    return RepoCache(clock=lambda: time.time_ns() + AHEAD_NS)


def in_place(path: Path, old: str, new: str, *, keep_mtime: bool = True) -> None:
    """Rewrite ``old`` as ``new`` (same length) inside the file, the inode, size and — when
    asked — the mtime kept: only the ctime can tell."""
    time.sleep(TICK_S)
    st = path.stat()
    text = path.read_text()
    assert len(old) == len(new) and old in text
    with path.open("r+") as fh:
        fh.write(text.replace(old, new))
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size) == (st.st_ino, st.st_size)


def test_an_unchanged_repository_is_read_once(tmp_path: Path, run: Counting) -> None:
    repo = repo_at(tmp_path / "r")
    cache = ahead()
    first = cache.read(str(repo), run, enter_submodules=False)
    asked = run.calls
    assert isinstance(first, Repo) and asked >= 2
    for _ in range(3):
        assert cache.read(str(repo), run, enter_submodules=False) == first
    assert run.calls == asked and cache.hits == 3
    assert first == read_repo(str(repo), run, enter_submodules=False)


def test_the_kept_answer_is_a_copy(tmp_path: Path, run: Counting) -> None:
    repo = repo_at(tmp_path / "r")
    cache = ahead()
    first = cache.read(str(repo), run, enter_submodules=False)
    assert isinstance(first, Repo)
    first.overrides.append(("x.y", "z"))
    first.origins.clear()
    again = cache.read(str(repo), run, enter_submodules=False)
    assert ("x.y", "z") not in again.overrides and again.origins  # type: ignore[union-attr]


def test_a_reading_of_fresh_files_is_not_kept(tmp_path: Path, run: Counting) -> None:
    """Real clock: the repository was written just now, so a later write within the same
    timestamp tick could leave every stat unchanged — git is asked again."""
    repo = repo_at(tmp_path / "r")
    cache = RepoCache()
    cache.read(str(repo), run, enter_submodules=False)
    asked = run.calls
    cache.read(str(repo), run, enter_submodules=False)
    assert run.calls == 2 * asked and cache.hits == 0


def _config_edited_in_place(tmp: Path) -> tuple[Path, object]:
    repo = repo_at(tmp / "r")
    with (repo / ".git/config").open("a") as fh:
        fh.write(PAD)
    return repo, lambda: in_place(repo / ".git/config", PAD, FILTER)


def _config_renamed_into_place(tmp: Path) -> tuple[Path, object]:
    repo = repo_at(tmp / "r")
    config = repo / ".git/config"

    def change() -> None:
        time.sleep(TICK_S)
        st = config.stat()
        spare = tmp / "config.new"
        spare.write_text(config.read_text() + FILTER)
        os.utime(spare, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.rename(spare, config)
    return repo, change


def _worktree_config_edited(tmp: Path) -> tuple[Path, object]:
    """An empty config.worktree is no origin (no entry), yet git reads it."""
    repo = repo_at(tmp / "r")
    git(repo, "config", "extensions.worktreeConfig", "true")
    (repo / ".git/config.worktree").write_text(PAD)
    return repo, lambda: in_place(repo / ".git/config.worktree", PAD, FILTER)


def _repository_below(tmp: Path) -> tuple[Path, object]:
    """A .git made between the start and the repository moves git to the new one."""
    repo = repo_at(tmp / "r")
    sub = repo / "sub" / "deeper"
    sub.mkdir(parents=True)

    def change() -> None:
        time.sleep(TICK_S)
        git(repo / "sub", "init", "-q")
        git(repo / "sub", "config", "filter.g.clean", "/bin/false")
    return sub, change


def _head_broken_in_place(tmp: Path) -> tuple[Path, object]:
    """The inner repository's HEAD made invalid in place: git's discovery goes on up to the outer
    repository, whose configuration names a filter."""
    outer = repo_at(tmp / "outer")
    git(outer, "config", "filter.outer.clean", "/bin/false")
    inner = repo_at(outer / "inner")
    head = inner / ".git/HEAD"
    text = head.read_text()
    return inner, lambda: in_place(head, text, "x" * len(text))


def _gitfile_retargeted(tmp: Path) -> tuple[Path, object]:
    """A ``gitdir:`` file pointing elsewhere, in place (same length paths)."""
    one, two = repo_at(tmp / "one"), repo_at(tmp / "two")
    git(two, "config", "filter.two.clean", "/bin/false")
    work = tmp / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {one}/.git\n")
    return work, lambda: in_place(work / ".git", f"{one}/.git", f"{two}/.git")


CHANGES = {
    "config edited in place (size and mtime kept)": _config_edited_in_place,
    "config renamed into place (mtime kept)": _config_renamed_into_place,
    "empty config.worktree filled in place": _worktree_config_edited,
    "a repository made below the cwd's repository": _repository_below,
    "HEAD broken in place (discovery goes further up)": _head_broken_in_place,
    "gitdir: file retargeted in place": _gitfile_retargeted,
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_every_change_git_would_see_is_seen(tmp_path: Path, run: Counting, name: str) -> None:
    start, change = CHANGES[name](tmp_path)
    cache = ahead()
    before = cache.read(str(start), run, enter_submodules=False)
    assert isinstance(before, Repo)
    assert cache.read(str(start), run, enter_submodules=False) == before and cache.hits == 1  # kept
    change()  # type: ignore[operator]
    truth = read_repo(str(start), run, enter_submodules=False)
    assert truth != before, "the change does not change git's answer: the test could not fail"
    assert cache.read(str(start), run, enter_submodules=False) == truth
    assert cache.hits == 1


def test_includes_are_read_every_time(tmp_path: Path, run: Counting) -> None:
    """A missing include file names no origin: creating it later is seen only by asking git."""
    repo = repo_at(tmp_path / "r")
    elsewhere = tmp_path / "elsewhere"  # no directory git's reading otherwise depends on
    elsewhere.mkdir()
    git(repo, "config", "include.path", str(elsewhere / "later.cfg"))
    cache = ahead()
    first = cache.read(str(repo), run, enter_submodules=False)
    (elsewhere / "later.cfg").write_text(FILTER)
    again = cache.read(str(repo), run, enter_submodules=False)
    assert cache.hits == 0 and again != first
    assert ("filter.f.clean", "") in again.overrides  # type: ignore[union-attr]


def test_submodules_are_read_every_time(tmp_path: Path, run: Counting) -> None:
    """status/diff enter populated gitlinks: a gitlink in the index keeps nothing."""
    top = repo_at(tmp_path / "top")
    repo_at(top / "emb")
    git(top, "add", "emb")
    git(top, "commit", "-q", "-m", "embed")
    cache = ahead()
    cache.read(str(top), run, enter_submodules=True)
    cache.read(str(top), run, enter_submodules=True)
    assert cache.hits == 0
    cache.read(str(top), run, enter_submodules=False)  # log enters none: kept
    cache.read(str(top), run, enter_submodules=False)
    assert cache.hits == 1


def test_status_sees_a_gitlink_added_to_the_index(tmp_path: Path, run: Counting) -> None:
    top = repo_at(tmp_path / "top")
    cache = ahead()
    before = cache.read(str(top), run, enter_submodules=True)
    assert cache.read(str(top), run, enter_submodules=True) == before and cache.hits == 1
    emb = repo_at(top / "emb")
    git(emb, "config", "filter.emb.clean", "/bin/false")
    time.sleep(TICK_S)
    git(top, "add", "emb")
    after = cache.read(str(top), run, enter_submodules=True)
    assert after == read_repo(str(top), run, enter_submodules=True) != before
    assert ("filter.emb.clean", "") in after.overrides  # type: ignore[union-attr]


def test_status_sees_an_index_rewritten_in_place(tmp_path: Path, run: Counting) -> None:
    """git writes its index by rename (the git directory changes too); written in place, only
    the index itself tells."""
    top = repo_at(tmp_path / "top")
    emb = repo_at(top / "emb")
    git(emb, "config", "filter.emb.clean", "/bin/false")
    index = top / ".git/index"
    plain = index.read_bytes()
    git(top, "add", "emb")
    linked = index.read_bytes()
    time.sleep(TICK_S)
    with index.open("r+b") as fh:  # back to the index without the gitlink, same inode
        fh.write(plain)
        fh.truncate()
    cache = ahead()
    before = cache.read(str(top), run, enter_submodules=True)
    assert cache.read(str(top), run, enter_submodules=True) == before and cache.hits == 1
    time.sleep(TICK_S)
    with index.open("r+b") as fh:
        fh.write(linked)
    after = cache.read(str(top), run, enter_submodules=True)
    assert after == read_repo(str(top), run, enter_submodules=True) != before
    assert ("filter.emb.clean", "") in after.overrides  # type: ignore[union-attr]


def test_linked_worktrees_and_refusals_are_not_kept(tmp_path: Path, run: Counting) -> None:
    main = repo_at(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    git(main, "config", "filter.x=y.clean", "/bin/false")  # refused: '=' in a driver name
    cache = ahead()
    for start in (tmp_path / "wt", main):
        cache.read(str(start), run, enter_submodules=False)
        cache.read(str(start), run, enter_submodules=False)
    assert cache.hits == 0


def test_bounded(tmp_path: Path, run: Counting) -> None:
    cache = RepoCache(max_entries=2, clock=lambda: time.time_ns() + AHEAD_NS)
    repos = [repo_at(tmp_path / f"r{i}") for i in range(3)]
    for repo in repos:
        cache.read(str(repo), run, enter_submodules=False)
    asked = run.calls
    cache.read(str(repos[0]), run, enter_submodules=False)  # the oldest was dropped
    assert run.calls > asked and cache.hits == 0
