"""ping: real iputils and busybox output from this machine, corpus outputs checked by hand, and
the §22.3 #39 regression (macOS/BSD and error-line formats used to give zeros)."""

from __future__ import annotations

import pytest

from tests.parsers.network.fixtures import corpus_text, parse, parse_fixture


@pytest.mark.parametrize("name", ["c3", "c2-D", "busybox"])
def test_loopback_fixtures(name: str) -> None:
    parsed, expected = parse_fixture("linux", "ping", name)
    assert parsed["target"] == parsed["target_ip"] == expected["target"]
    assert parsed["packets_transmitted"] == parsed["packets_received"] == expected["transmitted"]
    assert parsed["packet_loss_percent"] == 0.0
    assert [r["icmp_seq"] for r in parsed["replies"]] == expected["seqs"]
    assert all(r["type"] == "reply" and r["ttl"] == 64 and r["from_ip"] == "127.0.0.1" for r in parsed["replies"])
    times = [r["time_ms"] for r in parsed["replies"]]
    assert parsed["rtt_min_ms"] == min(times) and parsed["rtt_max_ms"] == max(times)
    assert "unparsed" not in parsed


def test_timestamps_with_D() -> None:
    parsed, _ = parse_fixture("linux", "ping", "c2-D")
    stamps = [r["timestamp"] for r in parsed["replies"]]
    assert len(stamps) == 2 and 0.5 < stamps[1] - stamps[0] < 1.5  # one-second interval


def test_busybox_has_no_stddev() -> None:
    parsed, _ = parse_fixture("linux", "ping", "busybox")
    assert "rtt_stddev_ms" not in parsed and "time_ms" not in parsed


def test_bug_39_macos_summary() -> None:
    """§22.3 #39: `N packets received`, `0.0% packet loss`, `round-trip …/stddev` gave zeros."""
    text = corpus_text("ping/osx-10.14.6__ping-hostname")
    p = parse("ping", ["-c", "3", "cnn.com"], text, "macos").parsed
    # --- cnn.com ping statistics --- / 3 packets transmitted, 3 packets received, 0.0% packet loss
    # round-trip min/avg/max/stddev = 28.042/34.670/41.182/5.365 ms
    assert (p["target"], p["target_ip"]) == ("cnn.com", "151.101.1.67")
    assert (p["packets_transmitted"], p["packets_received"], p["packet_loss_percent"]) == (3, 3, 0.0)
    assert (p["rtt_min_ms"], p["rtt_avg_ms"], p["rtt_max_ms"], p["rtt_stddev_ms"]) == (28.042, 34.67, 41.182, 5.365)


def test_bug_39_errors_and_duplicates_linux() -> None:
    text = ("PING 10.0.0.9 (10.0.0.9) 56(84) bytes of data.\n"
            "From 10.0.0.1 icmp_seq=1 Destination Host Unreachable\n"
            "64 bytes from 10.0.0.9: icmp_seq=2 ttl=64 time=0.5 ms\n"
            "64 bytes from 10.0.0.9: icmp_seq=2 ttl=64 time=0.7 ms (DUP!)\n"
            "\n--- 10.0.0.9 ping statistics ---\n"
            "3 packets transmitted, 1 received, +1 duplicates, +1 errors, 66.6667% packet loss, time 2003ms\n"
            "rtt min/avg/max/mdev = 0.500/0.600/0.700/0.100 ms\n")
    p = parse("ping", ["-c", "3", "10.0.0.9"], text).parsed
    assert (p["packets_transmitted"], p["packets_received"], p["duplicates"], p["errors"]) == (3, 1, 1, 1)
    assert p["packet_loss_percent"] == 66.6667 and p["time_ms"] == 2003.0
    assert [r["type"] for r in p["replies"]] == ["unreachable", "reply", "reply"]
    assert p["replies"][0]["from_ip"] == "10.0.0.1" and p["replies"][0]["icmp_seq"] == 1
    assert p["replies"][2]["duplicate"] is True and "duplicate" not in p["replies"][1]


def test_bsd_unreachable_with_header_dump() -> None:
    p = parse("ping", ["-c", "8", "192.168.1.220"], corpus_text("ping/osx-10.14.6__ping-ip-unreachable"), "macos").parsed
    kinds = [r["type"] for r in p["replies"]]
    # by hand: 7 "Request timeout" lines and 6 "Destination Host Unreachable" replies
    assert kinds.count("timeout") == 7 and kinds.count("unreachable") == 6
    assert p["packet_loss_percent"] == 100.0 and "rtt_min_ms" not in p
    assert "unparsed" not in p  # the Vr HL TOS dump belongs to its reply


def test_bsd_ping6_source_and_target() -> None:
    p = parse("ping6", ["-c", "3", "localhost"], corpus_text("ping/freebsd12__ping6-hostname"), "freebsd").parsed
    # PING6(56=40+8+8 bytes) ::1 --> ::1 ... --- localhost ping6 statistics ---
    assert (p["target"], p["target_ip"], p["source_ip"], p["data_bytes"]) == ("localhost", "::1", "::1", 8)


def test_source_address_in_header_and_crlf() -> None:
    text = ("PING example.com (93.184.216.34) from 10.1.2.3 eth0: 56(84) bytes of data.\r\n"
            "64 bytes from 93.184.216.34 (93.184.216.34): icmp_seq=1 ttl=55 time=12.3 ms\r\n"
            "\r\n--- example.com ping statistics ---\r\n"
            "1 packets transmitted, 1 received, 0% packet loss, time 0ms\r\n"
            "rtt min/avg/max/mdev = 12.300/12.300/12.300/0.000 ms\r\n")
    p = parse("ping", ["-c", "1", "example.com"], text).parsed
    assert (p["target"], p["target_ip"], p["source_ip"]) == ("example.com", "93.184.216.34", "10.1.2.3")
    assert p["replies"][0]["time_ms"] == 12.3 and "unparsed" not in p


def test_killed_before_summary_keeps_totals_absent() -> None:
    text = "PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.\n64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.03 ms\n"
    p = parse("ping", ["127.0.0.1"], text).parsed
    assert "packets_transmitted" not in p and len(p["replies"]) == 1


def test_garbage_is_unrecognized() -> None:
    out = parse("ping", ["-c", "1", "x"], "hello\nworld\n")
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"


def test_windows_replies_and_summary() -> None:
    parsed, exp = parse_fixture("windows", "ping", "n4")
    for key in ("target", "target_ip", "data_bytes", "packets_transmitted", "packets_received",
                "packet_loss_percent", "rtt_min_ms", "rtt_max_ms", "rtt_avg_ms"):
        assert parsed[key] == exp[key], key
    assert [r["type"] for r in parsed["replies"]] == exp["types"]
    assert [r.get("time_ms") for r in parsed["replies"]] == exp["times"]
    assert parsed["replies"][0]["ttl"] == 56 and parsed["replies"][0]["bytes"] == 32
    assert "unparsed" not in parsed


def test_windows_sub_millisecond_is_not_invented() -> None:
    parsed, exp = parse_fixture("windows", "ping", "ipv6-lt1ms")
    assert (parsed["target"], parsed["target_ip"]) == (exp["target"], exp["target_ip"])
    assert all(r["time_text"] == exp["time_text"] and "time_ms" not in r for r in parsed["replies"])


def test_windows_unreachable() -> None:
    parsed, exp = parse_fixture("windows", "ping", "unreachable")
    assert [r["type"] for r in parsed["replies"]] == exp["types"]
    assert parsed["replies"][0]["from_ip"] == exp["from_ip"] and parsed["packets_received"] == exp["packets_received"]
    assert "rtt_min_ms" not in parsed


def test_windows_and_unix_count_flags_tokenize() -> None:
    assert parse("ping", ["-n", "4", "example.com"], "", "windows").parse_error is None
    assert parse("ping", ["-n", "-c", "2", "example.com"], "").parse_error is None
    assert parse("ping", ["-t", "64", "-c", "1", "example.com"], "").parse_error is None
