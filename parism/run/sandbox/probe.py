"""Startup probe: which confinement level works here, decided once (never per call).

It runs the real thing — a plan like a readonly call's, with the hand-over helper and
``/usr/bin/true`` — first at ``full`` strength, then ``nested-weak`` (no pid namespace, host
/proc bound, no --disable-userns: what a container with masked /proc allows). bwrap's error is
classified by substring only (its wording varies across versions and distributions).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

PROBE_TIMEOUT_S = 5.0
DEFAULT_BWRAP = "/usr/bin/bwrap"
HELPER_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3")

# (substring of bwrap's stderr, reason reported by describe)
CLASSIFY: tuple[tuple[str, str], ...] = (
    ("No permissions to create new namespace",
     "user namespaces unavailable (sysctl, or a container's default seccomp profile: use the "
     "shipped seccomp profile)"),
    ("Creating new namespace failed", "user namespaces unavailable (limit reached or disabled)"),
    ("setting up uid map", "user namespaces restricted (AppArmor userns restriction?)"),
    ("Can't mount proc", "a fresh /proc cannot be mounted (container masks /proc: add "
     "--security-opt systempaths=unconfined)"),
    ("max_user_namespaces", "/proc/sys is read-only (container masks /proc: add "
     "--security-opt systempaths=unconfined)"),
    ("Permission denied", "mount denied (AppArmor/SELinux policy?)"),
    ("Operation not permitted", "namespace or mount operation not permitted"),
)


@dataclass
class ProbeResult:
    level: str  # full | nested-weak | none
    reason: str | None
    bwrap: str | None = None
    version: str | None = None
    python: str | None = None
    features: dict[str, bool] = field(default_factory=dict)


def classify(stderr: str) -> str:
    """A stable reason for a bwrap failure (first matching substring), else its first line."""
    for needle, reason in CLASSIFY:
        if needle in stderr:
            return reason
    line = stderr.strip().splitlines()[0] if stderr.strip() else "no error output"
    return f"bwrap failed: {line[:200]}"


def find_bwrap(configured: str) -> str | None:
    """The configured path (must exist and be executable), else /usr/bin/bwrap. No PATH walk:
    the binary is resolved once, here."""
    path = configured or DEFAULT_BWRAP
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def find_python() -> str | None:
    """A Python under /usr for the helper: the only directories a sandbox always mounts."""
    for p in HELPER_PYTHONS:
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def bwrap_info(bwrap: str) -> tuple[str | None, dict[str, bool]]:
    """Version and option support, read from ``--version`` and ``--help`` (not from versions)."""
    env = {"PATH": "/usr/bin:/bin"}
    try:
        ver = subprocess.run([bwrap, "--version"], capture_output=True, text=True, env=env,
                             timeout=PROBE_TIMEOUT_S).stdout
        helptext = subprocess.run([bwrap, "--help"], capture_output=True, text=True, env=env,
                                  timeout=PROBE_TIMEOUT_S).stdout
    except (OSError, subprocess.SubprocessError):
        return None, {}
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)", ver)
    return (m.group(1) if m else None), {
        "disable_userns": "--disable-userns" in helptext,
        "tmpfs_size": "--size" in helptext,
        # the identity map of a root server (identity.py): bwrap waits while we write it
        "userns_block_fd": "--userns-block-fd" in helptext and "--perms" in helptext,
    }


def run_probe(try_level: Callable[[str], str | None], bwrap: str | None, python: str | None,
              configured: str) -> ProbeResult:
    """``try_level(level)`` runs /usr/bin/true in a sandbox of that level and returns None on
    success or bwrap's stderr. The strongest working level wins."""
    if bwrap is None:
        where = configured or DEFAULT_BWRAP
        return ProbeResult("none", f"bwrap not found at {where}; install bubblewrap")
    version, features = bwrap_info(bwrap)
    if python is None:
        return ProbeResult("none", "no python3 under /usr for the sandbox hand-over helper",
                           bwrap, version, None, features)
    if not features.get("tmpfs_size"):
        return ProbeResult("none", f"bwrap {version} lacks --size (need >= 0.5)", bwrap, version,
                           python, features)
    err_full = try_level("full")
    if err_full is None:
        return ProbeResult("full", None, bwrap, version, python, features)
    err_weak = try_level("nested-weak")
    if err_weak is None:
        return ProbeResult("nested-weak", classify(err_full), bwrap, version, python, features)
    # the weaker level failed too: its error is the more basic one (namespaces at all)
    return ProbeResult("none", classify(err_weak), bwrap, version, python, features)
