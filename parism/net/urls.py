"""Network targets in argv: URLs read the way curl reads them, hosts the way the C resolver does.

This is the guard's fast first refusal (docs/security.md, "Network"); the wall is the egress
proxy, which checks every address after DNS resolution (``parism/run/egress/``). Both ask the same
``Destinations`` (``parism/net/destinations.py``), so what the guard refuses the proxy refuses too.

Why a URL reader of our own: Python's ``urlsplit`` reads ``http:/169.254.169.254/`` (one slash)
as the host ``http``, while curl connects to 169.254.169.254. ``read_url`` follows curl 7.88's
``lib/urlapi.c`` step by step (scheme only when ``:`` is followed by ``/``, one to three
slashes, authority up to ``/?#``, login up to the first ``@``, port after the first ``:``,
``ipv4_normalize`` for numeric hosts, percent-decoding of names) and is tested against curl
itself (``tests/security/test_curl_url_reader.py``: the request line curl sends to a proxy).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

from parism.net.destinations import Address, Destinations

ALLOWED_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
RESOLVE_TIMEOUT_S = 1.5
MAX_SCHEME_LEN = 40
_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="parism-resolve")

# curl guesses the protocol of a scheme-less URL from these host prefixes.
_GUESSED = ("ftp.", "dict.", "ldap.", "imap.", "smtp.", "pop3.")
_SCHEME_CHARS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
# hostname_check(): characters curl refuses in a (decoded) host name
_BAD_HOST_CHARS = set(" \r\n\t/:#?!@{}[]\\$'\"^`*<>=;,+&()%")
_IPV6_CHARS = set("0123456789abcdefABCDEF:.")
_IPV6_HOST = re.compile(r"\[[0-9A-Za-z:.%]*\]")


@dataclass(frozen=True)
class UrlTarget:
    """Where curl connects for a URL: scheme, host (decoded name or address text), port."""

    scheme: str
    host: str
    port: int
    address: Address | None  # set when the host is an address (every numeric form curl reads)


def _strtoul0(text: str) -> tuple[int, str] | None:
    """C ``strtoul(text, &end, 0)`` on a string starting with a digit: (value, rest)."""
    if text[:2].lower() == "0x" and len(text) > 2 and text[2] in "0123456789abcdefABCDEF":
        m = re.match(r"[0-9a-fA-F]+", text[2:])
        assert m is not None
        return int(m.group(), 16), text[2 + m.end():]
    if text.startswith("0"):
        m = re.match(r"[0-7]*", text[1:])
        assert m is not None
        return int("0" + m.group(), 8), text[1 + m.end():]
    m = re.match(r"[0-9]+", text)
    if m is None:
        return None
    return int(m.group()), text[m.end():]


def ipv4_normalize(host: str) -> ipaddress.IPv4Address | None:
    """curl's ``ipv4_normalize``: 1-4 parts, each decimal, octal (0…) or hex (0x…)."""
    parts: list[int] = []
    rest = host
    while True:
        if not rest[:1].isdigit() or not rest[:1].isascii():
            return None
        read = _strtoul0(rest)
        if read is None:
            return None
        value, rest = read
        if value > 0xFFFFFFFF:
            return None
        parts.append(value)
        if rest == "":
            break
        if rest[0] != "." or len(parts) == 4:
            return None
        rest = rest[1:]
    *head, last = parts
    if any(p > 0xFF for p in head) or last >= 256 ** (5 - len(parts)):
        return None
    value = 0
    for p in head:
        value = value * 256 + p
    return ipaddress.IPv4Address((value << (8 * (5 - len(parts)))) | last)


def _ipv6(host: str) -> ipaddress.IPv6Address | str:
    """``[addr]`` or ``[addr%25zone]`` as curl's ipv6_parse reads it."""
    inner = host[1:-1] if host.endswith("]") else ""
    addr, _, zone = inner.partition("%")
    if not addr or not set(addr) <= _IPV6_CHARS:
        return f"'{host}' is not a valid IPv6 address"
    if zone.startswith("25"):
        zone = zone[2:]
    try:
        return ipaddress.IPv6Address(addr)
    except ValueError:
        return f"'{host}' is not a valid IPv6 address"


def _split_scheme(url: str) -> tuple[str | None, str]:
    """``Curl_is_absolute_url`` with scheme guessing: a scheme only when ``:`` is followed by
    ``/``. Returns (lower-case scheme or None, the rest after the colon)."""
    m = _SCHEME_CHARS.match(url[:MAX_SCHEME_LEN])
    if m and url[m.end():m.end() + 2].startswith(":/"):
        return m.group().lower(), url[m.end() + 1:]
    return None, url


def read_url(url: str) -> UrlTarget | str:
    """Where curl would connect for ``url``, or why curl (or Parism) would not fetch it."""
    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        return f"'{url}' contains a space or control character"
    scheme, rest = _split_scheme(url)
    explicit = scheme is not None
    if scheme is not None:
        slashes = len(rest) - len(rest.lstrip("/"))
        if not 1 <= slashes <= 3:
            return f"'{url}' has {slashes} slashes after the scheme"
        rest = rest[slashes:]
    else:
        scheme = "http"
        lowered = url.lower()
        for prefix in _GUESSED:
            if lowered.startswith(prefix):
                scheme = prefix[:-1]
    if scheme not in ALLOWED_SCHEMES:
        return f"URL scheme '{scheme}' is not allowed (only {', '.join(ALLOWED_SCHEMES)})"
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    host = authority.split("@", 1)[1] if "@" in authority else authority
    host, port_or_error = _split_port(host, url, has_scheme=explicit)
    if isinstance(port_or_error, str):
        return port_or_error
    port = port_or_error or DEFAULT_PORTS[scheme]
    if not host:
        return f"'{url}' has no host"
    if host.startswith("["):
        addr6 = _ipv6(host)
        if isinstance(addr6, str):
            return addr6
        return UrlTarget(scheme, str(addr6), port, addr6)
    addr4 = ipv4_normalize(host)
    if addr4 is not None:
        return UrlTarget(scheme, str(addr4), port, addr4)
    try:
        name = unquote_to_bytes(host).decode("utf-8")
    except UnicodeDecodeError:
        return f"host of '{url}' is not valid UTF-8"
    if any(c in _BAD_HOST_CHARS or ord(c) < 0x20 for c in name):
        return f"host '{name}' of '{url}' contains characters curl refuses"
    return UrlTarget(scheme, name, port, literal_address(name))


def _split_port(host: str, url: str, has_scheme: bool) -> tuple[str, int | None | str]:
    """``Curl_parse_port``: after ``]`` for IPv6, else after the *first* colon; decimal only."""
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return host, f"'{url}' has an unterminated IPv6 address"
        tail = host[end + 1:]
        if tail and not tail.startswith(":"):
            return host, f"'{url}' has a bad port"
        host, port_text = host[:end + 1], tail[1:] if tail else None
    elif ":" in host:
        host, _, port_text = host.partition(":")
    else:
        port_text = None
    if port_text is None:
        return host, None
    if port_text == "":
        return host, None if has_scheme else f"'{url}' has an empty port"
    if not port_text.isdigit() or not port_text.isascii() or int(port_text) > 0xFFFF:
        return host, f"'{url}' has a bad port '{port_text}'"
    if int(port_text) == 0:
        return host, f"'{url}' names port 0"
    return host, int(port_text)


def literal_address(host: str) -> Address | None:
    """The address a host string denotes without DNS (the C resolver's ``inet_aton`` forms,
    brackets, zone ids, one trailing dot), or None for a name."""
    text = host.strip().rstrip(".").strip("[]")
    text = text.split("%", 1)[0]  # IPv6 zone id
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return ipv4_normalize(text) if text else None


def _resolve(host: str) -> list[Address]:
    infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


def host_problem(host: str, port: int, dest: Destinations, *, own_loopback: bool = False) -> str | None:
    """Why ``host:port`` may not be contacted, or None. A name is resolved (with a short time
    limit) and every address checked; a name that does not resolve passes — the egress proxy
    resolves it again and is the wall. ``own_loopback``: the command's loopback is its own
    network namespace's (ping), so loopback addresses reach nothing of the host."""
    if not host:
        return None
    addr = literal_address(host)
    if addr is None and dest.allowed_by_rule(None, port, host):
        return None
    if addr is not None:
        addrs = [addr]
    else:
        try:
            addrs = _pool.submit(_resolve, host.rstrip(".")).result(timeout=RESOLVE_TIMEOUT_S)
        except (OSError, UnicodeError, ValueError, FutureTimeout):
            return None
    for a in addrs:
        if own_loopback and a.is_loopback:
            continue
        problem = dest.refusal(a, port, host if addr is None else None)
        if problem:
            return problem
    return None


def url_problem(url: str, dest: Destinations) -> str | None:
    """Scheme, globbing and destination check for a URL argument (curl)."""
    target = read_url(url)
    if isinstance(target, str):
        return target
    unbracketed = _IPV6_HOST.sub("", url, count=1) if target.address and target.address.version == 6 else url
    if any(c in unbracketed for c in "{}[]"):
        return f"URL globbing is not allowed in '{url}'"
    if target.address is not None:
        return dest.refusal(target.address, target.port)
    return host_problem(target.host, target.port, dest)
