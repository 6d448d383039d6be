"""How many calls may run at once in the memory the server has: ``guard.max_concurrency``
checked against the cgroup's memory limit (issue 27; docs/configuration.md).

Why: a call holds its output while it is masked, encoded and written — up to about 3x the caps
at the peak (docs/envelope.md, "Bytes that are not text") — and ``max_concurrency`` calls do so
at once. Four 64 MiB floods under ``docker run --memory 1g`` had the server OOM-killed. At start
the limit is read (cgroup v2 ``memory.max`` of the server's cgroup and its ancestors, the
smallest; cgroup v1 ``memory.limit_in_bytes``); when ``max_concurrency`` x the per-call peak
does not fit beside :data:`RESERVE`, the effective concurrency is **lowered** to what fits (at
least 1), a warning is logged, and ``describe`` says so (``guard_summary.memory``). A limit that
cannot be read is reported as unknown there, never taken for "no limit" silently.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parism.config.model import GuardSettings

log = logging.getLogger("parism.memory")

HARD_CAP = 64 * 1024 * 1024  # the engine's bound for a cap of 0 ("unlimited")
PEAK_PER_BYTE = 3  # a call's peak above idle, per byte of its caps (measured 2.67 for bytes)
RESERVE = 128 * 1024 * 1024  # the server itself: interpreter, engine, SDK (idle RSS ~80 MB)
UNLIMITED_V1 = 1 << 60  # cgroup v1 writes "no limit" as a page-rounded LONG_MAX

CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class Budget:
    configured: int  # guard.max_concurrency
    effective: int  # what the server runs at once
    per_call: int  # bytes a call may peak at (PEAK_PER_BYTE x its caps)
    limit: int | None  # the cgroup's memory limit, bytes; None: none, or unknown
    source: str  # where the limit was read, "none", or why it is unknown

    @property
    def lowered(self) -> bool:
        return self.effective < self.configured

    def report(self) -> dict[str, Any]:
        """``describe``'s ``guard_summary.memory``."""
        return {"limit_bytes": self.limit, "source": self.source, "per_call_bytes": self.per_call,
                "configured_concurrency": self.configured, "effective_concurrency": self.effective,
                "action": "lowered" if self.lowered else "none"}


def per_call(guard: GuardSettings) -> int:
    return PEAK_PER_BYTE * ((guard.max_output_bytes or HARD_CAP) + (guard.max_stderr_bytes or HARD_CAP))


def budget(guard: GuardSettings, root: Path = CGROUP_ROOT, proc_cgroup: Path = Path("/proc/self/cgroup")) -> Budget:
    """The effective concurrency for ``guard`` (a ``GuardSettings``) under this process's limit."""
    need = per_call(guard)
    limit, source = read_limit(root, proc_cgroup)
    configured = guard.max_concurrency
    if limit is None:
        return Budget(configured, configured, need, None, source)
    fits = max(1, (limit - RESERVE) // need)
    return Budget(configured, min(configured, fits), need, limit, source)


def read_limit(root: Path = CGROUP_ROOT, proc_cgroup: Path = Path("/proc/self/cgroup")) -> tuple[int | None, str]:
    """(limit in bytes or None, where it came from / "none" / "unknown: why")."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError as exc:
        return None, f"unknown: {proc_cgroup}: {exc.strerror or exc}"
    v2 = [line.split(":", 2)[2] for line in lines if line.startswith("0::")]
    v1 = [line.split(":", 2)[2] for line in lines if line.count(":") >= 2 and "memory" in line.split(":")[1].split(",")]
    try:
        if v2 and (root / "cgroup.controllers").exists():
            return _smallest(root, v2[0], "memory.max", "cgroup v2")
        if v1:
            return _smallest(root / "memory", v1[0], "memory.limit_in_bytes", "cgroup v1")
    except (OSError, ValueError) as exc:
        return None, f"unknown: {exc}"
    return None, "none"


def _smallest(root: Path, path: str, name: str, kind: str) -> tuple[int | None, str]:
    """The smallest limit in ``name`` from the process's cgroup up to the hierarchy's root
    (a limit on an ancestor binds too); "max" (v2) or a page-rounded LONG_MAX (v1) is none."""
    best: tuple[int, str] | None = None
    here = root / path.lstrip("/")
    while True:
        limit_file = here / name
        if limit_file.exists():
            value = limit_file.read_text().strip()
            if value != "max" and int(value) < UNLIMITED_V1 and (best is None or int(value) < best[0]):
                best = (int(value), str(limit_file))
        if here == root or root not in here.parents:
            break
        here = here.parent
    return (best[0], f"{kind} {best[1]}") if best else (None, "none")


def warn_if_lowered(b: Budget) -> None:
    if b.lowered:
        log.warning("memory: guard.max_concurrency %d x %d bytes per call (3x the output caps) does not fit "
                    "in the memory limit %d bytes (%s) beside %d reserved: running %d at once",
                    b.configured, b.per_call, b.limit, b.source, RESERVE, b.effective)

