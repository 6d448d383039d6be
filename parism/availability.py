"""What to tell an agent when a binary is missing: how to install it here, and what else works.

The package manager is detected on this host (the first of apt/dnf/yum/apk/pacman/zypper/brew/
winget found on PATH). Package names differ per manager only for a few tools; everything else
installs under its own name. Alternatives are offered only when they pass the live guard and
their binary exists, so the agent is never pointed at another refusal.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from parism.parsers import registry

from parism.wire.envelope import Alternative, Availability, InstallHint

MANAGERS: tuple[tuple[str, str, str], ...] = (  # (binary, manager, install command prefix)
    ("apt-get", "apt", "apt-get install -y"),
    ("dnf", "dnf", "dnf install -y"),
    ("yum", "yum", "yum install -y"),
    ("apk", "apk", "apk add"),
    ("pacman", "pacman", "pacman -S --noconfirm"),
    ("zypper", "zypper", "zypper install -y"),
    ("brew", "brew", "brew install"),
    ("winget", "winget", "winget install"),
)

# command → {manager: package}; "*" is the default for managers not listed. A command with a
# parser declares it there (``Parser.packages``); these are the commands Parism has no parser for.
UNPARSED_PACKAGES: dict[str, dict[str, str]] = {
    "nslookup": {"apt": "dnsutils", "dnf": "bind-utils", "yum": "bind-utils", "apk": "bind-tools",
                 "pacman": "bind", "zypper": "bind-utils", "brew": "bind"},
    "ip": {"*": "iproute2", "dnf": "iproute", "yum": "iproute", "brew": "iproute2mac"},
    "ifconfig": {"*": "net-tools"},
    "top": {"*": "procps", "dnf": "procps-ng", "yum": "procps-ng", "pacman": "procps-ng"},
    "uptime": {"*": "procps", "dnf": "procps-ng", "yum": "procps-ng", "pacman": "procps-ng"},
    "pip": {"apt": "python3-pip", "dnf": "python3-pip", "apk": "py3-pip", "*": "python-pip"},
}


def packages(cmd: str) -> Mapping[str, str]:
    """Package manager → package of one command: its parser's ``packages``, else the table above."""
    parser = registry.get_parser(cmd)
    if parser is not None and parser.packages:
        return parser.packages
    return UNPARSED_PACKAGES.get(cmd, {})


def __getattr__(name: str) -> Any:
    """``PACKAGES``: the whole table, derived from the registry (imports every parser)."""
    if name == "PACKAGES":
        table = {cmd: dict(p.packages) for cmd, p in registry.command_parsers() if p.packages}
        return {**UNPARSED_PACKAGES, **table}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# command → alternatives, most useful first (filtered through the guard at answer time)
ALTERNATIVES: dict[str, tuple[Alternative, ...]] = {
    "helm": (Alternative(cmd="kubectl", args=["get", "all"],
                         reason="no helm charts: look at cluster resources directly with kubectl"),),
    "dig": (Alternative(cmd="nslookup", args=["example.com"], reason="nslookup answers the same A query"),
            Alternative(cmd="getent", args=["hosts", "example.com"], reason="resolves through the system resolver")),
    "nslookup": (Alternative(cmd="dig", args=["example.com"], reason="dig answers the same query"),
                 Alternative(cmd="getent", args=["hosts", "example.com"],
                             reason="resolves through the system resolver")),
    "netstat": (Alternative(cmd="ss", args=["-tuln"], reason="ss lists the same sockets (iproute2)"),),
    "ss": (Alternative(cmd="netstat", args=["-tuln"], reason="netstat lists the same sockets (net-tools)"),),
    "ifconfig": (Alternative(cmd="ip", args=["addr"], reason="ip addr shows the same interfaces"),),
    "ip": (Alternative(cmd="ifconfig", args=[], reason="ifconfig shows the interfaces (net-tools)"),),
    "tree": (Alternative(cmd="find", args=[".", "-maxdepth", "2"], reason="find lists the same entries"),
             Alternative(cmd="ls", args=["-R"], reason="recursive listing")),
    "lsof": (Alternative(cmd="ss", args=["-tulnp"], reason="ss -p shows which process owns a socket"),),
    "top": (Alternative(cmd="ps", args=["aux"], reason="ps shows the same process table once"),),
    "free": (Alternative(cmd="cat", args=["/proc/meminfo"], reason="the kernel's memory counters"),),
}


@cache
def host_manager() -> tuple[str, str] | None:
    """(manager name, install prefix) of this host, or None when none is found."""
    for binary, name, prefix in MANAGERS:
        if shutil.which(binary):
            return name, prefix
    return None


def install_hint(cmd: str, manager: tuple[str, str] | None = None) -> InstallHint | None:
    mgr = manager or host_manager()
    if mgr is None:
        return None
    name, prefix = mgr
    table = packages(cmd)
    package = table.get(name) or table.get("*") or cmd
    return InstallHint(command=f"{prefix} {package}", package=package, manager=name)


def availability(cmd: str, status: str, usable: Callable[[str, list[str]], bool]) -> Availability:
    """The ``failure.availability`` block; ``usable(cmd, args)`` = passes the guard and exists."""
    alts = [a for a in ALTERNATIVES.get(cmd, ()) if a.cmd != cmd and usable(a.cmd, a.args)]
    return Availability(status=status, install=install_hint(cmd), alternatives=alts)  # type: ignore[arg-type]
