"""The network piece of a sandbox plan: its own network namespace whose only way out is Parism.

A command whose policy allows network does not share the host's network namespace. The exec
chain runs ``parism/run/egress/_netns.py`` just before bwrap: it makes a user + network namespace
with only ``lo``, binds the proxy port and the resolvers' port 53 there, and sends those
sockets back over a socketpair; ``Egress.attach`` (once the sandbox is ready) hands them to the
server's egress proxy and DNS relay (``parism/run/egress/proxy.py``), which check every
destination with ``sandbox.network_allow`` (``parism/net/destinations.py``). HTTP clients find the
proxy through ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``; ``ping`` reaches the namespace's own
loopback; anything else has no route (fails closed). docs/security.md, "Network".
"""

from __future__ import annotations

import ipaddress
import socket
from functools import lru_cache
from pathlib import Path

from parism.net.destinations import destinations
from parism.run.egress.proxy import Attached, EgressProxy

PROXY_PORT = 3128
PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
RESOLV_CONF = "/etc/resolv.conf"
RECV_TIMEOUT_S = 10.0
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def proxy_env() -> dict[str, str]:
    """What points HTTP clients (curl, git, npm, pip, Go and Node clients) at the proxy.
    ``NO_PROXY`` is emptied: a direct connection would only meet the namespace's loopback."""
    return {**{name: PROXY_URL for name in PROXY_VARS}, "NO_PROXY": "", "no_proxy": ""}


def system_resolvers(path: str = RESOLV_CONF) -> tuple[str, ...]:
    """The ``nameserver`` addresses of resolv.conf (the DNS relay forwards to these only)."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ()
    out: list[str] = []
    for line in lines:
        words = line.split()
        if len(words) >= 2 and words[0] == "nameserver":
            try:
                out.append(str(ipaddress.ip_address(words[1].split("%", 1)[0])))
            except ValueError:
                continue
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=1)
def netns_code() -> bytes:
    return (Path(__file__).parent.parent / "egress" / "_netns.py").read_bytes()


class Egress:
    """One sandbox's network namespace hand-off: the socketpair, then the proxy attachment."""

    def __init__(self, network_allow: tuple[str, ...], resolvers: tuple[str, ...]) -> None:
        self.dest = destinations(network_allow)
        self.resolvers = resolvers
        self._ours, self._theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.attached: Attached | None = None

    @property
    def child_fd(self) -> int:
        return self._theirs.fileno()

    def prefix(self, python: str, source_fd: int) -> list[str]:
        """The exec-chain step before bwrap (its source is the sealed memfd ``source_fd``)."""
        return [python, "-I", "-S", f"/proc/self/fd/{source_fd}", str(self.child_fd), str(PROXY_PORT),
                *self.resolvers, "--"]

    def spawned(self) -> None:
        """The child holds its end now (or the spawn failed): close ours of it."""
        self._theirs.close()

    def attach(self) -> None:
        """Take the namespace's sockets and serve them (once; before the command runs)."""
        if self.attached is not None or self._ours.fileno() < 0:
            return
        self._ours.settimeout(RECV_TIMEOUT_S)
        try:
            _, fds, _, _ = socket.recv_fds(self._ours, 1024, 1 + 2 * len(self.resolvers))
        finally:
            self._ours.close()
        socks = [socket.socket(fileno=fd) for fd in fds]
        if len(socks) != 1 + 2 * len(self.resolvers):
            for s in socks:
                s.close()
            raise OSError("the sandbox's network namespace did not hand over its sockets")
        self.attached = EgressProxy.get().attach(socks, self.resolvers, self.dest)

    def refusals(self) -> list[str]:
        return list(self.attached.refusals) if self.attached else []

    def close(self) -> None:
        if self.attached is not None:
            self.attached.close()
        self._ours.close()
        self._theirs.close()


#: Address families per command class (docs/security.md, "Socket families"): AF_INET/AF_INET6
#: where the class has network (through the egress proxy); AF_NETLINK where a command reads
#: kernel state — the host's in host_net (ss, netstat), the sandbox's own network namespace
#: elsewhere (``hostname -I``, a resolver asking for its addresses: every class had it before
#: the allowlist, and without network that namespace holds only its loopback). AF_UNIX is
#: added only where a socket bind lifted the Unix filter. Nothing is wider than before.
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
CLASS_FAMILIES = {"host_net": (AF_NETLINK,), "network": (AF_INET, AF_INET6, AF_NETLINK), "none": (AF_NETLINK,)}


def socket_families(namespace: str, network: bool, deny_unix_sockets: bool) -> tuple[int, ...]:
    """The address families a command of this class may create sockets of."""
    kind = "host_net" if namespace == "host_net" else "network" if network else "none"
    return tuple(sorted((*CLASS_FAMILIES[kind], *(() if deny_unix_sockets else (AF_UNIX,)))))


def helper_filter(namespace: str, network: bool, deny_unix_sockets: bool, supported: bool = True) -> str:
    """The helper's socket filter argument: the allowed families, comma-separated (``-``: no
    filter — an architecture the helper has none for)."""
    if not supported:
        return "-"
    return ",".join(str(f) for f in socket_families(namespace, network, deny_unix_sockets))
