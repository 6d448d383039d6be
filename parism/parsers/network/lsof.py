"""``lsof`` — open files, columns located by the header's positions.

Schema::

    {entries: [{command, pid: int, tid?: int, taskcmd?, user?, fd?, type?, device?, size_off?,
                node?, name, state?}],
     unparsed?: [str]}

Why header positions: unprivileged runs print rows with empty TYPE/DEVICE/SIZE/OFF/NODE cells
(``/proc/1/cwd (readlink: Permission denied)``) and Linux adds a TID column that is usually empty,
so splitting on whitespace shifts columns.  Each token goes to the header column it overlaps; NAME
is the rest of the line.  A trailing ``(LISTEN)``-style TCP state is moved from ``name`` to
``state``; other parenthesised notes (``(deleted)``, ``(readlink: …)``) stay in ``name``.  Values
stay as printed (``0t0`` offsets, ``8,2`` devices, lsof's own ``\\x20`` escapes and 9-character
command truncation).
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import UNIX_OS, Contract, ParseInput, Parser, Unrecognized
from parism.parsers.network._sockets import TCP_STATES
from parism.parsers.table import HeaderTable
from parism.argv.tokenize import Tokens

_STATE = re.compile(r"\s\((?P<state>[A-Z_0-9-]+)\)$")
_FIELDS = {"COMMAND": "command", "PID": "pid", "TID": "tid", "TASKCMD": "taskcmd", "USER": "user",
           "FD": "fd", "TYPE": "type", "DEVICE": "device", "SIZE/OFF": "size_off", "SIZE": "size_off",
           "OFF": "size_off", "NODE": "node", "NAME": "name", "PPID": "ppid", "PGID": "pgid"}
_INT_FIELDS = ("pid", "tid", "ppid", "pgid")


class Entry(BaseModel):
    command: str
    pid: int
    tid: int | None = None
    user: str | None = None
    fd: str | None = None
    type: str | None = None
    device: str | None = None
    size_off: str | None = None
    node: str | None = None
    name: str | None = None
    state: str | None = None
    model_config = {"extra": "allow"}


class LsofResult(BaseModel):
    entries: list[Entry]
    unparsed: list[str] | None = None


def _full_row(table: HeaderTable, line: str) -> dict[str, str] | None:
    """Fast path for a row with every cell filled: the k-th token overlaps the k-th header word,
    so the assignment is one token per column and NAME is the rest.  Rows with empty cells (where
    the overlap rule of ``HeaderTable.read`` matters) return None and take the general path."""
    cols = table.columns
    parts = line.split(None, len(cols) - 1)
    if len(parts) < len(cols):
        return None
    last_start = cols[-1].start
    cells: dict[str, str] = {}
    pos = 0
    for col, token in zip(cols[:-1], parts):
        start = line.index(token, pos)  # only blanks lie between pos and the token
        pos = start + len(token)
        if pos <= col.start or start >= col.end or start >= last_start:
            return None
        cells[col.name] = token
    cells[cols[-1].name] = parts[-1].rstrip()  # split() already dropped the leading blanks
    return cells


def _row(table: HeaderTable, line: str) -> dict[str, object] | None:
    cells = _full_row(table, line) or table.read(line)
    row: dict[str, object] = {}
    for header, text in cells.items():
        if not text:
            continue
        field = _FIELDS[header]
        if field in _INT_FIELDS:
            if not text.isdecimal():
                return None
            row[field] = int(text)
        else:
            row[field] = text
    if "pid" not in row or "command" not in row:
        return None
    name = row.get("name")
    if isinstance(name, str) and name.endswith(")"):  # _STATE ends the text with ")"
        m = _STATE.search(name)
        if m and m.group("state") in TCP_STATES:
            row["name"], row["state"] = name[: m.start()], m.group("state")
    return row


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    lines = [ln.rstrip("\r") for ln in text.splitlines() if ln.strip()]
    if not lines:
        return {"entries": []}
    words = lines[0].split()
    if not words or words[0] != "COMMAND" or any(w not in _FIELDS for w in words):
        raise Unrecognized("lsof: the first line is not an lsof header (COMMAND PID … NAME)")
    table = HeaderTable.from_header(lines[0])
    entries: list[dict[str, object]] = []
    unparsed: list[str] = []
    for line in lines[1:]:
        row = _row(table, line)
        if row is None:
            unparsed.append(line)
        else:
            entries.append(row)
    if not entries and unparsed:
        raise Unrecognized("lsof: no row matched the header columns")
    out: dict[str, object] = {"entries": entries}
    if unparsed:
        out["unparsed"] = unparsed
    return out


def _supports(tokens: Tokens) -> str | None:
    if tokens.has("-F", "-t"):
        return "-F/-t print field or pid-only output, not the table this parser reads"
    return None


PARSER = Parser(
    id="lsof",
    evidence=True,
    contract=Contract(
        flags={"-n": "bool", "-P": "bool", "-U": "bool", "-a": "bool", "-l": "bool", "-w": "bool",
               "-b": "bool", "-R": "bool", "-V": "bool", "-X": "bool", "-N": "bool", "-h": "bool",
               "-i": "attached", "-s": "attached", "-d": "value", "-p": "value", "-c": "value",
               "-u": "value", "-g": "attached", "+D": "path", "-D": "value", "+d": "path",
               "-E": "bool", "+E": "bool", "-K": "bool", "-T": "attached", "-F": "attached", "-t": "bool",
               "+L": "attached", "-L": "attached", "+c": "value", "-S": "attached", "+w": "bool"},
        plus_flags=True,
        positional_pattern=r"[^\s]+",
        supports=_supports,
        hint=lambda args: [a for a in args if not a.startswith(("-F", "-t"))],
    ),
    parse=parse,
    schema=LsofResult,
    rows_key="entries",
    row_fields=("command", "pid", "tid", "taskcmd", "user", "fd", "type", "device", "size_off",
                "node", "name", "state", "ppid", "pgid"),
    header_lines=1,
    os=UNIX_OS,
    examples=(("-i", "-n", "-P"), ("-iTCP", "-sTCP:LISTEN", "-n", "-P"), ("-p", "1234")),
)
