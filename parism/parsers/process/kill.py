"""``kill`` — signal listings, and the (usually empty) output of sending a signal.

Schema::

    list forms (-l, -L, --list, --table):  {signals: [{number?: int, name?: str}]}
    sending a signal:                      {messages: [str]}

Why this shape: sending a signal prints nothing on success and reports failures on stderr with a
non-zero exit, so the envelope's exit status is the result.  The parser does not echo the signal
or the pids back (they are the request, not output); ``messages`` holds whatever stdout said,
usually nothing.  ``-l`` prints names (procps: one line of names; bash: ``1) SIGHUP``), ``-L`` a
number/name table, ``-l 9`` a name and ``-l KILL`` a number: each becomes ``signals`` entries with
only the parts the output printed.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import UNIX_OS, Contract, ParseInput, Parser, Unrecognized

_SIGNAL_NAMES = (
    "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
    "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
    "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "POLL", "IO", "PWR", "SYS", "EMT", "INFO",
)
_ENTRY = re.compile(r"(\d+)\)\s*(?:SIG)?([A-Z][A-Z0-9+-]*)|(\d+)|(?:SIG)?([A-Z][A-Z0-9+-]*)")


class Signal(BaseModel):
    number: int | None = None
    name: str | None = None


class KillResult(BaseModel):
    signals: list[Signal] | None = None
    messages: list[str] | None = None


def _read_signals(text: str) -> list[dict[str, object]]:
    """Tokens of a listing: ``N) SIGNAME`` (bash), ``N NAME`` pairs (-L), bare names or numbers."""
    out: list[dict[str, object]] = []
    pending: int | None = None
    for m in _ENTRY.finditer(text):
        if m.group(1):
            out.append({"number": int(m.group(1)), "name": m.group(2)})
        elif m.group(3):
            if pending is not None:
                out.append({"number": pending})
            pending = int(m.group(3))
        else:
            entry: dict[str, object] = {"name": m.group(4)}
            if pending is not None:
                entry = {"number": pending, "name": m.group(4)}
                pending = None
            out.append(entry)
    if pending is not None:
        out.append({"number": pending})
    return out


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    if pin.tokens.has("-l", "-L", "--list", "--table"):
        stripped = text.strip()
        signals = _read_signals(stripped)
        leftover = _ENTRY.sub("", stripped).strip()
        if stripped and (not signals or leftover):
            raise Unrecognized("kill: the listing has text that is not a signal number or name")
        return {"signals": signals}
    return {"messages": [ln.rstrip("\r") for ln in text.splitlines() if ln.strip()]}


_FLAGS: dict[str, str] = {
    "-s": "value", "--signal": "value", "-q": "value", "--queue": "value",
    "-l": "bool", "--list": "bool", "-L": "bool", "--table": "bool",
}
_FLAGS.update({f"-{n}": "bool" for n in _SIGNAL_NAMES})
_FLAGS.update({f"-SIG{n}": "bool" for n in _SIGNAL_NAMES})

PARSER = Parser(
    id="kill",
    contract=Contract(
        flags=_FLAGS,
        single_dash_long=True,
        numeric_flag=True,
        positional_pattern=r"%?\d+|(?:SIG)?[A-Za-z][A-Za-z0-9+-]*",
    ),
    parse=parse,
    schema=KillResult,
    rows_key="signals",
    row_fields=("number", "name"),
    os=UNIX_OS,
    examples=(("-s", "TERM", "1234"), ("-l",), ("-L",)),
)
