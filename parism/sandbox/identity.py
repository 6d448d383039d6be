"""Who a sandboxed command runs as (never with root's file access to the host).

bwrap started by root keeps root's identity on the host side of the user namespace: uid 0
inside maps to host uid 0, so every root-owned 0600/0640 file is readable as its owner, even
with all capabilities dropped (sandbox-notes §2.6, verified). Hence the rules, first match wins:

1. ``server_user`` — the server is not root: run as the server's own uid.
2. ``workspace_owner`` — root, and the working directory belongs to someone else: run as that
   owner, so the build profile can write the project it was given.
3. ``unprivileged_uid`` — root, root-owned workspace, and the unprivileged uid (default
   ``nobody``) can enter and list it: run as that uid.
4. ``root_masked`` — none of the above: stay uid 0 in a user namespace with every capability
   dropped, and mask root-only secrets (every file and directory under /etc that other users
   cannot read — /etc/shadow, /etc/gshadow, SSH host keys…). /root is never mounted unless it
   holds the working directory. ``describe`` reports the rule, so this is never silent.
"""

from __future__ import annotations

import os
import pwd
import stat
from dataclasses import dataclass
from functools import lru_cache

NOBODY = 65534
SECRET_ROOTS = ("/etc",)


@dataclass(frozen=True)
class RunAs:
    uid: int
    gid: int
    rule: str  # server_user | workspace_owner | unprivileged_uid | root_masked
    switch: bool  # the server must drop to uid/gid before exec'ing bwrap


def choose(cwd: str, unprivileged_uid: int = NOBODY, euid: int | None = None) -> RunAs:
    """Apply the four rules above to the (realpath) working directory."""
    euid = os.geteuid() if euid is None else euid
    if euid != 0:
        return RunAs(euid, os.getegid(), "server_user", False)
    try:
        owner = os.stat(cwd).st_uid
    except OSError:
        owner = 0
    if owner != 0:
        return RunAs(owner, primary_gid(owner), "workspace_owner", True)
    gid = primary_gid(unprivileged_uid)
    if can_list(cwd, unprivileged_uid, gid):
        return RunAs(unprivileged_uid, gid, "unprivileged_uid", True)
    return RunAs(0, 0, "root_masked", False)


def primary_gid(uid: int) -> int:
    """The passwd group of ``uid``; a uid without an entry gets the group of the same number."""
    try:
        return pwd.getpwuid(uid).pw_gid
    except KeyError:
        return uid


def _allows(st: os.stat_result, uid: int, gid: int, want: int) -> bool:
    """Classic owner/group/other permission check (supplementary groups are dropped: none)."""
    if st.st_uid == uid:
        bits = (st.st_mode >> 6) & 7
    elif st.st_gid == gid:
        bits = (st.st_mode >> 3) & 7
    else:
        bits = st.st_mode & 7
    return bits & want == want


def can_list(path: str, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` can reach ``path`` (x on every ancestor) and list it (r+x)."""
    return can_read(path, uid, gid, directory=True)


def can_read(path: str, uid: int, gid: int, directory: bool | None = None) -> bool:
    """Whether ``uid``/``gid`` can reach ``path`` and read it (a directory: list it).

    Mode bits only: an ACL granting more is ignored, which errs towards the stricter rule."""
    real = os.path.realpath(path)
    parts = [p for p in real.split("/") if p]
    ancestors = ["/" + "/".join(parts[:i]) for i in range(len(parts))]
    try:
        st = os.stat(real)
        is_dir = stat.S_ISDIR(st.st_mode) if directory is None else directory
        return (all(_allows(os.stat(a), uid, gid, 1) for a in ancestors)
                and _allows(st, uid, gid, 5 if is_dir else 4))
    except OSError:
        return False


@lru_cache(maxsize=1)
def root_secrets() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(files, directories) under /etc that other users cannot read: what rule 4 masks.

    Computed once per process; a directory that is masked is not descended into."""
    files: list[str] = []
    dirs: list[str] = []
    for root in SECRET_ROOTS:
        for top, subdirs, names in os.walk(root):
            keep = []
            for d in subdirs:
                full = os.path.join(top, d)
                st = os.lstat(full)
                if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o005 != 0o005:
                    dirs.append(full)
                else:
                    keep.append(d)
            subdirs[:] = keep
            for n in names:
                full = os.path.join(top, n)
                try:
                    st = os.lstat(full)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and not st.st_mode & 0o004:
                    files.append(full)
    return tuple(sorted(files)), tuple(sorted(dirs))
