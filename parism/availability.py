"""What to tell an agent when a binary is missing: how to install it here, and what else works.

The package manager is detected on this host (the first of apt/dnf/yum/apk/pacman/zypper/brew/
winget found on PATH). The package is taken from :data:`PACKAGES`, a maintained table — its
``apt`` names read from Debian 12's own index (``dpkg -S`` of each installed binary,
``apt-cache policy`` for the others) — and never guessed from the command's name: a command the
table does not name for this manager gets no install hint (``ping`` had been offered as the
package ``ping``; Debian's is ``iputils-ping``). Alternatives are offered only when they pass
the live guard and their binary exists, so the agent is never pointed at another refusal.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from functools import cache

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

def _unix(package: str) -> dict[str, str]:
    """The same package name for every manager but winget (which has none of these)."""
    return {m: package for m in ("apt", "dnf", "yum", "apk", "pacman", "zypper", "brew")}


_COREUTILS = _unix("coreutils")

# command → {manager: package}; "*" is the package for managers not listed (set only where the
# name is the same for all of them); a command absent here has no install hint
PACKAGES: dict[str, dict[str, str]] = {
    **{cmd: _COREUTILS for cmd in ("cat", "date", "df", "du", "echo", "env", "head", "id", "ls", "pwd",
                                   "stat", "tail", "uname", "wc")},
    "apt": {"apt": "apt"},
    "find": {"apt": "findutils", "dnf": "findutils", "yum": "findutils", "apk": "findutils",
             "pacman": "findutils", "zypper": "findutils", "brew": "findutils"},
    "grep": _unix("grep"),
    "hostname": {"apt": "hostname", "dnf": "hostname", "yum": "hostname", "pacman": "inetutils"},
    "kill": {"apt": "procps", "dnf": "util-linux", "yum": "util-linux", "pacman": "util-linux"},
    "which": {"apt": "debianutils", "dnf": "which", "yum": "which", "pacman": "which", "zypper": "which"},
    "ping": {"apt": "iputils-ping", "dnf": "iputils", "yum": "iputils", "apk": "iputils", "pacman": "iputils",
             "zypper": "iputils"},
    "ping6": {"apt": "iputils-ping", "dnf": "iputils", "yum": "iputils", "apk": "iputils", "pacman": "iputils",
              "zypper": "iputils"},
    "git": {"*": "git", "winget": "Git.Git"},
    "curl": {"*": "curl", "winget": "cURL.cURL"},
    "jq": {**_unix("jq"), "winget": "jqlang.jq"},
    "tree": _unix("tree"),
    "lsof": _unix("lsof"),
    "node": {"apt": "nodejs", "dnf": "nodejs", "yum": "nodejs", "apk": "nodejs", "pacman": "nodejs",
             "zypper": "nodejs", "brew": "node", "winget": "OpenJS.NodeJS"},
    "cargo": {"apt": "cargo", "dnf": "cargo", "yum": "cargo", "apk": "cargo", "pacman": "rust", "zypper": "cargo",
              "brew": "rust"},
    "dig": {"apt": "dnsutils", "dnf": "bind-utils", "yum": "bind-utils", "apk": "bind-tools",
            "pacman": "bind", "zypper": "bind-utils", "brew": "bind"},
    "nslookup": {"apt": "dnsutils", "dnf": "bind-utils", "yum": "bind-utils", "apk": "bind-tools",
                 "pacman": "bind", "zypper": "bind-utils", "brew": "bind"},
    "ip": {"*": "iproute2", "dnf": "iproute", "yum": "iproute", "brew": "iproute2mac"},
    "ss": {"*": "iproute2", "dnf": "iproute", "yum": "iproute"},
    "netstat": {"*": "net-tools"},
    "ifconfig": {"*": "net-tools"},
    "ps": {"*": "procps", "dnf": "procps-ng", "yum": "procps-ng", "pacman": "procps-ng"},
    "free": {"*": "procps", "dnf": "procps-ng", "yum": "procps-ng", "pacman": "procps-ng"},
    "top": {"*": "procps", "dnf": "procps-ng", "yum": "procps-ng", "pacman": "procps-ng"},
    "uptime": {"*": "procps", "dnf": "procps-ng", "yum": "procps-ng", "pacman": "procps-ng"},
    "docker": {"apt": "docker.io", "*": "docker"},
    "npm": {"*": "npm", "brew": "node", "winget": "OpenJS.NodeJS"},
    "gh": {"apt": "gh", "dnf": "gh", "brew": "gh", "winget": "GitHub.cli"},
    "kubectl": {"*": "kubectl", "brew": "kubernetes-cli"},
    "journalctl": {"*": "systemd"},
    "systemctl": {"*": "systemd"},
    "pip": {"apt": "python3-pip", "dnf": "python3-pip", "apk": "py3-pip", "*": "python-pip"},
}

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
    table = PACKAGES.get(cmd, {})
    package = table.get(name) or table.get("*")
    if package is None:  # not known for this manager: no name is guessed
        return None
    return InstallHint(command=f"{prefix} {package}", package=package, manager=name)


def availability(cmd: str, status: str, usable: Callable[[str, list[str]], bool]) -> Availability:
    """The ``failure.availability`` block; ``usable(cmd, args)`` = passes the guard and exists."""
    alts = [a for a in ALTERNATIVES.get(cmd, ()) if a.cmd != cmd and usable(a.cmd, a.args)]
    return Availability(status=status, install=install_hint(cmd), alternatives=alts)  # type: ignore[arg-type]
