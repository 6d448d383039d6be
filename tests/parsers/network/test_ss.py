"""ss: real iproute2 output (with and without the Netid/State columns), corpus rows by hand, §22.3 #44."""

from __future__ import annotations

from typing import Any

from tests.parsers.network.fixtures import corpus_text, parse, parse_fixture


def _port(rows: list[dict[str, Any]], port: int) -> dict[str, Any]:
    hits = [r for r in rows if r.get("local_port") == str(port)]
    assert len(hits) == 1, rows
    return hits[0]


def test_tulpn_processes() -> None:
    parsed, exp = parse_fixture("linux", "ss", "tulpn")
    tcp = _port(parsed["connections"], exp["tcp_port"])
    assert (tcp["netid"], tcp["state"], tcp["local_address"], tcp["peer_port"]) == ("tcp", "LISTEN", "127.0.0.1", "*")
    assert tcp["processes"] == [{"name": "python", "pid": exp["pid"], "fd": 3}]
    udp = _port(parsed["connections"], exp["udp_port"])
    assert udp["state"] == "UNCONN" and udp["processes"][0]["pid"] == exp["pid"]


def test_bug_44_no_netid_column() -> None:
    """§22.3 #44: without a Netid column every field shifted; here even State is absent
    (``ss -tn state listening``)."""
    parsed, exp = parse_fixture("linux", "ss", "tn-nonetid")
    tcp = _port(parsed["connections"], exp["tcp_port"])
    assert tcp == {"recv_q": 0, "send_q": 128, "local_address": "127.0.0.1", "local_port": str(exp["tcp_port"]),
                   "peer_address": "0.0.0.0", "peer_port": "*"}


def test_state_without_netid() -> None:
    text = ("State  Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n"
            "ESTAB  0      36     10.0.0.5:22        10.0.0.9:51000\n")
    row = parse("ss", ["-tn"], text).parsed["connections"][0]
    assert (row["state"], row["send_q"], row["local_port"], row["peer_address"]) == ("ESTAB", 36, "22", "10.0.0.9")
    assert "netid" not in row


def test_unix_rows() -> None:
    parsed, _ = parse_fixture("linux", "ss", "xa")
    rows = parsed["connections"]
    assert len(rows) == 2 and all(r["netid"] == "u_str" and r["path"] == "*" for r in rows)
    assert {(r["local_port"], r["peer_port"]) for r in rows} == {("250", "249"), ("249", "250")}


def test_interface_scope_and_service_names() -> None:
    text = corpus_text("ss/ubuntu-18.04__ss-sudo-a")
    rows = parse("ss", ["-a"], text).parsed["connections"]
    # udp UNCONN 0 0 127.0.0.53%lo:domain 0.0.0.0:*
    row = next(r for r in rows if r.get("local_address") == "127.0.0.53%lo" and r["netid"] == "udp")
    assert (row["interface"], row["local_port"], row["peer_address"]) == ("lo", "domain", "0.0.0.0")


def test_netlink_rows() -> None:
    rows = parse("ss", ["-a"], corpus_text("ss/centos-7.7__ss-sudo-a")).parsed["connections"]
    # nl UNCONN 768 0 rtnl:dockerd-current/1220 *
    assert rows[0] == {"netid": "nl", "state": "UNCONN", "recv_q": 768, "send_q": 0,
                       "channel": "rtnl:dockerd-current", "pid": 1220, "peer_address": "*"}


def test_ipv6_brackets_kept() -> None:
    text = "Netid State  Recv-Q Send-Q Local Address:Port Peer Address:Port\ntcp   LISTEN 0      128    [::]:22            [::]:*\n"
    row = parse("ss", ["-tln"], text).parsed["connections"][0]
    assert (row["local_address"], row["local_port"], row["peer_address"]) == ("[::]", "22", "[::]")


def test_info_continuation_lines() -> None:
    text = ("State Recv-Q Send-Q Local Address:Port Peer Address:Port\n"
            "ESTAB 0      0      10.0.0.5:22        10.0.0.9:51000\n"
            "\t cubic wscale:7,7 rto:204 rtt:3.5/1.2\n")
    row = parse("ss", ["-tni"], text).parsed["connections"][0]
    assert row["info"] == "cubic wscale:7,7 rto:204 rtt:3.5/1.2"


def test_summary_is_unsupported() -> None:
    out = parse("ss", ["-s"], "Total: 100\n")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"


def test_no_header_line() -> None:
    parsed, exp = parse_fixture("linux", "ss", "H-tln")
    tcp = _port(parsed["connections"], exp["tcp_port"])
    assert (tcp["state"], tcp["send_q"], tcp["local_address"], "netid" in tcp) == ("LISTEN", 128, "127.0.0.1", False)
