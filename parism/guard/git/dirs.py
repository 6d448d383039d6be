"""Every repository data directory below a writable working directory (issue 9, item 6).

In ``build`` the project is writable but its git data must not be: a hook, a config line or a
rewritten ref in *any* ``.git`` would run or mislead the next git call — and git enters nested
submodules and embedded repositories on its own.  So the guard lists every ``.git`` under the
cwd (directories, ``gitdir:`` files and the directories they lead to inside the cwd) and the
sandbox binds each read-only over the writable project (``Decision.git_dirs``).  The walk does
not follow symlinks (a symlinked ``.git`` adds its target when that lies inside the cwd) and
stops at ``MAX_DIRS`` directories: a tree too large to walk is refused rather than half-covered.
"""

from __future__ import annotations

import os

MAX_DIRS = 100_000


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def gitdir_target(path: str) -> str | None:
    """Where a ``gitdir: <path>`` file leads (realpath), or None for anything else."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            line = fh.read(4096).strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.realpath(os.path.join(os.path.dirname(path), line[7:].strip()))


def git_dirs_below(root: str, max_dirs: int = MAX_DIRS) -> tuple[str, ...] | None:
    """Every ``.git`` under ``root`` (a realpath) and what it leads to inside ``root``, sorted;
    None when the tree holds more than ``max_dirs`` directories."""
    found: set[str] = set()
    pending = [root]
    seen = 0
    while pending:
        current = pending.pop()
        seen += 1
        if seen > max_dirs:
            return None
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if entry.name == ".git":
                target = os.path.realpath(entry.path) if entry.is_symlink() else None
                if entry.is_symlink():
                    if target and _inside(target, root):
                        found.add(target)
                    continue
                found.add(entry.path)
                if entry.is_file(follow_symlinks=False):
                    target = gitdir_target(entry.path)
                    if target and _inside(target, root):
                        found.add(target)
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
    # a directory bound read-only covers what lies inside it (a leftover duplicate is harmless)
    kept: list[str] = []
    for path in sorted(found):
        if not (kept and _inside(path, kept[-1])):
            kept.append(path)
    return tuple(kept)
