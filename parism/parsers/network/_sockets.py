"""Helpers shared by the socket listers (netstat, ss, lsof): address/port splitting, TCP states,
and header words that are really one column name ("Local Address", "PID/Program name")."""

from __future__ import annotations

import re

# TCP states as printed by Linux, BSD/macOS and Windows netstat, ss and lsof
TCP_STATES: frozenset[str] = frozenset({
    "ESTABLISHED", "SYN_SENT", "SYN_RECV", "SYN_RCVD", "SYN_RECEIVED", "FIN_WAIT1", "FIN_WAIT2",
    "FIN_WAIT_1", "FIN_WAIT_2", "TIME_WAIT", "CLOSE", "CLOSED", "CLOSE_WAIT", "LAST_ACK", "LISTEN",
    "LISTENING", "CLOSING", "UNKNOWN", "BOUND", "IDLE", "UNCONN", "ESTAB", "SYN-SENT", "SYN-RECV",
    "FIN-WAIT-1", "FIN-WAIT-2", "TIME-WAIT", "CLOSE-WAIT", "LAST-ACK", "DELETE_TCB",
})


def split_port(text: str, sep: str) -> tuple[str, str | None]:
    """``host:port`` (sep ':') or BSD ``host.port`` (sep '.') → (host, port); no separator → (text, None).

    The port is whatever follows the last separator (a number, a service name or ``*``); IPv6
    brackets and ``%iface`` suffixes stay in the host text."""
    idx = text.rfind(sep)
    if idx <= 0 or idx == len(text) - 1:
        return text, None
    return text[:idx], text[idx + 1:]


def header_columns(header: str, phrases: tuple[str, ...]) -> list[str]:
    """Header words, with each of ``phrases`` (multi-word column names) kept as one column."""
    names: list[str] = []
    rest = header.strip()
    while rest:
        for phrase in phrases:
            if rest.startswith(phrase) and (len(rest) == len(phrase) or not rest[len(phrase)].isalnum()):
                names.append(phrase)
                rest = rest[len(phrase):].lstrip()
                break
        else:
            m = re.match(r"\S+", rest)
            assert m is not None
            names.append(m.group())
            rest = rest[m.end():].lstrip()
    return names


def pid_program(text: str) -> dict[str, object]:
    """``1489/master``, ``6492/sshd: kbrazil`` or ``-`` (no permission) → pid/program fields."""
    text = text.strip()
    pid, slash, program = text.partition("/")
    if slash and pid.isdecimal():
        return {"pid": int(pid), "program": program.rstrip()}
    return {}


def token_offset(line: str, tokens: list[str], i: int) -> int:
    """Character offset of whitespace token ``i`` of ``line`` (``tokens`` = ``line.split()``)."""
    pos = 0
    for k in range(i + 1):
        pos = line.index(tokens[k], pos)
        if k < i:
            pos += len(tokens[k])
    return pos
