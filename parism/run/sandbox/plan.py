"""The plan of one sandboxed call: every input of the bwrap argv, as one hashable value.

A ``Plan`` is the pool key (two calls with equal plans can share pre-started sandboxes) and
the only input of ``bwrap.build_argv``, so "what the sandbox looks like" is decided here, once,
from the configuration, the guard's decision and the executor's spec. No per-command code:
namespace class, network and binds come from the profile through the decision.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from parism.run.sandbox.request import FileCopy
from parism.run.sandbox.identity import RunAs, can_read, root_secrets

MIB = 1024 * 1024
LIMIT_KEYS = ("nproc", "as_mb", "fsize_mb", "cpu_grace_s", "nofile", "core", "oom_score_adj")
DEFAULT_LIMITS: dict[str, int] = {"nproc": 64, "as_mb": 2048, "fsize_mb": 64, "cpu_grace_s": 5,
                                  "nofile": 1024, "core": 0, "oom_score_adj": 1000}
DEFAULT_TMP_MB = 64
UNIX_FILTER = os.uname().machine in ("x86_64", "aarch64")  # the helper's seccomp filter
# A bind to one of these hands the sandbox a root-equivalent or host-control channel.
WEAKENING_BINDS = ("/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
                   "/run/podman/podman.sock")


@dataclass(frozen=True)
class Plan:
    bwrap: str
    level: str  # "full" | "nested-weak"
    disable_userns: bool
    python: str  # interpreter for the hand-over helper, under /usr
    cwd: str
    writable: bool  # build profile: the working directory is writable, its .git is not
    git_dirs: tuple[str, ...]  # build: every .git under the cwd, read-only (the guard's list)
    ro_paths: tuple[str, ...]  # guard.allowed_paths, read-only
    binds: tuple[str, ...]  # per-command extra read-only binds (kubeconfig, gh config…)
    network: bool
    namespace: str  # isolated | host_procs | host_mounts | host_net
    tmp_bytes: int
    rlimits: tuple[tuple[str, int | None], ...]  # helper names → value, None = unlimited
    oom_score_adj: int
    env: tuple[tuple[str, str], ...]
    run_as: RunAs
    deny_unix_sockets: bool = True  # seccomp: no socket(AF_UNIX) (x86_64/aarch64 only)
    mask_files: tuple[str, ...] = ()
    mask_dirs: tuple[str, ...] = ()
    # network piece (run/sandbox/network.py): own namespace, out only through the egress proxy
    egress: bool = False
    network_allow: tuple[str, ...] = ()
    resolvers: tuple[str, ...] = ()
    # (file, content): shown read-only over the file (git's sanitised configuration, gitcopy.py)
    file_copies: tuple[tuple[str, bytes], ...] = ()
    # directories shown empty and read-only (gitlinks git did not enter when checked)
    sealed_dirs: tuple[str, ...] = ()
    # (st_dev, st_ino) of each ro_paths entry as pinned at start (run/sandbox/roots.py; None: not
    # pinned): a root that is another inode when the sandbox opens it is not bound
    ro_ids: tuple[tuple[int, int] | None, ...] = ()

    def fingerprint(self) -> tuple[tuple[int, int] | None, ...]:
        """(device, inode) of every bind source: a sandbox pre-started for this plan binds
        those inodes, so a directory deleted and recreated since must not be served."""
        out: list[tuple[int, int] | None] = []
        for path in (self.cwd, *self.git_dirs, *self.ro_paths, *self.binds):
            try:
                st = os.stat(path) if path else None
                out.append((st.st_dev, st.st_ino) if st else None)
            except OSError:
                out.append(None)
        return tuple(out)

    @property
    def pid_namespace(self) -> bool:
        """A pid namespace with its own /proc: the tree dies with the call (not for ps, or nested)."""
        return self.level == "full" and self.namespace != "host_procs"

    @property
    def weak_binds(self) -> tuple[str, ...]:
        """Binds that weaken isolation a lot (a container engine socket is root-equivalent)."""
        return socket_binds(self.binds)

    @property
    def effective_level(self) -> str:
        """What this call gets: a weakening bind downgrades ``full`` to ``nested-weak``."""
        return "nested-weak" if self.weak_binds else self.level


def socket_binds(binds: tuple[str, ...]) -> tuple[str, ...]:
    """The binds that hand the sandbox a socket: the AF_UNIX filter is lifted for them (the
    client could not connect otherwise) and the call is reported at a weaker level."""
    return tuple(b for b in binds if b in WEAKENING_BINDS or _is_socket(b))


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def setting(obj: object, key: str, default: object = None) -> Any:
    """Read ``key`` from a pydantic model, a mapping or None alike."""
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def limit_values(settings: object, overrides: Mapping[str, object] | None = None) -> dict[str, int]:
    """The ``[sandbox.limits]`` table (config) with the command's own ``limits`` on top."""
    base = setting(settings, "limits")
    out = {k: int(setting(base, k, v)) for k, v in DEFAULT_LIMITS.items()}
    for k in LIMIT_KEYS:
        v = setting(overrides, k)
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            out[k] = v
    return out


def rlimits(values: Mapping[str, int], timeout_s: float) -> tuple[tuple[str, int | None], ...]:
    """Config units → the helper's rlimit table; 0 means unlimited (except core: 0 = off)."""

    def mb(v: int) -> int | None:
        return v * MIB if v else None

    return (
        ("nproc", values["nproc"] or None),
        ("as", mb(values["as_mb"])),
        ("fsize", mb(values["fsize_mb"])),
        ("cpu", math.ceil(timeout_s) + values["cpu_grace_s"]),
        ("nofile", values["nofile"] or None),
        ("core", values["core"] * MIB),
    )


def sandbox_env(env: Mapping[str, str], binds: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The child env from the spec, with HOME and TMPDIR pointing inside the sandbox.

    The host HOME is not mounted; it is kept only when a bind lives under it (kubectl reads
    ``$HOME/.kube/config``), otherwise HOME=/tmp so tools find a writable home."""
    out = dict(env)
    home = out.get("HOME", "")
    if not (home and any(b == home or b.startswith(home.rstrip("/") + "/") for b in binds)):
        out["HOME"] = "/tmp"
    out["TMPDIR"] = "/tmp"
    return tuple(sorted(out.items()))


def readable_by(run_as: RunAs, path: str) -> bool:
    """Whether the run-as user can read ``path``: binding what it cannot read would only reveal
    that the path exists."""
    return not run_as.other_uid or can_read(path, run_as.uid, run_as.gid)


def expand_binds(raw: Iterable[object], home: str, run_as: RunAs) -> tuple[str, ...]:
    """``~``-expanded, realpath'd bind sources that exist and the run-as user can read (an
    optional bind that is missing or unreadable is skipped: the command could not use it)."""
    out: list[str] = []
    for item in raw or ():
        if not isinstance(item, str) or not item:
            continue
        path = home + item[1:] if item.startswith("~") and home else item
        if os.path.isabs(path) and os.path.exists(path) and readable_by(run_as, path):
            out.append(os.path.realpath(path))
    return tuple(dict.fromkeys(out))


def unmet_requirements(raw: Iterable[str], home: str, run_as: RunAs) -> list[str]:
    """Why each required bind (``sandbox.requires``) cannot be given to the command: a missing
    path, or one the run-as user cannot read (it would not be bound, see ``expand_binds``)."""
    out: list[str] = []
    for item in raw or ():
        path = home + item[1:] if item.startswith("~") and home else item
        if not os.path.exists(path):
            out.append(f"{path} does not exist")
        elif not readable_by(run_as, path):
            out.append(f"{path} is not readable by uid {run_as.uid} (identity rule {run_as.rule})")
    return out


SYSTEM_DIRS = ("/usr", "/etc", "/proc", "/dev", "/bin", "/lib")


def safe_ro_paths(paths: Iterable[object], cwd: str, run_as: RunAs) -> tuple[str, ...]:
    """Allowed paths worth binding: existing, readable by the run-as user, not the cwd itself,
    never ``/`` or an ancestor of the system directories (that would re-expose the host)."""
    out: list[str] = []
    for p in paths or ():
        if not isinstance(p, str) or not os.path.isabs(p):
            continue
        real = os.path.realpath(p)
        if real == cwd or not os.path.isdir(real) or not readable_by(run_as, real):
            continue
        if any(s == real or s.startswith(real.rstrip("/") + "/") for s in SYSTEM_DIRS):
            continue
        out.append(real)
    return tuple(dict.fromkeys(out))


def below(path: str, roots: tuple[str, ...]) -> bool:
    """Whether ``path`` lies strictly below one of ``roots`` (absolute, normalised)."""
    return any(path.startswith(root.rstrip("/") + "/") for root in roots if root)


def in_view(path: str, cwd: str, ro_paths: tuple[str, ...]) -> bool:
    """Whether the sandbox shows ``path`` (below the working directory or an allowed path):
    anywhere else bwrap would make a mount point up."""
    return below(path, (cwd, *ro_paths))


def visible_copies(copies: Iterable[FileCopy], cwd: str, ro_paths: tuple[str, ...],
                   run_as: RunAs) -> tuple[tuple[str, bytes], ...]:
    """The file copies to bind: over a file the sandbox shows that the run-as user can read
    (a file it cannot read stays unreadable: the command fails as it would without)."""
    return tuple((path, data) for path, data in copies or ()
                 if in_view(path, cwd, ro_paths) and readable_by(run_as, path))


def masks_for(run_as: RunAs) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Root-only secrets to hide: only needed when the command keeps host uid 0."""
    return root_secrets() if run_as.rule == "root_masked" else ((), ())
