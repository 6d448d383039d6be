"""``ping`` / ``ping6`` — summary statistics plus one entry per reply, timeout or error line.

Schema::

    {target?, target_ip?, source_ip?, data_bytes?: int, pattern?,
     packets_transmitted?: int, packets_received?: int, packet_loss_percent?: float,
     duplicates?: int, errors?: int, time_ms?: float,
     rtt_min_ms?: float, rtt_avg_ms?: float, rtt_max_ms?: float, rtt_stddev_ms?: float,
     replies: [{type: "reply"|"timeout"|"unreachable"|"error", bytes?: int, from?, from_ip?,
                icmp_seq?: int, ttl?: int, time_ms?: float, time_text?, duplicate?: bool,
                timestamp?: float, message?}],
     unparsed?: [str]}

Why one parser for every family: the per-reply lines and the two summary lines differ only in
wording — Linux iputils (``N received``, ``+N errors``, ``rtt min/avg/max/mdev``, ``-D``
timestamps, ``no answer yet``), busybox (``seq=``, ``round-trip min/avg/max``), macOS/FreeBSD
(``N packets received``, ``0.0% packet loss``, ``round-trip min/avg/max/stddev``, ``Request
timeout``, ``PING6(...) src --> dst``) and Windows (``_ping_windows.py``: ``Reply from``,
``Request timed out.``, ``time<1ms`` kept as ``time_text``).  A missing summary (ping killed at the timeout) leaves
the totals absent rather than zero.  The BSD ICMP header dump after an unreachable reply is part
of that reply, not data.  Lines no rule reads are listed in ``unparsed``.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import ALL_OS, Contract, ParseInput, Parser, Unrecognized
from parism.parsers.network._ping_windows import read_windows
from parism.parsers.table import to_float

_PING = re.compile(
    r"^PING\s+(?P<target>[^\s(]*)\s*(?:\((?P<ip>[^()\s]+)(?:\s+\((?P<ip2>[^()\s]+)\))?\))?"
    r"(?:\s+from\s+(?P<src>[^\s:]+(?::[^\s:]+)*)(?:\s+\S+)?:)?:?\s*(?P<bytes>\d+)(?:\(\d+\))?\s+(?:data\s+)?bytes")
_PING6 = re.compile(r"^PING6\((?P<total>\d+)=\d+\+\d+\+(?P<bytes>\d+) bytes\)\s+(?P<src>\S+)\s+-->\s+(?P<dst>\S+)")
_STATS_TITLE = re.compile(r"^---\s+(?:(?P<target>\S+)\s+)?ping6?\s+statistics\s+---")
_TRANSMITTED = re.compile(r"(?P<tx>\d+)\s+packets transmitted,\s+(?P<rx>\d+)\s+(?:packets\s+)?received")
_COUNTER = re.compile(r"\+(?P<n>\d+)\s+(?P<what>duplicates|errors)")
_LOSS = re.compile(r"(?P<loss>[\d.]+)%\s+packet loss")
_TIME = re.compile(r"time\s+(?P<ms>[\d.]+)\s*ms")
_RTT = re.compile(r"^(?:rtt|round-trip)\s+(?P<names>[a-z/-]+)\s*=\s*(?P<values>[\d./]+)\s*ms")
_TIMESTAMP = re.compile(r"^\[(?P<ts>\d+(?:\.\d+)?)\]\s*")
_REPLY = re.compile(r"^(?P<bytes>\d+) bytes from (?P<rest>.*)$")
_FIELDS = re.compile(r"\b(icmp_seq|seq|ttl|hlim|time)\s*[=<]\s*(\d+(?:\.\d+)?)")
_NO_ANSWER = re.compile(r"^no answer yet for icmp_seq=(?P<seq>\d+)")
_TIMEOUT = re.compile(r"^Request timeout for icmp_seq[= ](?P<seq>\d+)")
_FROM_ERROR = re.compile(r"^From (?P<from>\S+)(?: \((?P<ip>[^)]+)\))?:? (?:icmp_seq=(?P<seq>\d+) )?(?P<msg>.+)$")
_BSD_DUMP = re.compile(r"^\s*(?:Vr HL TOS|\d+\s+\d+\s+[0-9a-f]{2}\s)")
_NOISE = re.compile(r"^(?:PATTERN:|WARNING:|ping: |PING6?\b|---)")
_UNREACHABLE_WORDS = ("unreachable", "Unreachable")


class Reply(BaseModel):
    type: str
    bytes: int | None = None
    icmp_seq: int | None = None
    ttl: int | None = None
    time_ms: float | None = None
    model_config = {"extra": "allow"}


class PingResult(BaseModel):
    target: str | None = None
    target_ip: str | None = None
    packets_transmitted: int | None = None
    packets_received: int | None = None
    packet_loss_percent: float | None = None
    rtt_min_ms: float | None = None
    rtt_avg_ms: float | None = None
    rtt_max_ms: float | None = None
    replies: list[Reply]
    model_config = {"extra": "allow"}


def _reply(bytes_: str, rest: str) -> dict[str, object]:
    """``host (ip): icmp_seq=1 ttl=64 time=0.1 ms`` or ``::1, icmp_seq=0 hlim=64 time=…``."""
    row: dict[str, object] = {"type": "reply", "bytes": int(bytes_)}
    m = re.match(r"(?P<host>\S+?)(?: \((?P<ip>[^)]*)\))?[:,](?:\s|$)", rest)
    tail = rest
    if m:
        host = m.group("host")
        row["from"] = host
        row["from_ip"] = m.group("ip") or host
        tail = rest[m.end():]
    for key, val in _FIELDS.findall(tail):
        if key in ("icmp_seq", "seq"):
            row["icmp_seq"] = int(val)
        elif key in ("ttl", "hlim"):
            row["ttl"] = int(float(val))
        else:
            row["time_ms"] = float(val)
    if "(DUP!)" in tail:
        row["duplicate"] = True
    if any(w in tail for w in _UNREACHABLE_WORDS):
        row["type"] = "unreachable"
        row["message"] = tail.strip()
    elif "time_ms" not in row:
        row["type"] = "error"  # "64 bytes from host: <message>" with no timing
        row["message"] = tail.strip()
    return row


def _summary(line: str, out: dict[str, object]) -> bool:
    if m := _TRANSMITTED.search(line):
        out["packets_transmitted"] = int(m.group("tx"))
        out["packets_received"] = int(m.group("rx"))
        for c in _COUNTER.finditer(line):
            out[c.group("what")] = int(c.group("n"))
        if lm := _LOSS.search(line):
            out["packet_loss_percent"] = float(lm.group("loss"))
        if tm := _TIME.search(line):
            out["time_ms"] = float(tm.group("ms"))
        return True
    if m := _RTT.match(line):
        names = m.group("names").split("/")
        values = m.group("values").split("/")
        keys = {"min": "rtt_min_ms", "avg": "rtt_avg_ms", "max": "rtt_max_ms", "mdev": "rtt_stddev_ms",
                "stddev": "rtt_stddev_ms", "std-dev": "rtt_stddev_ms"}
        for name, value in zip(names, values):
            f = to_float(value)
            if name in keys and f is not None:
                out[keys[name]] = f
        return True
    return False


def _header(line: str, out: dict[str, object]) -> bool:
    if m := _PING6.match(line):
        out.setdefault("target", m.group("dst"))
        out["target_ip"], out["source_ip"] = m.group("dst"), m.group("src")
        out["data_bytes"] = int(m.group("bytes"))
        return True
    if m := _PING.match(line):
        if m.group("target"):
            out["target"] = m.group("target")
        out["target_ip"] = m.group("ip2") or m.group("ip") or m.group("target")
        if m.group("src"):
            out["source_ip"] = m.group("src")
        out["data_bytes"] = int(m.group("bytes"))
        return True
    if line.startswith("PATTERN:"):
        out["pattern"] = line.split(":", 1)[1].strip()
        return True
    return False


def _event(line: str) -> dict[str, object] | None:
    """One per-packet line (reply, timeout, error), with its ``-D`` timestamp."""
    ts = None
    if m := _TIMESTAMP.match(line):
        ts = float(m.group("ts"))
        line = line[m.end():]
    row: dict[str, object] | None = None
    if m := _REPLY.match(line):
        row = _reply(m.group("bytes"), m.group("rest"))
    elif m := _NO_ANSWER.match(line) or _TIMEOUT.match(line):
        row = {"type": "timeout", "icmp_seq": int(m.group("seq"))}
    elif m := _FROM_ERROR.match(line):
        msg = m.group("msg").strip()
        row = {"type": "unreachable" if any(w in msg for w in _UNREACHABLE_WORDS) else "error",
               "from": m.group("from"), "from_ip": m.group("ip") or m.group("from"), "message": msg}
        if m.group("seq"):
            row["icmp_seq"] = int(m.group("seq"))
    if row is not None and ts is not None:
        row["timestamp"] = ts
    return row


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    out: dict[str, object] = {}
    replies: list[dict[str, object]] = []
    unparsed: list[str] = []
    stats_seen = False
    for raw in text.splitlines():
        line = raw.rstrip("\r").strip()
        if not line or _BSD_DUMP.match(raw):
            continue
        title = _STATS_TITLE.match(line)
        if title:
            stats_seen = True
            if title.group("target"):
                out["target"] = title.group("target")
            continue
        if _header(line, out) or (stats_seen and _summary(line, out)):
            continue
        win = read_windows(line, out) if pin.os == "windows" else False
        if win is True:
            continue
        event = win or _event(line)
        if event is not None:
            replies.append(event)
        elif _summary(line, out):
            continue
        elif not _NOISE.match(line):
            unparsed.append(line)
    if not out and not replies:
        if unparsed:
            raise Unrecognized("ping: no PING header, reply or statistics line was recognised")
    out["replies"] = replies
    if unparsed:
        out["unparsed"] = unparsed
    return out


PARSER = Parser(
    id="ping",
    contract=Contract(
        # Windows -n COUNT and -t (no value) share letters with Unix -n and -t TTL: "count" takes
        # the next word only when it is a number, so both spellings tokenize correctly
        flags={"-q": "bool", "-n": "count", "-4": "bool", "-6": "bool", "-D": "bool", "-O": "bool",
               "-v": "bool", "-b": "bool", "-a": "bool", "-A": "bool", "-U": "bool", "-d": "bool",
               "-R": "bool", "-L": "bool", "-f": "bool", "-c": "number", "-i": "value", "-W": "value",
               "-w": "number", "-s": "number", "-t": "count", "-r": "count", "-l": "number",
               "-I": "value", "-p": "value", "-Q": "value", "-m": "number", "-S": "value", "-h": "value",
               "-M": "value", "-X": "number", "-j": "value", "-k": "value"},
        max_positionals=1,
        positional_pattern=r"[A-Za-z0-9._:%\[\]-]+",
    ),
    parse=parse,
    schema=PingResult,
    rows_key="replies",
    row_fields=("type", "bytes", "from", "from_ip", "icmp_seq", "ttl", "time_ms", "time_text",
                "duplicate", "timestamp", "message"),
    noise=r"^(?:PATTERN:|WARNING:|---|Vr HL TOS|\s*\d+\s+\d+\s+[0-9a-f]{2}\s|Approximate round trip)",
    os=ALL_OS,
    examples=(("-c", "3", "example.com"), ("-c", "4", "-W", "2", "10.0.0.1")),
)
