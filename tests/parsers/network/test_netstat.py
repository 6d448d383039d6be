"""netstat: real net-tools output with a listener this test suite's capture script opened, corpus
rows checked by hand (BSD ``ip.port``, Windows CRLF and ``-b``), and §22.3 #44."""

from __future__ import annotations

from typing import Any

from tests.parsers.network.fixtures import corpus_text, parse, parse_fixture


def _find(rows: list[dict[str, Any]], **want: object) -> dict[str, Any]:
    hits = [r for r in rows if all(r.get(k) == v for k, v in want.items())]
    assert len(hits) == 1, (want, rows)
    return hits[0]


def test_tulpn_listener_and_udp_without_state() -> None:
    parsed, exp = parse_fixture("linux", "netstat", "tulpn")
    tcp = _find(parsed["connections"], proto="tcp", local_port=str(exp["tcp_port"]))
    assert tcp["local_address"] == f"127.0.0.1:{exp['tcp_port']}" and tcp["local_host"] == "127.0.0.1"
    assert (tcp["state"], tcp["pid"], tcp["foreign_port"]) == ("LISTEN", exp["pid"], "*")
    assert tcp["program"] == "python"  # the executable name as the kernel reports it
    udp = _find(parsed["connections"], proto="udp", local_port=str(exp["udp_port"]))
    assert "state" not in udp and udp["pid"] == exp["pid"]
    other = _find(parsed["connections"], local_port="2024")
    assert "pid" not in other  # "-": not ours, no permission shown


def test_tuln_has_no_pid_column() -> None:
    parsed, exp = parse_fixture("linux", "netstat", "tuln")
    tcp = _find(parsed["connections"], local_port=str(exp["tcp_port"]))
    assert tcp["state"] == "LISTEN" and "pid" not in tcp and tcp["recv_q"] == tcp["send_q"] == 0


def test_routes_match_proc() -> None:
    parsed, exp = parse_fixture("linux", "netstat", "rn")
    assert [r["destination"] for r in parsed["routes"]] == exp["routes"]
    assert parsed["connections"] == [] and "unparsed" not in parsed


def test_interfaces_match_psutil() -> None:
    parsed, exp = parse_fixture("linux", "netstat", "i")
    assert sorted(r["iface"] for r in parsed["interfaces"]) == exp["interfaces"]
    lo = _find(parsed["interfaces"], iface="lo")
    assert lo["mtu"] == 65536 and lo["flg"] == "LRU" and isinstance(lo["rx_ok"], int)


def test_bug_44_bsd_port_split() -> None:
    """§22.3 #44: macOS/FreeBSD `ip.port` had no port split."""
    p = parse("netstat", ["-an"], corpus_text("netstat/freebsd12__netstat-an"), "freebsd").parsed
    first = p["connections"][0]  # tcp4 0 0 192.168.71.163.22 192.168.71.1.56321 ESTABLISHED
    assert (first["local_host"], first["local_port"], first["foreign_host"], first["foreign_port"]) == (
        "192.168.71.163", "22", "192.168.71.1", "56321")
    udp = _find(p["connections"], proto="udp4")  # udp4 0 0 *.514 *.*
    assert (udp["local_host"], udp["local_port"], "state" in udp) == ("*", "514", False)
    assert p["skipped_sections"] == ["Active UNIX domain sockets"]


def test_bug_44_program_with_spaces_and_colon() -> None:
    p = parse("netstat", ["-lnp"], corpus_text("netstat/ubuntu-18.04__netstat-sudo-lnp-space")).parsed
    progs = {r["program"] for r in p["connections"] if "program" in r}
    assert any(" " in prog for prog in progs), progs
    assert all(r.get("state") in (None, "LISTEN", "7") for r in p["connections"])


def test_windows_crlf_and_owner_lines() -> None:
    p = parse("netstat", ["-aonb"], corpus_text("netstat/windows-10__netstat-aonb"), "windows").parsed
    first = p["connections"][0]  # TCP 0.0.0.0:135 0.0.0.0:0 LISTENING 1712 / RpcSs / [svchost.exe]
    assert first == {"proto": "TCP", "local_address": "0.0.0.0:135", "local_host": "0.0.0.0", "local_port": "135",
                     "foreign_address": "0.0.0.0:0", "foreign_host": "0.0.0.0", "foreign_port": "0",
                     "state": "LISTENING", "pid": 1712, "info": ["RpcSs"], "program": "svchost.exe"}
    assert "unparsed" not in p


def test_ipv6_brackets_linux() -> None:
    text = ("Active Internet connections (only servers)\n"
            "Proto Recv-Q Send-Q Local Address           Foreign Address         State\n"
            "tcp6       0      0 :::22                   :::*                    LISTEN\n"
            "tcp6       0      0 [::]:ssh                [::]:*                  LISTEN\n")
    c = parse("netstat", ["-tln"], text).parsed["connections"]
    assert (c[0]["local_host"], c[0]["local_port"]) == ("::", "22")
    assert (c[1]["local_host"], c[1]["local_port"], c[1]["foreign_port"]) == ("[::]", "ssh", "*")


def test_statistics_form_is_unsupported_with_hint() -> None:
    out = parse("netstat", ["-s"], "Ip:\n    Forwarding: 1\n")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint is not None and out.parse_error.hint.args == ["-tuln"]


def test_garbage_is_unrecognized() -> None:
    out = parse("netstat", ["-tuln"], "nothing\nto see\n")
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"


def test_timer_column_after_program() -> None:
    parsed, exp = parse_fixture("linux", "netstat", "tanpo")
    row = _find(parsed["connections"], local_port=str(exp["tcp_port"]))
    assert (row["pid"], row["program"], row["timer"]) == (exp["pid"], "python", "off (0.00/0/0)")
    waits = [r for r in parsed["connections"] if r.get("state") == "TIME_WAIT"]
    assert all(r["timer"].startswith("timewait (") and "pid" not in r for r in waits)


def test_ipv6_routes_match_proc() -> None:
    parsed, exp = parse_fixture("linux", "netstat", "rn6")
    routes = parsed["routes"]
    assert [r["destination"] for r in routes] == exp["routes"]
    assert all(r["family"] == "inet6" for r in routes)
    default = next(r for r in routes if r["destination"] == "::/0" and r["iface"] == "eth0")
    assert (default["gateway"], default["flags"], default["metric"]) == ("fd00::1", "UG", 1024)
    unreachable = routes[-1]  # ::/0  ::  !n  -1  1  0 lo
    assert (unreachable["flags"], unreachable["metric"], unreachable["ref"]) == ("!n", -1, 1)


def test_windows_route_print_layout() -> None:
    parsed, exp = parse_fixture("windows", "netstat", "r")
    assert parsed["routes"] == exp["routes"]
    assert parsed["interfaces"] == exp["interfaces"]
    assert parsed["connections"] == [] and "unparsed" not in parsed


def test_windows_e_is_unsupported() -> None:
    out = parse("netstat", ["-e"], "Interface Statistics\r\n\r\n  Bytes  1  2\r\n", "windows")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint is not None and out.parse_error.hint.args == ["-an"]


def test_group_memberships_match_proc() -> None:
    parsed, exp = parse_fixture("linux", "netstat", "g")
    pairs = {(g["iface"], g["group"]) for g in parsed["groups"]}
    assert {tuple(p) for p in exp["ipv6_groups"]} <= pairs
    assert all(isinstance(g["refcnt"], int) for g in parsed["groups"]) and "unparsed" not in parsed


def test_linux_ie_is_unsupported() -> None:
    out = parse("netstat", ["-ie"], "Kernel Interface table\neth0: flags=4163<UP>  mtu 1500\n")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint is not None and out.parse_error.hint.args == ["-i"]


def test_unix_only_listing_is_unsupported_not_empty() -> None:
    text = ("Active UNIX domain sockets (only servers)\n"
            "Proto RefCnt Flags       Type       State         I-Node   Path\n"
            "unix  2      [ ACC ]     STREAM     LISTENING     20812    /run/udev/control\n")
    out = parse("netstat", ["-xl"], text)
    assert out.parsed is None and out.parse_error is not None
    assert out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint is not None and out.parse_error.hint.args == ["-tuan"]


def test_odd_headers_and_digit_lookalikes_are_not_parser_exceptions() -> None:
    """A BSD-style header without Proto, and a '²' in a queue column (str.isdigit() is true for
    it but int() refuses it), used to raise inside the parser."""
    from parism.parsers import registry

    no_proto = registry.parse("netstat", ["-an"], "Tcpcb    Socket   Foo Bar\nffff 1 2 3\n", "linux")
    assert no_proto.parse_error is not None and no_proto.parse_error.reason == "unrecognized_output"
    lookalike = registry.parse("netstat", ["-an"], "Proto Recv-Q Send-Q Local Address Foreign Address State\n"
                               "tcp ² 0 1.2.3.4:22 5.6.7.8:1 ESTABLISHED\n", "linux")
    assert lookalike.parse_error is None or lookalike.parse_error.reason != "parser_exception"
