"""Which destinations a sandboxed command may reach: one rule for the argv guard and the proxy.

The guard's URL check (a fast first refusal) and the egress proxy (the wall: it sees every
address after DNS resolution, for every hop of a redirect) ask the same ``Destinations``, so
the two cannot disagree. Refused by default: anything that is not a global unicast address —
loopback, unspecified (``0``), link-local (cloud metadata 169.254.169.254 lives there),
private and unique-local ranges (``fd00:ec2::254``), shared address space, multicast,
reserved — plus the host's own addresses, and IPv6 forms that embed a refused IPv4 address
(IPv4-mapped/compatible/translated, NAT64 ``64:ff9b::/96``, 6to4). ``sandbox.network_allow``
opens destinations again: CIDRs or addresses, optionally with a port, or host names (the name
the client asked for, ``*.`` for a suffix), e.g. ``["10.0.0.0/8", "127.0.0.1:8080",
"[fd00::1]:443", "registry.internal:5000", "*.corp.example"]``.
"""

from __future__ import annotations

import ipaddress
import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Named first so a refusal says *why*; anything else that is not global is refused too.
_LABELLED: tuple[tuple[str, str], ...] = (
    ("169.254.169.254/32", "a cloud metadata address"),
    ("169.254.169.253/32", "a cloud DNS/metadata address"),
    ("fd00:ec2::254/128", "a cloud metadata address"),
    ("100.100.100.200/32", "a cloud metadata address"),
    ("0.0.0.0/8", "an unspecified address (it reaches the host itself)"),
    ("::/128", "an unspecified address (it reaches the host itself)"),
    ("127.0.0.0/8", "a loopback address"),
    ("::1/128", "a loopback address"),
    ("169.254.0.0/16", "a link-local address"),
    ("fe80::/10", "a link-local address"),
    ("10.0.0.0/8", "a private address"),
    ("172.16.0.0/12", "a private address"),
    ("192.168.0.0/16", "a private address"),
    ("fc00::/7", "a unique-local (private) address"),
    ("100.64.0.0/10", "a shared (carrier-grade NAT) address"),
    ("64:ff9b:1::/48", "a local-use NAT64 address"),
    ("224.0.0.0/4", "a multicast address"),
    ("ff00::/8", "a multicast address"),
    ("240.0.0.0/4", "a reserved address"),
)
LABELLED = tuple((ipaddress.ip_network(net), why) for net, why in _LABELLED)
NAT64 = ipaddress.ip_network("64:ff9b::/96")
SIIT = ipaddress.ip_network("::ffff:0:0:0/96")  # IPv4-translated
OWN_REFRESH_S = 5.0


def embedded_ipv4(addr: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries (mapped, compatible, translated, NAT64, 6to4)."""
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    if addr.sixtofour is not None:
        return addr.sixtofour
    if addr in NAT64 or addr in SIIT or (addr.packed[:12] == bytes(12) and int(addr) > 1):
        return ipaddress.IPv4Address(addr.packed[12:])
    return None


def address_class(addr: Address) -> str | None:
    """Why ``addr`` is refused by default (a phrase), or None for a global unicast address."""
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.scope_id:
            addr = ipaddress.IPv6Address(str(addr).split("%", 1)[0])
        inner = embedded_ipv4(addr)
        if inner is not None:
            why = address_class(inner)
            if why is not None:
                return f"{why} ({inner} inside {addr})"
    for net, why in LABELLED:
        if addr.version == net.version and addr in net:
            return why
    if not addr.is_global:
        return "not a global address"
    return None


class _OwnAddresses:
    """The host's own interface addresses (a public address of the host is still the host)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at = -OWN_REFRESH_S
        self._addrs: frozenset[Address] = frozenset()

    def get(self) -> frozenset[Address]:
        with self._lock:
            if time.monotonic() - self._at >= OWN_REFRESH_S:
                self._addrs = frozenset(_interface_addresses())
                self._at = time.monotonic()
            return self._addrs


def _interface_addresses() -> Iterable[Address]:
    import psutil  # lazy: the configuration model imports this module to validate entries

    for entries in psutil.net_if_addrs().values():
        for entry in entries:
            try:
                yield ipaddress.ip_address(str(entry.address).split("%", 1)[0])
            except ValueError:
                continue  # MAC addresses (AF_PACKET)


OWN = _OwnAddresses()


@dataclass(frozen=True)
class Rule:
    """One ``sandbox.network_allow`` entry: a network or a host name, optionally a port."""

    text: str
    net: Network | None = None
    name: str | None = None  # lower-case, no trailing dot; "*.x" matches x's subdomains
    port: int | None = None

    def matches(self, addr: Address | None, port: int, name: str | None) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.net is not None:
            return addr is not None and addr.version == self.net.version and addr in self.net
        host = (name or "").lower().rstrip(".")
        assert self.name is not None
        if self.name.startswith("*."):
            return host.endswith(self.name[1:])
        return host == self.name


_NAME = re.compile(r"^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$")


def parse_rule(text: str) -> Rule:
    """``10.0.0.0/8``, ``10.1.2.3:80``, ``[fd00::/64]:443``, ``fd00::1``, ``db.internal:5432``,
    ``*.corp.example``; raises ``ValueError`` with a message naming the entry."""
    raw = text.strip()
    host, port = raw, None
    if raw.startswith("["):
        host, sep, rest = raw[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"'{text}': an IPv6 entry with a port is written [address]:port")
        port = _port(text, rest[1:]) if rest else None
    elif raw.count(":") == 1:
        host, _, port_text = raw.partition(":")
        port = _port(text, port_text)
    try:
        return Rule(raw, net=ipaddress.ip_network(host, strict=False), port=port)
    except ValueError:
        pass
    name = host.lower().rstrip(".")
    if not _NAME.match(name):
        raise ValueError(f"'{text}' is neither a CIDR, an address nor a host name (optionally with :port)")
    return Rule(raw, name=name, port=port)


def _port(text: str, port: str) -> int:
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"'{text}': the port must be a number from 1 to 65535")
    return int(port)


class Destinations:
    """The default refusals with ``sandbox.network_allow`` applied."""

    def __init__(self, allow: Sequence[str] = ()) -> None:
        self.rules = tuple(parse_rule(entry) for entry in allow)

    def allowed_by_rule(self, addr: Address | None, port: int, name: str | None) -> bool:
        return any(rule.matches(addr, port, name) for rule in self.rules)

    def refusal(self, addr: Address, port: int, name: str | None = None) -> str | None:
        """Why the client may not connect to ``addr:port`` (asked for as ``name``), or None."""
        if self.allowed_by_rule(addr, port, name):
            return None
        why = address_class(addr)
        if why is None and addr in OWN.get():
            why = "one of this host's own addresses"
        if why is None:
            return None
        shown = f"[{addr}]" if addr.version == 6 else str(addr)
        asked = f"'{name}' resolves to {shown}, " if name and name.strip("[]") != str(addr) else f"{shown} is "
        return f"{asked}{why}; sandbox.network_allow can open it"


@lru_cache(maxsize=8)
def destinations(allow: tuple[str, ...]) -> Destinations:
    """One ``Destinations`` per distinct allow list (configurations are few and immutable)."""
    return Destinations(allow)
