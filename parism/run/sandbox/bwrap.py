"""The bwrap argv of a plan, readable top to bottom (sandbox-notes §2).

bwrap applies mount operations in argv order and a later mount covers an earlier one, so the
order below is the design: namespaces → broad system mounts → fresh /dev, /proc, capped /tmp →
allowed paths → the working directory (and its read-only .git) → per-command binds → sealed
directories and file copies (git: unentered gitlinks, the sanitised configuration) → masks →
root made read-only → environment → the inner command (the launcher's hand-over helper).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from parism.run.sandbox.identity import SWITCH_CAPS
from parism.run.sandbox.plan import Plan, below

ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# host_mounts (df, findmnt) sees the host's mount table through a read-only root; these hold
# homes, runtime sockets and scratch space and are covered with empty tmpfs.
HOST_ROOT_MASKS = ("/root", "/home", "/run", "/var/run", "/tmp", "/var/tmp", "/mnt", "/media", "/srv")
# A command that keeps host uid 0 (root_masked) would read every root-only file of the host root
# (/var/log, crontabs, /boot, other projects): it keeps only the system directories.
HOST_ROOT_KEPT_AS_UID0 = ("/usr", "/etc", "/proc", "/dev", *("/" + name for name in ROOT_LINKS))


def build_argv(plan: Plan, inner: list[str], userns_fds: tuple[int, int] | None = None,
               fds: Mapping[str, int] | None = None, copy_fds: Sequence[int] = ()) -> list[str]:
    """Everything after the bwrap binary, ending with ``inner`` (absolute argv).

    ``userns_fds`` (info fd, block fd): the identity-map handshake (identity.MapHandshake).
    ``fds``: bind sources already opened (path → descriptor, -1 = could not be opened: not
    bound; see ``launcher.pin_sources``): bound with ``--bind-fd``/``--ro-bind-fd``. bwrap 0.8
    reads the descriptor's path back and binds that name, so this narrows the window a swap
    has; the helper's inode checks at hand-over close it (docs/security.md).
    ``copy_fds``: one descriptor holding the content of each of ``plan.file_copies``, in order."""
    fds = fds or {}
    argv: list[str] = []
    argv += _namespaces(plan, userns_fds)
    argv += ["--die-with-parent", "--new-session", *_caps(plan)]
    argv += _system_root(plan)
    argv += ["--dev", "/dev"]
    argv += _proc(plan)
    # under the identity map bwrap's tmpfs is root's: the command's uid needs a /tmp like the host's
    argv += [*(["--perms", "1777"] if plan.run_as.full_map else []), "--size", str(plan.tmp_bytes), "--tmpfs", "/tmp"]
    for path in plan.ro_paths:
        argv += [*_parents(plan, path), *_bind(path, fds, read_only=True, optional=True)]
    argv += [*_parents(plan, plan.cwd), *_workspace(plan, fds)]
    for path in plan.binds:
        argv += [*_parents(plan, path), "--ro-bind-try", path, path]
    for path in plan.sealed_dirs:
        argv += ["--perms", "0555", "--tmpfs", path, "--remount-ro", path]
    if len(copy_fds) != len(plan.file_copies):
        raise ValueError("every file copy needs its descriptor")
    for (path, _data), fd in zip(plan.file_copies, copy_fds):
        argv += ["--perms", "0444", "--ro-bind-data", str(fd), path]
    for path in plan.mask_files:
        argv += ["--ro-bind", "/dev/null", path]
    for path in plan.mask_dirs:
        argv += ["--tmpfs", path]
    argv += ["--remount-ro", "/", "--chdir", plan.cwd, "--clearenv"]
    for name, value in plan.env:
        argv += ["--setenv", name, value]
    return argv + ["--", *inner]


def _namespaces(plan: Plan, userns_fds: tuple[int, int] | None) -> list[str]:
    """Every namespace is new, except the ones the command's class needs from the host.

    Under the identity map bwrap waits for the server to write the map, and cannot combine
    that with ``--disable-userns``: the helper's seccomp filter refuses new namespaces."""
    out = ["--unshare-user", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if plan.run_as.full_map:
        if userns_fds is None:
            raise ValueError("the identity map needs the handshake fds")
        out += ["--info-fd", str(userns_fds[0]), "--userns-block-fd", str(userns_fds[1])]
    if plan.pid_namespace:
        out.append("--unshare-pid")
    if not plan.network and plan.namespace != "host_net":
        out.append("--unshare-net")
    if userns_disabled(plan):
        out.append("--disable-userns")
    return out


def userns_disabled(plan: Plan) -> bool:
    """Whether bwrap's --disable-userns is in force; where it is not (identity map, host_procs,
    nested-weak) the helper's seccomp filter refuses new namespaces instead."""
    return plan.disable_userns and plan.level == "full" and plan.pid_namespace and not plan.run_as.full_map


def _caps(plan: Plan) -> list[str]:
    """No capability reaches the command. Under the identity map bwrap hands setpriv the
    few it needs to switch uid/gid and drop the rest (identity.setpriv_prefix)."""
    out = ["--cap-drop", "ALL"]
    for cap in SWITCH_CAPS if plan.run_as.full_map else ():
        out += ["--cap-add", cap]
    return out


def _parents(plan: Plan, path: str) -> list[str]:
    """Under the identity map bwrap runs as root and would create a bind's missing parent
    directories as root's 0700 — closed to the command's uid. They are made 0755 first (an
    existing directory is left as it is)."""
    if not plan.run_as.full_map:
        return []
    parts = [p for p in path.split("/") if p][:-1]
    out: list[str] = []
    for i in range(1, len(parts) + 1):
        out += ["--perms", "0755", "--dir", "/" + "/".join(parts[:i])]
    return out


def _proc(plan: Plan) -> list[str]:
    # never a bound outer /proc together with a pid namespace (procps aborts, sandbox-notes §2.5)
    return ["--proc", "/proc"] if plan.pid_namespace else ["--ro-bind", "/proc", "/proc"]


def _system_root(plan: Plan) -> list[str]:
    """Curated root: /usr, the merged-/usr links (or real dirs) and /etc, all read-only.

    host_mounts binds the whole host root read-only instead (recursive, so df sees every
    mount) and hides homes, runtime sockets and scratch dirs under empty tmpfs (as host uid 0:
    everything but the system directories)."""
    if plan.namespace == "host_mounts":
        out = ["--ro-bind", "/", "/"]
        for d in _host_root_masks(plan):
            if os.path.isdir(d) and not os.path.islink(d):
                out += ["--tmpfs", d]
        return out
    out = ["--ro-bind", "/usr", "/usr"]
    for name in ROOT_LINKS:
        host = "/" + name
        if os.path.islink(host):
            out += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            out += ["--ro-bind", host, host]
    return out + ["--ro-bind", "/etc", "/etc"]


def _host_root_masks(plan: Plan) -> tuple[str, ...]:
    """What host_mounts covers with empty tmpfs: homes, sockets, scratch — and, for host uid 0,
    every top-level directory but the system ones (the allowed paths are bound on top later)."""
    if plan.run_as.rule != "root_masked":
        return HOST_ROOT_MASKS
    try:
        top = sorted("/" + name for name in os.listdir("/"))
    except OSError:
        top = []
    return tuple(dict.fromkeys((*HOST_ROOT_MASKS, *(d for d in top if d not in HOST_ROOT_KEPT_AS_UID0))))


def _workspace(plan: Plan, fds: Mapping[str, int]) -> list[str]:
    """The working directory; in build it is writable but every .git stays read-only as a whole
    (a mount point cannot be renamed, so ``mv .git`` fails too — sandbox-notes §2.4)."""
    if not plan.writable:
        return _bind(plan.cwd, fds, read_only=True)
    out = _bind(plan.cwd, fds, read_only=False)
    for path in plan.git_dirs:  # nested and embedded repositories too (guard: Decision.git_dirs)
        out += _bind(path, fds, read_only=True)
    return out


def _bind(path: str, fds: Mapping[str, int], *, read_only: bool, optional: bool = False) -> list[str]:
    """One bind of ``path`` onto itself: by its descriptor when it was opened (a pinned
    source that could not be opened is not bound at all), else by name."""
    if path in fds:
        fd = fds[path]
        return [] if fd < 0 else ["--ro-bind-fd" if read_only else "--bind-fd", str(fd), path]
    if optional:
        return ["--ro-bind-try", path, path]
    return ["--ro-bind" if read_only else "--bind", path, path]


def shows(plan: Plan, path: str) -> bool:
    """Whether the sandbox of ``plan`` mounts the host's ``path`` (absolute, resolved): the
    system directories, the working directory, the allowed paths and the command's binds — or,
    for ``host_mounts``, the whole root but what it covers with tmpfs (:func:`_system_root`).
    A binary elsewhere on PATH (``/opt/bin``, ``~/.local/bin``) does not exist inside."""
    bound = (plan.cwd, *plan.ro_paths, *plan.binds)
    if plan.namespace == "host_mounts":
        hidden = _host_root_masks(plan)
        return not (path in hidden or below(path, hidden)) or path in bound or below(path, bound)
    roots = ("/usr", "/etc", *("/" + name for name in ROOT_LINKS), *bound)
    return path in roots or below(path, roots)
