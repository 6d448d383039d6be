"""Host normalisation and the default destination refusals (parism/net/urls.py,
parism/net/destinations.py).

Expected IPv4 values are checked against the C resolver (``socket.inet_aton`` accepts the same
1-4 part decimal/octal/hex forms that ping passes to it); curl's own reading is tested against
curl in tests/security/test_curl_url_reader.py.
"""

from __future__ import annotations

import ipaddress
import socket

import pytest

from parism.net.destinations import Destinations, address_class, parse_rule
from parism.net.urls import host_problem, literal_address, url_problem

NONE = Destinations()
METADATA_FORMS = [
    "169.254.169.254", "2852039166", "0251.0376.0251.0376", "0xa9fea9fe", "0xA9.0xFE.0xA9.0xFE",
    "169.254.43518", "169.16689662", "0251.254.169.254", "169.254.169.254.", "[::ffff:169.254.169.254]",
    "::ffff:a9fe:a9fe", "fd00:ec2::254", "[fd00:ec2::254]", "::169.254.169.254", "2002:a9fe:a9fe::1",
    "64:ff9b::a9fe:a9fe", "64:ff9b::169.254.169.254", "::ffff:0:a9fe:a9fe", "169.254.0.1", "169.254.255.255",
]
REFUSED_BY_DEFAULT = ["127.0.0.1", "127.1", "0", "0.0.0.0", "::", "::1", "::ffff:127.0.0.1", "10.0.0.1",
                      "172.16.0.1", "192.168.0.1", "100.64.0.1", "fc00::1", "fe80::1", "fe80::1%eth0",
                      "224.0.0.1", "ff02::1", "240.0.0.1", "192.0.2.1", "64:ff9b:1::1", "64:ff9b::7f00:1"]


@pytest.mark.parametrize("host", [h for h in METADATA_FORMS if ":" not in h and not h.endswith(".")])
def test_ipv4_forms_agree_with_inet_aton(host: str) -> None:
    expected = ipaddress.IPv4Address(socket.inet_aton(host))
    assert literal_address(host) == expected


@pytest.mark.parametrize("host", METADATA_FORMS + REFUSED_BY_DEFAULT)
def test_refused_forms(host: str) -> None:
    assert host_problem(host, 80, NONE) is not None


@pytest.mark.parametrize("host", ["8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808",
                                  "example.invalid", "169.253.255.255", ""])
def test_global_hosts_pass(host: str) -> None:
    assert host_problem(host, 80, NONE) is None


def test_names_are_resolved_before_the_check() -> None:
    assert host_problem("localhost", 80, NONE) is not None  # /etc/hosts: loopback
    assert host_problem("no-such-host.invalid", 80, NONE) is None  # the proxy resolves again


def test_own_loopback_for_ping() -> None:
    assert host_problem("127.0.0.1", 0, NONE, own_loopback=True) is None
    assert host_problem("169.254.169.254", 0, NONE, own_loopback=True) is not None


def test_metadata_is_named() -> None:
    assert address_class(ipaddress.ip_address("169.254.169.254")) == "a cloud metadata address"
    assert "cloud metadata" in (address_class(ipaddress.ip_address("::ffff:169.254.169.254")) or "")
    assert "cloud metadata" in (address_class(ipaddress.ip_address("64:ff9b::a9fe:a9fe")) or "")


@pytest.mark.parametrize(("entry", "addr", "port", "name", "opens"), [
    ("10.0.0.0/8", "10.1.2.3", 80, None, True),
    ("10.0.0.0/8:443", "10.1.2.3", 80, None, False),
    ("10.0.0.0/8:443", "10.1.2.3", 443, None, True),
    ("127.0.0.1:8080", "127.0.0.1", 8080, None, True),
    ("[::1]:8080", "::1", 8080, None, True),
    ("fd00::/8", "fd00:ec2::254", 80, None, True),
    ("db.internal:5432", "10.9.9.9", 5432, "db.internal", True),
    ("db.internal:5432", "10.9.9.9", 5432, "other.internal", False),
    ("*.corp.example", "10.9.9.9", 80, "a.b.corp.example", True),
    ("*.corp.example", "10.9.9.9", 80, "corp.example", False),
])
def test_network_allow_rules(entry: str, addr: str, port: int, name: str | None, opens: bool) -> None:
    dest = Destinations([entry])
    assert (dest.refusal(ipaddress.ip_address(addr), port, name) is None) is opens


@pytest.mark.parametrize("entry", ["10.0.0.0/33", "host:0", "host:99999", "[::1", "a b", "::1]:80", "x:y"])
def test_bad_allow_entries(entry: str) -> None:
    with pytest.raises(ValueError):
        parse_rule(entry)


@pytest.mark.parametrize(("url", "ok"), [
    ("https://example.com/x", True), ("http://example.com", True), ("example.com/path", True),
    ("http://[2606:4700::1111]:8080/", True),
    ("file:///etc/passwd", False), ("FILE:///etc/passwd", False), ("gopher://x/_", False),
    ("dict://x:11211/", False), ("ftp://x/", False), ("ftp.example.com", False), ("ldap://x", False),
    ("scp://x/y", False), ("telnet://x", False), ("http://{a,b}.example.com", False),
    ("http://example.com/[1-9]", False), ("http://169.254.169.254/", False),
    ("http://user:pw@0xa9fea9fe:80/", False), ("http:/169.254.169.254/", False),
])
def test_url_problem(url: str, ok: bool) -> None:
    assert (url_problem(url, NONE) is None) is ok
