"""Host normalisation and metadata-address detection (parism/policy/network.py).

Expected addresses were checked against the C resolver: ``socket.inet_aton`` accepts the same
1-4 part decimal/octal/hex forms that curl and ping pass to it.
"""

from __future__ import annotations

import ipaddress
import socket

import pytest

from parism.policy.network import host_problem, is_metadata, literal_address, url_problem

METADATA_FORMS = [
    "169.254.169.254", "2852039166", "0251.0376.0251.0376", "0xa9fea9fe", "0xA9.0xFE.0xA9.0xFE",
    "169.254.43518", "169.16689662", "0251.254.169.254", "169.254.169.254.", "[::ffff:169.254.169.254]",
    "::ffff:a9fe:a9fe", "fd00:ec2::254", "[fd00:ec2::254]", "::169.254.169.254", "2002:a9fe:a9fe::1",
    "169.254.0.1", "169.254.255.255",
]


@pytest.mark.parametrize("host", [h for h in METADATA_FORMS if ":" not in h and not h.endswith(".")])
def test_ipv4_forms_agree_with_inet_aton(host: str) -> None:
    expected = ipaddress.IPv4Address(socket.inet_aton(host))
    assert literal_address(host) == expected


@pytest.mark.parametrize("host", METADATA_FORMS)
def test_metadata_forms_are_refused(host: str) -> None:
    assert host_problem(host) is not None


@pytest.mark.parametrize("host", ["127.0.0.1", "10.0.0.1", "192.0.2.1", "::1", "2001:db8::1", "localhost",
                                  "example.invalid", "169.253.255.255", "0xa9fe", ""])
def test_other_hosts_pass(host: str) -> None:
    assert host_problem(host) is None


def test_names_are_resolved_before_the_check() -> None:
    # localhost resolves (via /etc/hosts) to loopback, which is allowed; resolution failure is not a block
    assert host_problem("localhost") is None
    assert host_problem("no-such-host.invalid") is None


def test_ipv4_mapped_and_compatible() -> None:
    assert is_metadata(ipaddress.ip_address("::ffff:169.254.1.1"))
    assert not is_metadata(ipaddress.ip_address("::ffff:8.8.8.8"))


@pytest.mark.parametrize(("url", "ok"), [
    ("https://example.com/x", True), ("http://example.com", True), ("example.com/path", True),
    ("http://[2001:db8::1]:8080/", True),
    ("file:///etc/passwd", False), ("FILE:///etc/passwd", False), ("gopher://x/_", False),
    ("dict://x:11211/", False), ("ftp://x/", False), ("ftp.example.com", False), ("ldap://x", False),
    ("scp://x/y", False), ("telnet://x", False), ("http://{a,b}.example.com", False),
    ("http://169.254.169.254/", False), ("http://user:pw@0xa9fea9fe:80/", False),
])
def test_url_problem(url: str, ok: bool) -> None:
    assert (url_problem(url) is None) is ok
