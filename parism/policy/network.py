"""Network targets: URL schemes and cloud-metadata addresses (contract §22.1 item 3).

A network command must not reach the instance metadata service (it hands out cloud
credentials).  Attackers spell 169.254.169.254 in many ways — decimal ``2852039166``, octal
``0251.0376.0251.0376``, hex ``0xa9fea9fe``, short ``169.254.43518``, IPv4-mapped IPv6,
trailing dots — so hosts are normalised the way ``inet_aton`` reads them and then resolved
(``getaddrinfo`` with a short time limit) before the check.  A name that does not resolve is
not blocked by itself: the sandbox/network policy still applies to it.
"""

from __future__ import annotations

import ipaddress
import socket
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from urllib.parse import urlsplit

ALLOWED_SCHEMES = ("http", "https")
METADATA_NETS = (
    ipaddress.ip_network("169.254.0.0/16"),
    ipaddress.ip_network("fd00:ec2::254/128"),
)
RESOLVE_TIMEOUT_S = 1.5
_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="parism-resolve")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """IPv4 in any form the C resolver accepts (1-4 parts, decimal/octal/hex)."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    nums = []
    for part in parts:
        try:
            if part.lower().startswith("0x"):
                nums.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                nums.append(int(part, 8))
            else:
                nums.append(int(part, 10))
        except ValueError:
            return None
    *head, last = nums
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(nums)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    value = (value << (8 * (5 - len(nums)))) | last
    return ipaddress.IPv4Address(value)


def literal_address(host: str) -> Address | None:
    """The address a host string denotes without DNS, or None for a name."""
    text = host.strip().rstrip(".").strip("[]")
    text = text.split("%", 1)[0]  # IPv6 zone id
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return _inet_aton(text)


def is_metadata(addr: Address) -> bool:
    if isinstance(addr, ipaddress.IPv6Address):
        for mapped in (addr.ipv4_mapped, addr.sixtofour):
            if mapped is not None and is_metadata(mapped):
                return True
        if addr.packed[:12] == bytes(12) and is_metadata(ipaddress.IPv4Address(addr.packed[12:])):
            return True  # IPv4-compatible ::a.b.c.d
    return any(addr in net for net in METADATA_NETS)


def _resolve(host: str) -> list[Address]:
    infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


def host_problem(host: str) -> str | None:
    """Why ``host`` may not be contacted, or None."""
    if not host:
        return None
    addr = literal_address(host)
    if addr is not None:
        return f"'{host}' is a cloud metadata address" if is_metadata(addr) else None
    try:
        addrs = _pool.submit(_resolve, host.rstrip(".")).result(timeout=RESOLVE_TIMEOUT_S)
    except (OSError, UnicodeError, ValueError, FutureTimeout):
        return None
    bad = [str(a) for a in addrs if is_metadata(a)]
    return f"'{host}' resolves to a cloud metadata address ({bad[0]})" if bad else None


# curl guesses the protocol of a scheme-less URL from these host prefixes.
_GUESSED = ("ftp.", "dict.", "ldap.", "imap.", "smtp.", "pop3.")


def url_problem(url: str) -> str | None:
    """Scheme and host check for a URL argument (curl)."""
    if "://" not in url and url.lower().startswith(_GUESSED):
        return f"'{url}' would be fetched with a non-HTTP protocol; write http:// or https:// explicitly"
    candidate = url if "://" in url else f"http://{url}"
    try:
        parts = urlsplit(candidate)
        host = parts.hostname or ""
    except ValueError:
        return f"'{url}' is not a valid URL"
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        return f"URL scheme '{scheme}' is not allowed (only {', '.join(ALLOWED_SCHEMES)})"
    if any(c in url for c in "{}[]") and not host.count(":"):
        return f"URL globbing is not allowed in '{url}'"
    return host_problem(host)
