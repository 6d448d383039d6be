"""journalctl — log entries in the ``short`` family of output formats (Linux, systemd).

Schema::

    {"entries": [{"timestamp": str, "hostname"?: str, "unit": str, "pid"?: int, "message": str}],
     "format": "short"|"short-iso"|...}

``timestamp`` is the printed text (``short`` has no year; ``short-iso`` carries the zone).
Continuation lines (indented) are appended to the previous message with a newline.
``-- Logs begin at …``, ``-- Reboot --``, ``-- No entries --`` are noise. ``-o json`` is JSON
Lines and is passed through; ``-o verbose``/``export``/``cat`` get a hint to ``-o short-iso``.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.hints import drop_args

_TS = {
    "short": r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d",
    "short-precise": r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d\.\d+",
    "short-iso": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d{2}:?\d{2}|Z)?",
    "short-iso-precise": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+(?:[+-]\d{2}:?\d{2}|Z)?",
    "short-full": r"[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: [A-Z]{2,5}|[+-]\d{4})?",
    "short-unix": r"\d+\.\d+",
    "short-monotonic": r"\[\s*\d+\.\d+\]",
}
_FORMATS = tuple(_TS) + ("with-unit", "short-delta")
_NOISE = re.compile(r"^-- (Logs begin|Journal begins|No entries|Reboot|Boot )|^-- .* --$")
_UNIT = r"(?P<unit>[^\s\[:]+)(?:\[(?P<pid>\d+)\])?: (?P<msg>.*)$"
_REST = re.compile(r"^(?P<host>\S+) " + _UNIT)
_REST_NOHOST = re.compile(r"^" + _UNIT)


class Entry(BaseModel):
    timestamp: str
    hostname: str | None = None
    unit: str
    pid: int | None = None
    message: str


class Journal(BaseModel):
    entries: list[Entry]
    format: str


def _format(pin: ParseInput) -> str:
    values = pin.tokens.values("-o", "--output")
    return values[-1] if values else "short"


def parse(text: str, pin: ParseInput) -> dict[str, Any]:
    fmt = _format(pin)
    ts_rx = re.compile(r"^(" + _TS.get(fmt, _TS["short"]) + r") ")
    no_host = pin.tokens.has("--no-hostname")
    entries: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line.strip() or _NOISE.search(line):
            continue
        m = ts_rx.match(line)
        if m is None:
            if entries and line[:1].isspace():
                entries[-1]["message"] += "\n" + line.strip()
                continue
            raise Unrecognized(f"line does not start with a {fmt} timestamp: {line[:60]!r}")
        rest = line[m.end():]
        r = (_REST_NOHOST if no_host else _REST).match(rest)
        if r is None:
            raise Unrecognized(f"no 'unit[pid]: message' part in: {line[:60]!r}")
        entry: dict[str, Any] = {"timestamp": m.group(1)}
        if not no_host:
            entry["hostname"] = r.group("host")
        entry["unit"] = r.group("unit")
        if r.group("pid"):
            entry["pid"] = int(r.group("pid"))
        entry["message"] = r.group("msg")
        entries.append(entry)
    return {"entries": entries, "format": fmt}


PARSER = Parser(
    id="journalctl",
    packages={"*": "systemd"},
    contract=Contract(
        flags={"-u": "value", "--unit": "value", "--since": "value", "--until": "value", "-p": "value",
               "--priority": "value", "-g": "data", "--grep": "data", "-o": "value", "--output": "value",
               "-n": "count", "--lines": "count", "--no-pager": "bool", "--no-hostname": "bool", "-b": "bool",
               "--boot": "bool", "-k": "bool", "--dmesg": "bool", "-r": "bool", "--reverse": "bool",
               "-q": "bool", "--quiet": "bool", "--user": "bool", "--system": "bool", "--utc": "bool",
               "-x": "bool", "--catalog": "bool"},
        values={"-o": "|".join(_TS), "--output": "|".join(_TS)},
        max_positionals=0,
        supports=lambda t: "-x adds explanation lines; drop it" if t.has("-x", "--catalog") else None,
        hint=lambda a: _hint(a),
    ),
    parse=parse,
    schema=Journal,
    rows_key="entries",
    row_fields=("timestamp", "hostname", "unit", "pid", "message"),
    noise=_NOISE.pattern,
    os=frozenset({"linux"}),
    examples=(("-u", "ssh", "-n", "50", "--no-pager"), ("-o", "short-iso", "-n", "100")),
    json_output=lambda a: "json" in a or "--output=json" in a,
)


def _hint(args: list[str]) -> list[str]:
    return drop_args(args, "x", ("--catalog",), valued=("-o", "--output")) + ["-o", "short-iso"]
