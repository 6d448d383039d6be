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
   Host uid 0 keeps root's access to root's files, so the rule is never reachable by a
   workspace the caller controls (``root_masked_problem``): only a read-only call (a build as
   host root could leave a set-uid root file any user runs), and only inside an allowed path
   that is itself root's and private — a tree the operator gave as root's, not a private
   directory some root process left in a shared one. Other calls that would need it are
   refused; only the root-private allowed paths are mounted for it.

How owners stay true (``route``): a user namespace maps only the ids its map lists, and the
kernel shows every other owner as the overflow id (nobody). Only root may write a full map,
so a root server runs each sandbox in its own user namespace with the *identity* map
(``identity_map``): bwrap (as root, so the namespace is owned by root and no host user can
join it) waits on ``--userns-block-fd`` while the server writes ``0 0 4294967295`` into
uid_map and gid_map, sets up the mounts, and exec's ``setpriv`` with only CAP_SETUID,
CAP_SETGID, CAP_SETPCAP and CAP_DAC_READ_SEARCH (to enter a workspace only its owner may);
setpriv switches to the chosen uid/gid, clears supplementary groups, the bounding,
inheritable and ambient sets and sets no_new_privs before the helper starts. bwrap refuses
``--disable-userns`` there, so the helper's seccomp filter refuses unshare, setns, clone with
namespace flags and clone3 instead. A server that is not root (the appliance: uid 10001,
no capabilities, no-new-privileges) cannot write such a map: its sandboxes map only its own
uid and the engine corrects owners from the host afterwards (``host_correction``,
``parism/run/truth/``).
"""

from __future__ import annotations

import json
import os
import pwd
import select
import stat
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

NOBODY = 65534
SECRET_ROOTS = ("/etc",)
SETPRIV = "/usr/bin/setpriv"
FULL_MAP = "0 0 4294967295\n"  # every id maps to itself
# what bwrap keeps for the exec of setpriv (which drops all of them before the helper runs)
SWITCH_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_DAC_READ_SEARCH")
MAP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class RunAs:
    uid: int
    gid: int
    rule: str  # server_user | workspace_owner | unprivileged_uid | root_masked
    switch: bool  # the server must drop to uid/gid before exec'ing bwrap
    full_map: bool = False  # identity uid/gid map; setpriv switches to uid/gid inside

    @property
    def route(self) -> str:
        """How owners stay true: ``identity_map`` (kernel) or ``host_correction`` (engine)."""
        return "identity_map" if self.full_map else "host_correction"

    @property
    def other_uid(self) -> bool:
        """The command runs with another uid than the server's (binds must suit that uid)."""
        return self.switch or self.full_map


def choose(cwd: str, unprivileged_uid: int = NOBODY, euid: int | None = None, full_map: bool = False,
           st: os.stat_result | None = None) -> RunAs:
    """Apply the four rules above to the (realpath) working directory; ``full_map``: a root
    server whose bwrap can wait for a map (``--userns-block-fd``) gets the identity map.

    ``st``: the directory as the guard opened it. The rule is then decided on that inode — the
    one the sandbox runs the command in — so a name swapped for a root-owned private directory
    in between cannot select ``root_masked`` for a workspace the caller controls."""
    euid = os.geteuid() if euid is None else euid
    if euid != 0:
        return RunAs(euid, os.getegid(), "server_user", False)
    full_map = full_map and os.path.exists(SETPRIV)
    try:
        owner = (st or os.stat(cwd)).st_uid
    except OSError:
        owner = 0
    if owner != 0:
        return RunAs(owner, primary_gid(owner), "workspace_owner", not full_map, full_map)
    gid = primary_gid(unprivileged_uid)
    if can_list(cwd, unprivileged_uid, gid, st):
        return RunAs(unprivileged_uid, gid, "unprivileged_uid", not full_map, full_map)
    return RunAs(0, 0, "root_masked", False, full_map)


def root_private(path: str, unprivileged_uid: int = NOBODY, st: os.stat_result | None = None) -> bool:
    """Root owns ``path`` and the unprivileged uid cannot list it: only root may read there."""
    try:
        owner = (st or os.stat(path)).st_uid
    except OSError:
        return False
    return owner == 0 and not can_list(path, unprivileged_uid, primary_gid(unprivileged_uid), st)


def root_masked_problem(run_as: RunAs, cwd: str, allowed: tuple[str, ...], *, writable: bool,
                        unprivileged_uid: int = NOBODY) -> str | None:
    """Why a call may not run as ``root_masked`` (None: it may, or it runs under another rule).

    ``allowed``: the allowed paths (realpaths). The rule holds host uid 0, so the command
    must write nothing and work inside a tree the operator named as root's private one."""
    if run_as.rule != "root_masked":
        return None
    if writable:
        return ("the project is writable here and the command would write it as the host's root "
                "(a set-uid file it left would run as root for every user who can reach it)")
    if not any(_holds(root, cwd) and root_private(root, unprivileged_uid) for root in allowed):
        return ("it is private to root, and no allowed path holding it is root's private tree: "
                "the operator did not give root's own files to the agent there")
    return None


def _holds(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def setpriv_prefix(user: RunAs) -> list[str]:
    """The inner command's prefix under the identity map: become uid/gid, drop every capability
    (bounding, inheritable, ambient; effective/permitted go with them) and set no_new_privs."""
    if not user.full_map:
        return []
    return [SETPRIV, f"--reuid={user.uid}", f"--regid={user.gid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--"]


class MapHandshake:
    """bwrap's ``--info-fd`` / ``--userns-block-fd`` pair: bwrap reports its child's pid and
    waits; the server (root) writes the identity map into that child's user namespace, then
    lets it go on. A failure never lets bwrap go on unmapped: EOF on the block fd would, so the
    caller kills bwrap first (``complete`` raises)."""

    def __init__(self) -> None:
        self._info_r, self.info_w = os.pipe2(os.O_CLOEXEC)
        self.block_r, self._block_w = os.pipe2(os.O_CLOEXEC)

    @property
    def child_fds(self) -> tuple[int, int]:
        return self.info_w, self.block_r

    def close_child_ends(self) -> None:
        for fd in self.child_fds:
            os.close(fd)

    def complete(self, timeout: float = MAP_TIMEOUT_S) -> None:
        """Read the child pid, write the maps, unblock. Raises OSError on any failure."""
        try:
            pid = self._child_pid(timeout)
            for name in ("uid_map", "gid_map"):
                with open(f"/proc/{pid}/{name}", "w") as f:
                    f.write(FULL_MAP)
            os.write(self._block_w, b"1")
        finally:
            self.close()

    def _child_pid(self, timeout: float) -> int:
        data = b""
        while True:
            if not select.select([self._info_r], [], [], timeout)[0]:
                raise OSError("bwrap did not report its child within %.0f s" % timeout)
            chunk = os.read(self._info_r, 4096)
            if not chunk:
                break
            data += chunk
        try:
            return int(json.loads(data)["child-pid"])
        except (ValueError, KeyError, TypeError) as exc:
            raise OSError(f"bwrap ended before its user namespace was set up ({exc})") from None

    def close(self) -> None:
        for attr in ("_info_r", "_block_w"):
            fd = getattr(self, attr)
            if fd >= 0:
                os.close(fd)
                setattr(self, attr, -1)


def resolved(path: str) -> str:
    """``os.path.realpath``, which a name changing under it cannot crash: Python 3.11 raises
    EINVAL when a symlink becomes a directory between its lstat and readlink (a swap race).
    The name as given then — the callers decide on the inode the guard opened anyway."""
    try:
        return os.path.realpath(path)
    except OSError:
        return os.path.normpath(path)


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


def lister(user: RunAs) -> Callable[[os.stat_result], bool] | None:
    """Whether ``user`` may list a directory, from its status (None: the command runs with the
    server's own uid, whose access is the kernel's to check)."""
    if not user.other_uid:
        return None
    return lambda st: _allows(st, user.uid, user.gid, 5)


def can_list(path: str, uid: int, gid: int, st: os.stat_result | None = None) -> bool:
    """Whether ``uid``/``gid`` can reach ``path`` (x on every ancestor) and list it (r+x)."""
    return can_read(path, uid, gid, directory=True, st=st)


def can_read(path: str, uid: int, gid: int, directory: bool | None = None,
             st: os.stat_result | None = None) -> bool:
    """Whether ``uid``/``gid`` can reach ``path`` and read it (a directory: list it); ``st``:
    the path's own status when already known (opened by the guard).

    Mode bits only: an ACL granting more is ignored, which errs towards the stricter rule."""
    real = resolved(path)
    parts = [p for p in real.split("/") if p]
    ancestors = ["/" + "/".join(parts[:i]) for i in range(len(parts))]
    try:
        st = st or os.stat(real)
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


def readable_by_calls(path: str, st: os.stat_result, cwd: str) -> str | None:
    """Why the calls in ``cwd`` could not read ``path`` (``st``: the file as opened), or None —
    the identity rules above for a root server (``unprivileged_uid``: NOBODY); a server that is
    not root runs its calls as itself, where the kernel's own check applies when it reads."""
    if os.geteuid() != 0:
        return None
    run_as = choose(resolved(cwd), NOBODY)
    if run_as.uid != 0 and not can_read(path, run_as.uid, run_as.gid, directory=False, st=st):
        return (f"is not readable by uid {run_as.uid} (gid {run_as.gid}), which the calls in {cwd} "
                f"run as (identity rule {run_as.rule})")
    return None
