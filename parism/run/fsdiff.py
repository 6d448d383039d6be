"""``includeDiff`` (contract §3.4): what changed in ``cwd`` while the command ran — bounded.

v1 walked with ``stat`` (following symlinks) and without any bound. Here the walk uses
``lstat`` semantics (``os.scandir`` with ``follow_symlinks=False``), stops at depth 2 and at
``MAX_ENTRIES`` entries, and reports ``truncated`` when it stopped early, so a huge tree costs
bounded time and a symlink can never lead the walk outside the tree.

The walk runs as the server (often root) but reports to the call: it descends only into the
directories the call's own uid/gid may list (``may_list``, the engine's from the sandbox's
identity), so a root-only directory in the workspace never shows the names that change in it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from parism.wire.envelope import FsDiff

MAX_DEPTH = 2
MAX_ENTRIES = 10_000


@dataclass
class Snapshot:
    mtimes: dict[str, int]
    truncated: bool


def snapshot(root: str, max_entries: int = MAX_ENTRIES,
             may_list: Callable[[os.stat_result], bool] | None = None) -> Snapshot:
    """path → mtime (ms) for ``root`` and two levels below it; ``may_list(stat)``: whether the
    call's identity may list a directory (None: this process's identity is the call's)."""
    mtimes: dict[str, int] = {}
    stack: list[tuple[str, int]] = [(root, 0)]
    while stack:
        path, depth = stack.pop()
        try:
            if may_list is not None and not may_list(os.stat(path, follow_symlinks=False)):
                continue
        except OSError:
            continue
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            if len(mtimes) >= max_entries:
                return Snapshot(mtimes, True)
            try:
                st = entry.stat(follow_symlinks=False)
                mtimes[entry.path] = int(st.st_mtime_ns // 1_000_000)
                if depth + 1 <= MAX_DEPTH and entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, depth + 1))
            except OSError:
                continue
    return Snapshot(mtimes, False)


def diff(before: Snapshot, after: Snapshot) -> FsDiff:
    b, a = before.mtimes, after.mtimes
    return FsDiff(
        created=sorted(set(a) - set(b)),
        deleted=sorted(set(b) - set(a)),
        modified=sorted(p for p in set(a) & set(b) if a[p] != b[p]),
        truncated=True if before.truncated or after.truncated else None,
    )
