"""``netstat`` — internet connections, routing tables and interface tables (Linux, BSD, Windows).

Schema::

    {connections: [{proto, recv_q?: int, send_q?: int, local_address, local_host, local_port?,
                    foreign_address, foreign_host, foreign_port?, state?, user?, inode?: int,
                    pid?: int, program?, info?: [str], tcpcb?, socket?, flowhash?, rxbytes?,
                    txbytes?, timer?, other?: {column: value}}],
     routes?: [{destination, gateway?, genmask?, netmask?, flags?, metric?: int, ref?: int,
                use?: int, iface?, interface?, mss?: int, window?: int, irtt?: int, mtu?: int,
                expire?, family?, persistent?: bool}],
     interfaces?: [{iface, index?: int, mtu?: int|null, network?, address?,
                    <counters>: int|null, flg?}],
     groups?: [{iface, refcnt: int, group}],
     skipped_sections?: [str], unparsed?: [str]}

Why: ``local_address`` keeps the printed text (v1) and ``local_host``/``local_port`` split it at
the last ``:`` (Linux, Windows) or the last ``.`` (macOS/FreeBSD ``ip.port``); ports stay text
because netstat prints service names without ``-n``.  UDP rows have no state: ``state`` is set
only when the token is a TCP state word (or the numeric state of a raw socket), so a
``885/systemd-resolve`` never lands there.  ``PID/Program name`` is the rest of the line (program
names contain spaces and colons).  Windows ``-b`` continuation lines go to the row's ``program``
(``[svchost.exe]``) and ``info``.  UNIX-domain and kernel socket sections are not connection rows:
their titles are listed in ``skipped_sections`` (a documented skip, not a silent one).
Windows ``-r`` (the ``route print`` layout) gives ``routes`` (IPv4 ``Network Destination Netmask
Gateway Interface Metric`` and IPv6 ``If Metric Network Destination Gateway``, ``On-link`` kept as
printed) and the ``Interface List`` as ``interfaces`` (index, MAC text, name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from parism.parsers.contract import (
    Contract,
    ParseInput,
    Parser,
    Unrecognized,
    Unsupported,
)
from parism.parsers.network._sockets import (
    TCP_STATES,
    header_columns,
    pid_program,
    split_port,
    token_offset,
)
from parism.argv.tokenize import Tokens

_PHRASES = ("Local Address", "Foreign Address", "PID/Program name", "Program name", "Next Hop",
            "Network Destination", "Network Address", "Gateway Address")
_WIN_IFACE = re.compile(r"^(?P<index>\d+)\.{3}(?P<mac>(?:[0-9A-Fa-f]{2} )*[0-9A-Fa-f]{2})?\s*\.{2,}(?P<name>[^.\s].*)$")
_TIMER = re.compile(r"\s(?:off|on|keepalive|timewait|probe|unkn-\d+)\s+\([^)]*\)$")
_PROTO = re.compile(r"^(?:tcp|udp|raw|sctp|icm|div|udpl)[0-9]*$", re.I)
_NAME_ALIASES = {
    "local address": "local_address", "foreign address": "foreign_address", "(state)": "state",
    "pid/program name": "pid_program", "next hop": "gateway", "netif": "iface", "if": "iface",
    "refs": "ref", "met": "metric", "flag": "flags", "name": "iface", "i-node": "inode",
    "network destination": "destination", "network address": "destination", "gateway address": "gateway",
}
_TEXT_COLUMNS = frozenset({"proto", "local_address", "foreign_address", "state", "user", "timer",
                           "tcpcb", "socket", "flowhash", "destination", "gateway", "genmask",
                           "flags", "iface", "expire", "network", "address", "flg", "program",
                           "netmask", "interface", "group"})
CONNECTION_FIELDS = ("proto", "recv_q", "send_q", "local_address", "local_host", "local_port",
                     "foreign_address", "foreign_host", "foreign_port", "state", "user", "inode", "pid",
                     "program", "info", "timer", "tcpcb", "socket", "flowhash", "rxbytes", "txbytes")
_SKIP_TITLES = ("Active UNIX", "Active LOCAL", "Active Multipath", "Active kernel", "Active Bluetooth",
                "Registered kernel", "Active IPX", "Active AX.25", "Active NET/ROM")


class Connection(BaseModel):
    proto: str
    local_address: str | None = None
    foreign_address: str | None = None
    state: str | None = None
    model_config = {"extra": "allow"}


class NetstatResult(BaseModel):
    connections: list[Connection]
    routes: list[dict[str, Any]] | None = None
    interfaces: list[dict[str, Any]] | None = None
    groups: list[dict[str, Any]] | None = None
    skipped_sections: list[str] | None = None
    unparsed: list[str] | None = None


def _field(name: str) -> str:
    low = name.lower()
    return _NAME_ALIASES.get(low, low.replace("-", "_").replace("/", "_"))


_INT = re.compile(r"-?\d+")
_DECIMAL = re.compile(r"\d+\.\d+")


def _value(field: str, text: str) -> object:
    if field in _TEXT_COLUMNS:
        return text
    if text == "-":
        return None
    if _INT.fullmatch(text):
        return int(text)
    if _DECIMAL.fullmatch(text):
        return float(text)
    return text


_ADDRESS_KEYS = (("local_address", "local_host", "local_port"),
                 ("foreign_address", "foreign_host", "foreign_port"))


@dataclass(frozen=True)
class _Plan:
    """A connection header's columns split around proto and the address pair, worked out once
    per header rather than once per row."""

    pre: list[str]  # columns before proto (BSD -A Tcpcb/Socket)
    mid: list[str]  # numeric queue columns between proto and the addresses
    post: list[str]  # columns after the foreign address
    min_tokens: int
    timer_after_program: bool

    @classmethod
    def of(cls, cols: list[str]) -> _Plan | None:
        """None when the header has no proto or address column (no row can be a connection)."""
        try:
            p = cols.index("proto")
            li = cols.index("local_address")
        except ValueError:
            return None
        post = cols[li + 2:]
        return cls(cols[:p], cols[p + 1:li], post, p + 3, "timer" in post)


def _connection(tokens: list[str], line: str, plan: _Plan, sep: str) -> dict[str, object] | None:
    """Read one connection row by column order; see the module docstring for the rules."""
    n = len(tokens)
    pre = plan.pre
    if n < plan.min_tokens or not _PROTO.match(tokens[len(pre)]):
        return None
    row: dict[str, object] = {}
    for c, t in zip(pre, tokens):
        _put(row, c, _value(c, t))
    i = len(pre)
    row["proto"] = tokens[i]
    i += 1
    for c in plan.mid:
        if i < n - 2 and tokens[i].isdecimal():
            _put(row, c, int(tokens[i]))
            i += 1
    if i + 2 > n:
        return None
    for (address, host_key, port_key), text in zip(_ADDRESS_KEYS, tokens[i:i + 2]):
        host, port = split_port(text, sep)
        row[address], row[host_key] = text, host
        if port is not None:
            row[port_key] = port
    i += 2
    for c in plan.post:
        if i >= n:
            break
        tok = tokens[i]
        if c == "state":
            if tok in TCP_STATES or (tok.isdecimal() and str(row["proto"]).lower().startswith("raw")):
                row["state"] = tok
                i += 1
            continue
        if c in ("pid_program", "timer"):
            rest = line[token_offset(line, tokens, i):].rstrip()
            if c == "pid_program" and plan.timer_after_program and (tm := _TIMER.search(rest)):
                row["timer"], rest = tm.group().strip(), rest[: tm.start()]
            row.update(pid_program(rest) if c == "pid_program" else {"timer": rest})
            break
        _put(row, c, _value(c, tok))
        i += 1
    return row


def _put(row: dict[str, object], column: str, value: object) -> None:
    """Known columns become fields; any other header column (BSD ``-x`` counters, future
    additions) goes to ``other`` so that rows keep a fixed set of field names."""
    if column in CONNECTION_FIELDS:
        row[column] = value
    else:
        other = row.setdefault("other", {})
        assert isinstance(other, dict)
        other[column] = value


def _table_row(tokens: list[str], cols: list[str], gap_at: str | None) -> dict[str, object] | None:
    """Routes and interfaces: one token per column; ``gap_at`` names the column that may be empty
    (BSD ``netstat -i`` prints no Address for link rows)."""
    if len(tokens) > len(cols):
        return None
    if gap_at in cols and len(tokens) == len(cols) - 1 and gap_at != cols[-1]:
        k = cols.index(gap_at)
        tokens = tokens[:k] + [""] + tokens[k:]
    return {c: _value(c, t) for c, t in zip(cols, tokens) if t != ""}


# section titles, tried in this order from the start of the stripped line; the group name is the kind
_TITLE = re.compile("|".join((
    "(?P<skip>%s)" % "|".join(map(re.escape, _SKIP_TITLES)),
    "(?P<inet>Active Internet connections|Active Connections)",
    # Linux/BSD, then Windows `netstat -r` / `route print`
    "(?P<route>Kernel IP routing table|Kernel IPv6 routing table|Routing tables|IPv4 Route Table|IPv6 Route Table)",
    "(?P<iface>Kernel Interface table)",
    r"(?P<family>Internet6?:\Z)",
    r"(?P<winif>Interface List\Z)",
    r"(?P<banner>(?:Active Routes:|Persistent Routes:|None)\Z|=*\Z|[- ]*\Z)",
)))


def _title_kind(s: str) -> str | None:
    """One anchored match per line (a data line fails on its first characters)."""
    m = _TITLE.match(s)
    if m is not None:
        return m.lastgroup
    return "group" if s.endswith("Group Memberships") else None  # Linux -g (never a banner)


def _header_mode(s: str, first: str) -> str | None:
    """The section a column-header line opens (``first`` is its first word), or None when ``s``
    is not a header."""
    if first in ("Proto", "Tcpcb", "Socket"):
        return "inet"
    if first == "Iface" or (first == "Name" and "Mtu" in s):
        return "iface"
    if first == "Destination" or (first in ("Network", "If") and "Metric" in s):
        return "route"
    if first == "Interface" and "RefCnt" in s:
        return "group"
    return None


@dataclass
class _Section:
    """Where the reader is: section kind, its columns, address family and Windows persistence."""

    mode: str | None = None
    cols: list[str] = field(default_factory=list)
    family: str | None = None
    persistent: bool = False
    plan: _Plan | None = None  # connection columns, set at the first row read under ``cols``
    planned: bool = False


def _data_row(sec: _Section, line: str, s: str, tokens: list[str], out: dict[str, list[Any]],
              pin: ParseInput) -> bool:
    """Read one data line (``tokens`` = ``s.split()``) of the current section into ``out``;
    False when it is not a row."""
    if sec.mode == "inet" and sec.cols:
        if not sec.planned:
            sec.plan, sec.planned = _Plan.of(sec.cols), True
        row = None if sec.plan is None else _connection(
            tokens, s, sec.plan, "." if pin.os in ("macos", "freebsd") else ":")
        if row is not None:
            out["connections"].append(row)
            return True
        if out["connections"] and pin.os == "windows" and line[:1].isspace():
            _windows_owner(out["connections"][-1], s)
            return True
        return False
    if sec.mode == "winif":
        m = _WIN_IFACE.match(s)
        if m is None:
            return False
        row = {"index": int(m.group("index")), "iface": m.group("name").strip()}
        if m.group("mac"):
            row["address"] = m.group("mac")
        out["interfaces"].append(row)
        return True
    if not sec.cols or sec.mode not in ("route", "group", "iface"):
        return False
    row = _table_row(tokens, sec.cols, "address" if sec.mode == "iface" else None)
    if row is None:
        return False
    if sec.mode == "route":
        if sec.family:
            row["family"] = sec.family
        if sec.persistent:
            row["persistent"] = True
        out["routes"].append(row)
    elif sec.mode == "group":
        if "interface" in row:
            row["iface"] = row.pop("interface")
        out["groups"].append(row)
    else:
        out["interfaces"].append(row)
    return True


def parse(text: str, pin: ParseInput) -> dict[str, list[Any]]:
    if pin.os == "windows" and pin.tokens.has("-e"):  # Windows -e: Ethernet statistics, not rows
        raise Unsupported("netstat -e on Windows prints interface statistics, not read by this parser",
                          hint_args=[a for a in pin.sub_args if a != "-e"] or ["-an"])
    if pin.os == "linux" and pin.tokens.has("-i", "--interfaces") and pin.tokens.has("-e", "--extend"):
        raise Unsupported("netstat -ie prints ifconfig-style blocks, not the interface table",
                          hint_args=["-i"])
    out: dict[str, list[Any]] = {"connections": [], "routes": [], "interfaces": [], "groups": [],
                            "skipped_sections": [], "unparsed": []}
    sec = _Section()
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        s = line.strip()
        if not s:
            continue
        kind = _title_kind(s)
        if kind == "banner":
            if s in ("Active Routes:", "Persistent Routes:"):
                sec.persistent = s == "Persistent Routes:"
        elif kind == "family":
            sec.family = "inet6" if s == "Internet6:" else "inet"
        elif kind is not None:
            sec = _Section(kind, [], "inet6" if "IPv6" in s else ("inet" if "IPv4" in s else None))
            if kind == "skip":
                out["skipped_sections"].append(s)
        elif sec.mode != "skip":
            tokens = s.split()
            mode = _header_mode(s, tokens[0])
            if mode is not None:
                sec.mode, sec.cols = mode, [_field(n) for n in header_columns(s, _PHRASES)]
                sec.planned = False
            elif not _data_row(sec, line, s, tokens, out, pin):
                out["unparsed"].append(s)
    if not any(out[k] for k in ("connections", "routes", "interfaces", "groups")):
        if out["unparsed"]:
            raise Unrecognized("netstat: no connection, route, interface or group row was recognised")
        if out["skipped_sections"]:
            raise Unsupported("netstat: only UNIX-domain/kernel socket sections, which this parser skips "
                              "(use ss -x for UNIX sockets)", hint_args=["-tuan"])
    return {k: v for k, v in out.items() if v or k == "connections"}


def _windows_owner(row: dict[str, object], s: str) -> None:
    """``netstat -b``: `` [svchost.exe]`` names the program; other lines (service, notes) → info."""
    if s.startswith("[") and s.endswith("]"):
        row["program"] = s[1:-1]
    else:
        info = row.setdefault("info", [])
        assert isinstance(info, list)
        info.append(s)


_BOOL = ("-t", "-u", "-l", "-n", "-p", "-a", "-W", "-e", "-o", "-4", "-6", "-r", "-i", "-w", "-x",
         "-A", "-T", "-b", "-N", "-v", "-Z", "-L", "-S", "-q", "-y", "-g")
_BAD = ("-s", "--statistics", "-M", "--masquerade", "-c", "--continuous")
_LONG = ("--tcp", "--udp", "--listening", "--numeric", "--programs", "--all", "--wide",
         "--extend", "--timers", "--route", "--interfaces", "--raw", "--numeric-hosts",
         "--numeric-ports", "--numeric-users", "--inet", "--inet6", "--udplite", "--sctp",
         "--program", "--unix", "--verbose", "--groups")


def _supports(tokens: Tokens) -> str | None:
    for bad in _BAD:
        if tokens.has(bad):
            return f"{bad} output has another layout (statistics/groups/continuous) not read by this parser"
    return None


PARSER = Parser(
    id="netstat",
    evidence=True,
    contract=Contract(
        flags={**{f: "bool" for f in _BOOL}, **{f: "bool" for f in _LONG},
               **{f: "bool" for f in _BAD}, "-I": "attached", "-f": "value", "--protocol": "value"},
        values={"-f": "inet|inet6|unix|link"},
        # BSD/Windows `-p tcp` and Linux `-A inet` read the protocol or family as the next word
        # (-A is a bool on BSD, where it prints PCB addresses)
        max_positionals=1,
        positional_pattern=r"(?i:tcp|udp|ip|icmp|tcpv6|udpv6|ipv6|icmpv6|tcp6|udp6|ip6|icmp6|inet|inet6|unix)",
        supports=_supports,
        hint=lambda args: [a for a in args if a not in _BAD] or ["-tuln"],
    ),
    parse=parse,
    schema=NetstatResult,
    rows_key="connections",
    row_fields=CONNECTION_FIELDS + ("other",),
    header_lines=0,
    noise=r"^\s*(?:Active |Proto |Kernel |Routing tables|Internet6?:|Destination |Iface |Name )",
    examples=(("-tuln",), ("-tulpn",), ("-an",), ("-rn",), ("-i",)),
)
