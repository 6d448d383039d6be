"""Windows ``ping`` lines (en-US), read into the same fields as the Unix formats.

Kept apart from ``ping.py`` because none of these lines share wording with iputils/BSD/busybox:
``Pinging host [ip] with 32 bytes of data:``, ``Reply from ip: bytes=32 time=12ms TTL=56``,
``Request timed out.``, ``Packets: Sent = 4, Received = 3, Lost = 1 (25% loss),`` and
``Minimum = 11ms, Maximum = 13ms, Average = 12ms``.  ``time<1ms`` is not a measurement: it is kept
as ``time_text`` and ``time_ms`` stays absent.  Windows prints no sequence numbers.
"""

from __future__ import annotations

import re

_PINGING = re.compile(r"^Pinging (?P<target>\S+)(?: \[(?P<ip>[^\]]+)\])?(?: from \S+)? with (?P<bytes>\d+) bytes of data:?$")
_REPLY = re.compile(r"^Reply from (?P<ip>[^\s:]+(?::[^\s:]+)*?):\s*(?P<rest>.*)$")
_FIELD = re.compile(r"\b(?P<key>bytes|time|TTL)(?P<op>[=<])(?P<val>\d+(?:\.\d+)?)(?:ms)?")
_PACKETS = re.compile(r"^Packets: Sent = (?P<tx>\d+), Received = (?P<rx>\d+), Lost = (?P<lost>\d+) \((?P<loss>[\d.]+)% loss\)")
_RTT = re.compile(r"^Minimum = (?P<min>\d+)ms, Maximum = (?P<max>\d+)ms, Average = (?P<avg>\d+)ms")
_STATS = re.compile(r"^Ping statistics for (?P<ip>\S+?):$")
_ERRORS = ("Request timed out.", "Destination host unreachable.", "Destination net unreachable.",
           "General failure.", "Transmit failed. General failure.", "PING: transmit failed. General failure.",
           "TTL expired in transit.", "Hardware error.")


def _reply(ip: str, rest: str) -> dict[str, object]:
    row: dict[str, object] = {"type": "reply", "from": ip, "from_ip": ip}
    for m in _FIELD.finditer(rest):
        key, op, val = m.group("key"), m.group("op"), m.group("val")
        if key == "bytes":
            row["bytes"] = int(val)
        elif key == "TTL":
            row["ttl"] = int(val)
        elif op == "=":
            row["time_ms"] = float(val)
        else:
            row["time_text"] = f"<{val}ms"
    if "time_ms" not in row and "time_text" not in row:
        row["type"] = "unreachable" if "unreachable" in rest else "error"
        row["message"] = rest.strip()
    return row


def read_windows(line: str, out: dict[str, object]) -> dict[str, object] | bool:
    """A reply/error row, True for a header or summary line stored in ``out``, False otherwise."""
    if m := _REPLY.match(line):
        return _reply(m.group("ip"), m.group("rest"))
    if line in _ERRORS:
        kind = "timeout" if line.startswith("Request timed out") else (
            "unreachable" if "unreachable" in line else "error")
        return {"type": kind} if kind == "timeout" else {"type": kind, "message": line}
    if m := _PINGING.match(line):
        out["target"] = m.group("target")
        out["target_ip"] = m.group("ip") or m.group("target")
        out["data_bytes"] = int(m.group("bytes"))
        return True
    if m := _PACKETS.match(line):
        out["packets_transmitted"], out["packets_received"] = int(m.group("tx")), int(m.group("rx"))
        out["packet_loss_percent"] = float(m.group("loss"))
        return True
    if m := _RTT.match(line):
        out["rtt_min_ms"], out["rtt_max_ms"] = float(m.group("min")), float(m.group("max"))
        out["rtt_avg_ms"] = float(m.group("avg"))
        return True
    if m := _STATS.match(line):
        out.setdefault("target_ip", m.group("ip"))
        return True
    return line == "Approximate round trip times in milli-seconds:"
