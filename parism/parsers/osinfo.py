"""Which OS family produced the output: the host's for ``run``, the caller's for ``parse --os``."""

from __future__ import annotations

import sys

OS_FAMILIES = ("linux", "macos", "freebsd", "windows")


def host_os() -> str:
    p = sys.platform
    if p.startswith("linux"):
        return "linux"
    if p == "darwin":
        return "macos"
    if p.startswith("freebsd"):
        return "freebsd"
    if p in ("win32", "cygwin"):
        return "windows"
    return "linux"


def normalize_os(name: str | None) -> str:
    """Accept a few spellings; raise ValueError for anything else."""
    if name is None:
        return host_os()
    n = name.strip().lower()
    aliases = {"darwin": "macos", "osx": "macos", "mac": "macos", "bsd": "freebsd", "win": "windows", "gnu": "linux"}
    n = aliases.get(n, n)
    if n not in OS_FAMILIES:
        raise ValueError(f"unknown os '{name}': expected one of {', '.join(OS_FAMILIES)}")
    return n
