"""Git's reading of a repository (``gitrepo.read_repo``), kept while nothing it read has changed.

Why: the reading runs two or three git processes before every git call — 5–11 ms of wall time,
most of Parism's own work on ``git log`` (docs/performance.md).  The answer depends only on
files, so it is kept per start directory together with *witnesses*: the stat of every file and
directory whose change could change git's answer.  A kept answer is used only while every
witness still has the ``(st_dev, st_ino, st_mode, st_size, st_mtime_ns, st_ctime_ns)`` it had
(``ctime`` too: ``touch -d`` can put an ``mtime`` back, nothing can put a ``ctime`` back).

What is witnessed (anything else that git's reading depends on makes the answer not kept):

- each directory from the start up to the work tree, with no ``.git`` or ``HEAD`` below the
  work tree (a ``.git`` git skipped could become valid in place); a new entry in any of them
  changes its ``mtime`` — a ``.git`` created on the way up moves git to another repository;
- the work tree's ``.git`` (a directory, a symlink or a ``gitdir:`` file), the git directory,
  its ``HEAD`` (a HEAD broken in place sends git's discovery further up), ``config`` and
  ``config.worktree`` (an empty file is no origin, yet git reads it);
- every configuration file git reported (``--show-origin``), followed and not, with its
  directory (a file renamed into place);
- for ``status``/``diff`` the index, and only when it holds no gitlink (submodules and embedded
  repositories are read every time).

Not kept: answers naming includes (``include.*``, ``includeIf.*``: a missing include file or a
branch condition is not a file git reports), linked worktrees (``commondir``), refusals and
"not a repository".

Timestamps are coarse (a kernel tick; one or two seconds on some file systems), so a write just
after git's read could leave a witness unchanged: an answer is kept only when every witness was
last changed :data:`SETTLE_NS` before the reading started.  Its witnesses are stat'ed after the
reading, so a change during it is either seen by git or too recent to be kept.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace

from parism.guard.git.ask import Asker
from parism.guard.git.repo import Repo, RepoProblem, read_repo

#: How long before a reading every witness must have last changed (covers 2 s timestamps).
SETTLE_NS = 2_100_000_000
#: Start directories kept per engine.
MAX_ENTRIES = 64

Signature = tuple[int, int, int, int, int, int] | None  # None: the path does not exist


@dataclass(frozen=True)
class Witness:
    path: str
    follow: bool  # os.stat (through symlinks) rather than os.lstat
    sig: Signature


def signature(path: str, follow: bool) -> Signature:
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _chain(start: str, top: str) -> list[str] | None:
    """The directories from ``start`` up to ``top`` (both included); None: ``top`` is not
    ``start`` or one of its ancestors."""
    out, path = [], start
    while True:
        out.append(path)
        if path == top:
            return out
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _paths(start: str, repo: Repo, enter_submodules: bool) -> list[tuple[str, bool]] | None:
    """(path, follow) of every witness of ``repo`` read from ``start``; None: not keepable."""
    if repo.gitlinks or len(repo.repos) > 1 or os.path.lexists(os.path.join(repo.git_dir, "commondir")):
        return None
    chain = _chain(start, repo.work_dir)
    if chain is None:
        return None
    out = [(level, False) for level in chain]
    for level in chain[:-1]:  # below the work tree: nothing git's discovery could stop at
        if any(os.path.lexists(os.path.join(level, name)) for name in (".git", "HEAD")):
            return None
    dot_git = os.path.join(repo.work_dir, ".git")
    out += [(dot_git, False), (dot_git, True), (repo.git_dir, True)]
    files = [os.path.join(repo.git_dir, name) for name in ("HEAD", "config", "config.worktree")]
    if enter_submodules:
        files.append(os.path.join(repo.git_dir, "index"))
    for path in (*files, *sorted(repo.origins)):
        out += [(path, False), (path, True), (os.path.dirname(path), False)]
    return out


class RepoCache:
    """``read_repo`` answers per (start, enter_submodules, the asker's identity and view),
    checked against their witnesses on every use (thread-safe; the engine's calls run in worker
    threads).  The asker's ``key`` is in the key: an answer git gave one uid in one view (what
    that uid could read there) is never served to a call with another."""

    def __init__(self, *, max_entries: int = MAX_ENTRIES, settle_ns: int = SETTLE_NS,
                 clock: Callable[[], int] = time.time_ns) -> None:
        self._entries: OrderedDict[tuple[str, bool, Hashable], tuple[Repo, tuple[Witness, ...]]] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries
        self._settle = settle_ns
        self._clock = clock
        self.hits = 0
        self.misses = 0

    def read(self, start: str, asker: Asker, *, enter_submodules: bool) -> Repo | RepoProblem | None:
        key = (start, enter_submodules, asker.key)
        with self._lock:
            entry = self._entries.get(key)
        if entry is not None and all(signature(w.path, w.follow) == w.sig for w in entry[1]):
            with self._lock:
                self._entries.move_to_end(key)
                self.hits += 1
            return _copy(entry[0])
        began = self._clock()
        repo = read_repo(start, asker, enter_submodules=enter_submodules)
        self.misses += 1
        witnesses = self._witnesses(start, repo, enter_submodules, began)
        with self._lock:
            if witnesses is None:
                self._entries.pop(key, None)
            else:
                self._entries[key] = (_copy(repo), witnesses)  # type: ignore[arg-type]
                self._entries.move_to_end(key)
                while len(self._entries) > self._max:
                    self._entries.popitem(last=False)
        return repo

    def _witnesses(self, start: str, repo: Repo | RepoProblem | None, enter_submodules: bool,
                   began: int) -> tuple[Witness, ...] | None:
        if not isinstance(repo, Repo) or repo.includes:
            return None
        paths = _paths(start, repo, enter_submodules)
        if paths is None:
            return None
        witnesses = tuple(Witness(p, follow, signature(p, follow)) for p, follow in paths)
        settled = began - self._settle
        if any(w.sig is not None and max(w.sig[4], w.sig[5]) >= settled for w in witnesses):
            return None  # changed too recently for its timestamps to tell a later change
        return witnesses


def _copy(repo: Repo) -> Repo:
    """A copy whose lists a caller may not share with the kept answer."""
    return replace(repo, overrides=list(repo.overrides), repos=list(repo.repos),
                   origins=set(repo.origins), configs=list(repo.configs), sealed=list(repo.sealed))
