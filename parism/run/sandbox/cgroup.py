"""A pids cgroup per sandbox, for the one identity rlimits cannot bound: host uid 0.

The kernel never applies RLIMIT_NPROC to processes of host uid 0, user namespace or not
(verified: with nproc = 5, a ``root_masked`` command forked 20 children). So when the command
keeps uid 0 (identity rule ``root_masked``), bwrap is started inside a fresh pids cgroup whose
``pids.max`` is the profile's process limit. Only root gets there, and root may create cgroups.
The wrapper joins the cgroup *before* exec'ing choom/bwrap, so every process of the sandbox is
born inside it.

Removal needs the cgroup empty, zombies included; a killed sandbox's PID 1 is reaped by the
host's init, which may take a moment. A cgroup that is still busy is retried on the next
create and at exit instead of blocking the call.
"""

from __future__ import annotations

import atexit
import itertools
import os
import time
from functools import lru_cache

V1_PIDS = "/sys/fs/cgroup/pids"
V2_ROOT = "/sys/fs/cgroup"
_counter = itertools.count()
_pending: list[str] = []  # cgroups whose removal has to be retried


@lru_cache(maxsize=1)
def pids_root() -> str | None:
    """Where per-sandbox pids cgroups can be made: cgroup v1's pids hierarchy, or the v2 root
    when the pids controller is enabled for its children. None when neither is writable."""
    if os.path.isdir(V1_PIDS) and os.access(V1_PIDS, os.W_OK):
        return V1_PIDS
    try:
        with open(os.path.join(V2_ROOT, "cgroup.subtree_control")) as f:
            enabled = f.read().split()
    except OSError:
        return None
    return V2_ROOT if "pids" in enabled and os.access(V2_ROOT, os.W_OK) else None


class PidsCgroup:
    """One sandbox's cgroup: created with its limit, removed once the sandbox is gone."""

    def __init__(self, root: str, limit: int) -> None:
        self.path = os.path.join(root, f"parism-{os.getpid()}-{next(_counter)}")
        os.mkdir(self.path, 0o755)
        with open(os.path.join(self.path, "pids.max"), "w") as f:
            f.write(str(limit))

    @classmethod
    def create(cls, limit: int | None) -> "PidsCgroup | None":
        root = pids_root()
        if root is None or not limit:
            return None
        sweep_pending()
        try:
            return cls(root, limit)
        except OSError:
            return None

    def wrapper(self) -> list[str]:
        """argv prefix: move this process into the cgroup, then exec the rest."""
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', os.path.join(self.path, "cgroup.procs")]

    def remove(self, timeout: float = 0.05) -> None:
        """rmdir once the last process has left; still busy after ``timeout`` → retried later."""
        if not _rmdir(self.path, timeout):
            _pending.append(self.path)


def _rmdir(path: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)


def sweep_pending(timeout: float = 0.0) -> None:
    """Retry the removal of cgroups that were still busy."""
    for path in list(_pending):
        if _rmdir(path, timeout):
            _pending.remove(path)


atexit.register(sweep_pending, 1.0)
