"""ping: jc ``ping`` (destination → target, round_trip_ms_* → rtt_*_ms, see the corpus README)."""

from __future__ import annotations

from typing import Any

from tests.parsers.corpus.mappers._util import num, same

_FIELDS = [("target", "destination", same), ("target_ip", "destination_ip", same),
           ("packets_transmitted", "packets_transmitted", num), ("packets_received", "packets_received", num),
           ("packet_loss_percent", "packet_loss_percent", num), ("rtt_min_ms", "round_trip_ms_min", num),
           ("rtt_avg_ms", "round_trip_ms_avg", num), ("rtt_max_ms", "round_trip_ms_max", num),
           ("rtt_stddev_ms", "round_trip_ms_stddev", num), ("source_ip", "source_ip", same)]


def check(parsed: dict[str, Any], expected: dict[str, Any], entry: dict[str, Any]) -> list[str]:
    problems = []
    for ours, theirs, norm in _FIELDS:
        a, b = norm(parsed.get(ours)), norm(expected.get(theirs))
        if a != b:
            problems.append(f"{ours}: {a!r} != jc {theirs} {b!r}")
    dups = sum(1 for r in parsed.get("replies", []) if r.get("duplicate"))
    if dups != expected.get("duplicates", 0) and parsed.get("duplicates") != expected.get("duplicates"):
        problems.append(f"duplicates: {dups} != jc {expected.get('duplicates')}")
    jc_replies = [r for r in expected.get("responses", []) if r.get("type") == "reply"]
    ours_replies = [r for r in parsed.get("replies", []) if r.get("type") == "reply"]
    if len(jc_replies) != len(ours_replies):
        problems.append(f"replies: {len(ours_replies)} != jc {len(jc_replies)}")
    for i, (a, b) in enumerate(zip(ours_replies, jc_replies)):
        for ours, theirs in (("icmp_seq", "icmp_seq"), ("ttl", "ttl"), ("time_ms", "time_ms"), ("timestamp", "timestamp")):
            if num(a.get(ours)) != num(b.get(theirs)):
                problems.append(f"replies[{i}].{ours}: {a.get(ours)!r} != jc {b.get(theirs)!r}")
    return problems[:20]
