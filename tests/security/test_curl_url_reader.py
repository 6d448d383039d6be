"""The guard reads URLs the way curl does — checked against curl itself, not against our reading.

Oracle: curl is pointed at a proxy this test runs on 127.0.0.1; the request line curl sends
(``GET http://HOST:PORT/… `` or ``CONNECT HOST:PORT``) is where curl would connect. For every
spelling, either Parism's reader refuses the URL or it names exactly that host and port. The
armed trap of the metadata forms is the same capture: curl *does* ask for 169.254.169.254 (or
loopback) for each of them, and ``dry_run`` answers ``would_pass: false``. Nothing leaves the
loopback: the proxy answers 502 itself.
"""

from __future__ import annotations

import ipaddress
import shutil
import socket
import subprocess
from collections.abc import Iterator

import pytest
import tomli_w

from parism.net.destinations import Destinations
from parism.engine import create_engine
from parism.net.urls import UrlTarget, read_url, url_problem
from tests.security.sandbox.netlab import recording_listener

CURL = shutil.which("curl")
pytestmark = pytest.mark.skipif(CURL is None, reason="curl not installed")

METADATA = ipaddress.ip_address("169.254.169.254")

# Spellings that curl sends to a metadata or loopback address (each one is checked below).
REFUSED_FORMS = [
    "http:/169.254.169.254/latest/meta-data/", "HTTP://169.254.169.254/", "hTtP:/169.254.169.254",
    "http:///169.254.169.254/", "http://0xa9fea9fe/", "http://0XA9FEA9FE/", "http://0251.0376.0251.0376/",
    "http://0xa9.0xfe.0xa9.0xfe/", "http://169.254.43518/", "http://169.16689662/", "http://2852039166/",
    "http://%31%36%39.254.169.254/", "http://169.254.169.254:80/", "169.254.169.254/latest",
    "http://user:pw@169.254.169.254/", "http://[::ffff:169.254.169.254]/", "http://[::ffff:a9fe:a9fe]/",
    "http://[64:ff9b::a9fe:a9fe]/", "http://[64:ff9b::169.254.169.254]/", "http://[fd00:ec2::254]/",
    "http://[::169.254.169.254]/", "http://[2002:a9fe:a9fe::1]/", "https://169.254.169.254/",
    "http://127.0.0.1/", "http://127.1/", "http://0x7f.1/", "http://017700000001/", "http://2130706433/",
    "http://0/", "http://0.0.0.0/", "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/", "hTtP:/0x7f.1:8080/", "http://00000000000000000177.1/",
    "http://0x00000007f.1/", "http://10.0.0.1/", "http://192.168.1.1/", "http://172.16.0.1/",
    "http://100.64.0.1/", "http://[fe80::1%25eth0]/", "http://169.254.169.254#@example.com/",
    "http://127.0.0.1:6379/", "localhost:6379/", "http://localhost/",
]
# Spellings curl reads as names or as other hosts (the reader must agree on host and port).
OTHER_FORMS = [
    "http://example.com/", "https://example.com:8443/x?y#z", "example.com", "EXAMPLE.com/a",
    "http://1.2.3.4.5/", "http://256.1/", "http://4294967296/", "http://0x100000000/",
    "http://example.com?@169.254.169.254/", "http://127.0.0.1%2f@example.com/",
    "http://a:b@example.com:81/", "http://example.com:/", "http://[2001:db8::1]:8080/",
    "http://169.254.169.254./",
]
# Spellings curl refuses itself (the reader must refuse them too, or agree).
CURL_REFUSES = ["http:169.254.169.254", "http://a@b@169.254.169.254/", "http://127.0.0.1:80:80/",
                "http:\\\\169.254.169.254", "http://exa mple.com/", " http://a/", "http://a\\b/"]


@pytest.fixture(scope="module")
def capture_proxy() -> Iterator[tuple[int, list[str]]]:
    """A loopback 'proxy' that records each request line and answers 502 (nothing forwarded)."""
    with recording_listener(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n") as proxy:
        yield proxy


def curl_target(url: str, proxy: tuple[int, list[str]]) -> tuple[str, int] | int:
    """(host, port) curl asks the proxy for, or curl's exit code when it sends nothing."""
    port, lines = proxy
    before = len(lines)
    done = subprocess.run([CURL, "-s", "-o", "/dev/null", "--max-time", "5", "--noproxy", "",
                           "-x", f"http://127.0.0.1:{port}", "--", url], capture_output=True, timeout=15)
    if len(lines) == before:
        return done.returncode
    line = lines[before]
    method, target, _ = line.split(" ", 2)
    if method == "CONNECT":
        hostport = target
    else:
        hostport = target.split("://", 1)[1].split("/", 1)[0]
        if ":" not in hostport.rsplit("]", 1)[-1]:
            hostport += ":443" if target.startswith("https") else ":80"
    host, _, port_text = hostport.rpartition(":")
    return host.strip("[]"), int(port_text)


def not_global(a: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """The standard library's judgement (not Parism's): not global, or an IPv6 form whose last
    32 bits are a non-global IPv4 address (mapped, compatible, NAT64) or a 6to4 prefix."""
    if a.version == 6:
        inner = a.ipv4_mapped or a.sixtofour
        if inner is None and (int(a) >> 32 == 0 or int(a) >> 32 == 0xFFFF0000 or str(a).startswith("64:ff9b:")):
            inner = ipaddress.IPv4Address(int(a) & 0xFFFFFFFF)
        if inner is not None and not inner.is_global:
            return True
    return not a.is_global


def same_host(ours: UrlTarget, host: str) -> bool:
    try:
        return ours.address == ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:  # a name: the reader must name the same one (its address, if any, is extra caution)
        return ours.host.lower() == host.lower()


@pytest.mark.parametrize("url", REFUSED_FORMS + OTHER_FORMS + CURL_REFUSES)
def test_reader_agrees_with_curl(url: str, capture_proxy) -> None:
    theirs = curl_target(url, capture_proxy)
    ours = read_url(url)
    if isinstance(ours, str):
        return  # refused by the reader: never a different host than curl's
    assert not isinstance(theirs, int), f"curl sent nothing (exit {theirs}) but the reader accepted {ours}"
    host, port = theirs
    assert same_host(ours, host) and ours.port == port, (url, ours, theirs)


@pytest.mark.parametrize("url", REFUSED_FORMS)
def test_curl_really_targets_a_refused_address_and_the_guard_refuses(url: str, capture_proxy) -> None:
    theirs = curl_target(url, capture_proxy)
    assert not isinstance(theirs, int), f"curl sent nothing for {url!r}"
    host = theirs[0]
    if host == "localhost":
        addrs = {ipaddress.ip_address(a[4][0]) for a in socket.getaddrinfo("localhost", None)}
    else:
        addrs = {ipaddress.ip_address(host.split("%", 1)[0])}
    assert all(not_global(a) for a in addrs), (url, addrs)  # armed: curl would really go there
    assert url_problem(url, Destinations()) is not None


@pytest.mark.parametrize("url", ["http:/169.254.169.254/", "HTTP://0xa9fea9fe/", "http://[64:ff9b::a9fe:a9fe]/",
                                 "http://[::ffff:127.0.0.1]/", "http://0/", "http://2130706433/"])
def test_dry_run_would_not_pass(url: str, tmp_path) -> None:
    cfg = tmp_path / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"allowed_paths": [str(tmp_path)]}}))
    engine = create_engine(str(cfg))
    control = engine.dry_run("curl", ["-s", "https://example.com/"], str(tmp_path)).to_wire()
    assert control["would_pass"] is True, control  # the same call with a public URL passes
    answer = engine.dry_run("curl", ["-s", url], str(tmp_path)).to_wire()
    assert answer["would_pass"] is False and answer["reason"] == "arg_not_allowed", answer
    assert "network_allow" in answer["message"] or "not a global" in answer["message"], answer


def test_network_allow_opens_a_refused_destination() -> None:
    assert url_problem("http://127.0.0.1:8080/", Destinations()) is not None
    opened = Destinations(["127.0.0.1:8080"])
    assert url_problem("http://127.0.0.1:8080/", opened) is None
    assert url_problem("http://127.0.0.1:8081/", opened) is not None  # the port is part of the entry
    assert url_problem("http://[::1]:8080/", opened) is not None
    assert url_problem("http://10.1.2.3/", Destinations(["10.0.0.0/8"])) is None
