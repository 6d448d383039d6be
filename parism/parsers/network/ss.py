"""``ss`` — socket statistics (iproute2), with or without the Netid column.

Schema::

    {connections: [{netid?, state?, recv_q: int, send_q: int,
                    local_address?, local_port?, peer_address?, peer_port?, interface?,
                    path?, channel?, pid?: int, link_layer?,
                    processes?: [{name, pid: int, fd: int}], uid?: int, inode?: int, details?,
                    info?: str}],
     unparsed?: [str]}

Why: the Netid column is only printed when several families are listed, and a ``state …``
filter drops the State column, so the header says which leading columns exist instead of a
column count (v1 shifted every field).  Inet
addresses split at the last ``:``; ``[::]`` keeps its brackets and ``127.0.0.53%lo`` keeps the
scope in ``local_address`` and also gives ``interface``.  Ports stay text: without ``-n`` they
are service names.  UNIX rows print ``path inode`` and ``* peer-inode`` (→ ``path``,
``local_port``, ``peer_address``, ``peer_port``), netlink rows a ``channel/pid``.  The process
column (``users:(("sshd",pid=1,fd=3))``) becomes ``processes``; the rest of the line is kept in
``details``; ``-i`` continuation lines go to ``info``.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.network._sockets import split_port, token_offset
from parism.argv.tokenize import Tokens

_STATES = frozenset({"UNCONN", "LISTEN", "ESTAB", "SYN-SENT", "SYN-RECV", "FIN-WAIT-1", "FIN-WAIT-2",
                     "TIME-WAIT", "CLOSE-WAIT", "LAST-ACK", "CLOSING", "CLOSED", "UNKNOWN", "CLOSE"})
_USER = re.compile(r'\("(?P<name>(?:[^"\\]|\\.)*)",pid=(?P<pid>\d+),fd=(?P<fd>\d+)\)')
_OPTION = re.compile(r"\b(?P<key>uid|ino):(?P<val>\d+)")


class SsRow(BaseModel):
    netid: str | None = None
    state: str | None = None
    recv_q: int
    send_q: int
    local_address: str | None = None
    local_port: str | None = None
    peer_address: str | None = None
    peer_port: str | None = None
    model_config = {"extra": "allow"}


class SsResult(BaseModel):
    connections: list[SsRow]
    unparsed: list[str] | None = None


def _endpoint(row: dict[str, object], side: str, text: str) -> None:
    host, port = split_port(text, ":")
    row[f"{side}_address"] = host
    if port is not None:
        row[f"{side}_port"] = port
    if side == "local" and "%" in host:
        row["interface"] = host.rsplit("%", 1)[1].rstrip("]")


def _read(tokens: list[str], line: str, has_netid: bool, has_state: bool) -> dict[str, object] | None:
    i = 0
    row: dict[str, object] = {}
    if has_netid:
        row["netid"] = tokens[0]
        i = 1
    if has_state:
        if len(tokens) <= i or tokens[i] not in _STATES:
            return None
        row["state"] = tokens[i]
        i += 1
    if len(tokens) < i + 3 or not tokens[i].isdecimal() or not tokens[i + 1].isdecimal():
        return None
    row["recv_q"], row["send_q"] = int(tokens[i]), int(tokens[i + 1])
    i += 2
    netid = str(row.get("netid", ""))
    rest = tokens[i:]
    if netid.startswith("u_") or (not has_netid and len(rest) >= 4 and rest[1].isdecimal() and rest[3].isdecimal()
                                   and ":" not in rest[0]):
        if len(rest) < 4:
            return None
        row["path"] = rest[0]  # "*" = unnamed socket, as printed
        row["local_port"], row["peer_address"], row["peer_port"] = rest[1], rest[2], rest[3]
        used = 4
    elif netid == "nl":
        channel, _, pid = rest[0].rpartition("/")
        if channel and pid.isdecimal():
            row["channel"], row["pid"] = channel, int(pid)
        else:
            row["channel"] = rest[0]
        if len(rest) > 1:
            row["peer_address"] = rest[1]
        used = 2
    elif netid.startswith("p_"):
        host, port = split_port(rest[0], ":")
        row["link_layer"] = host
        if port is not None:
            row["interface"] = port
        if len(rest) > 1:
            row["peer_address"] = rest[1]
        used = 2
    else:
        if len(rest) < 2:
            return None
        _endpoint(row, "local", rest[0])
        _endpoint(row, "peer", rest[1])
        used = 2
    if len(rest) > used:
        _details(row, line[token_offset(line, tokens, i + used):].strip())
    return row


def _details(row: dict[str, object], tail: str) -> None:
    """The process/extended column: everything after the peer endpoint, kept verbatim."""
    row["details"] = tail
    procs = [{"name": m.group("name"), "pid": int(m.group("pid")), "fd": int(m.group("fd"))}
             for m in _USER.finditer(tail)]
    if procs:
        row["processes"] = procs
    for m in _OPTION.finditer(tail):
        row["uid" if m.group("key") == "uid" else "inode"] = int(m.group("val"))


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    rows: list[dict[str, object]] = []
    unparsed: list[str] = []
    has_netid: bool | None = None
    has_state = True
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        s = line.strip()
        if not s:
            continue
        if s.startswith(("Netid", "State", "Recv-Q")) and "Send-Q" in s:
            has_netid, has_state = s.startswith("Netid"), " State " in f" {s} "
            continue
        tokens = s.split()
        if has_netid is None:  # -H: no header; the first row says which leading columns exist
            first, second = tokens[0], (tokens[1] if len(tokens) > 1 else "")
            has_netid = first not in _STATES and not first.isdecimal()
            has_state = first in _STATES or (has_netid and second in _STATES)
        row = _read(tokens, s, has_netid, has_state)
        if row is not None:
            rows.append(row)
        elif rows and line[:1] in (" ", "\t"):
            prev = rows[-1]
            prev["info"] = (str(prev["info"]) + " " + s) if "info" in prev else s
        else:
            unparsed.append(s)
    if not rows and unparsed:
        raise Unrecognized("ss: no socket row was recognised")
    out: dict[str, object] = {"connections": rows}
    if unparsed:
        out["unparsed"] = unparsed
    return out


_BOOL = ("-t", "-u", "-l", "-n", "-p", "-a", "-e", "-o", "-4", "-6", "-r", "-i", "-m", "-x", "-w",
         "-s", "-H", "-O", "-d", "-Z", "-z", "-b", "-E", "-S", "-0", "-M", "--tcp", "--udp", "--listening",
         "--numeric", "--processes", "--all", "--extended", "--options", "--resolve", "--info",
         "--memory", "--unix", "--raw", "--no-header", "--oneline", "--ipv4", "--ipv6", "--sctp",
         "--dccp", "--packet", "--vsock", "--tipc", "--xdp", "--context", "--contexts", "--mptcp",
         "--cgroup", "--tos", "--threads", "--bpf")


def _supports(tokens: Tokens) -> str | None:
    if tokens.has("-s", "--summary"):
        return "-s prints a summary, not socket rows"
    if tokens.has("-E", "--events"):
        return "-E never ends"
    return None


PARSER = Parser(
    id="ss",
    evidence=True,
    contract=Contract(
        flags={**{f: "bool" for f in _BOOL}, "--summary": "bool", "--events": "bool",
               "-f": "value", "--family": "value", "-A": "value", "--query": "value",
               "--socket": "value"},
        values={"-f": "inet|inet6|unix|link|netlink|vsock|tipc|xdp",
                "--family": "inet|inet6|unix|link|netlink|vsock|tipc|xdp"},
        positional_pattern=r"(?:state|exclude|dst|src|dport|sport|and|or|not|[A-Za-z0-9.:\[\]/*%()!=<>-]+)",
        supports=_supports,
        hint=lambda args: [a for a in args if a not in ("-s", "--summary", "-E", "--events")] or ["-tuln"],
    ),
    parse=parse,
    schema=SsResult,
    rows_key="connections",
    row_fields=("netid", "state", "recv_q", "send_q", "local_address", "local_port", "peer_address",
                "peer_port", "interface", "path", "channel", "pid", "link_layer", "processes", "uid",
                "inode", "details", "info"),
    noise=r"^(?:Netid|State|Recv-Q)\s",
    os=frozenset({"linux"}),
    examples=(("-tuln",), ("-tulpn",), ("-tan", "state", "established")),
)
