"""``stat -c FORMAT`` / ``--format`` / ``--printf`` and ``-t``/``--terse``: output read by the
format the caller gave, not guessed from its look.

Every directive is a typed field (``%s`` → ``size_bytes`` digits, ``%A`` → ``permissions``, ``%F``
→ one of GNU's file type words …). A record is matched in one piece against the regular
expression the format compiles to, in operand order: ``%n`` is the operand itself (stat prints the
name as given), so a name holding spaces, newlines or text that imitates the other fields cannot
shift them. An operand stat could not read prints no record (its error goes to stderr) and is
skipped; without ``%n`` the records are named by position only when there is one per operand.
Refused with a hint (to the default format) rather than guessed: flags, widths or precisions
(``%-10s``, ``%.9Y``), directives that are not per-file facts here (``%m``, ``%N``, ``%r``/``%R``,
``%Hd``…), two fields with nothing between them, and a ``--printf`` format without a separator
after its last field when more than one file is named. Times: the human forms (``%x %y %z %w``)
keep their printed text in ``*_raw`` with an ISO 8601 ``*_at`` carrying the printed offset;
the epoch forms (``%X %Y %Z %W``) give ``*_at`` in UTC (``+00:00``). A birth time stat does not
know (``-``, ``0``) is left out.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import stat as _stat
from dataclasses import dataclass

from parism.parsers.contract import Unrecognized
from parism.parsers.dates import gnu_to_iso

# GNU stat 9.1 -t: "%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o" (then %C under SELinux)
TERSE = "%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o"
TERSE_CONTEXT = "%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o %C"

_FILE_TYPES = ("regular empty file", "regular file", "directory", "symbolic link", "character special file",
               "block special file", "fifo", "socket", "weird file", "message queue", "semaphore",
               "shared memory object", "typed memory object")
_HUMAN_TIME = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [+-]\d{4}"
_TIMES = {"x": "accessed", "y": "modified", "z": "changed", "w": "birth"}
_EPOCHS = {"X": "accessed", "Y": "modified", "Z": "changed", "W": "birth"}
_INTS = {"s": "size_bytes", "b": "blocks", "B": "block_size", "o": "io_block", "i": "inode", "h": "links",
         "u": "uid", "g": "gid"}
_WORDS = {"U": "uid_name", "G": "gid_name", "C": "context"}
PATTERNS = {
    **{code: r"\d+" for code in _INTS}, **{code: r"\S+" for code in _WORDS},
    "a": r"[0-7]+", "A": r"[-a-zA-Z?][-rwxsStT]{9}[.+]?", "f": r"[0-9a-f]+",
    "F": "|".join(re.escape(t) for t in _FILE_TYPES),
    "d": r"\d+", "D": r"[0-9a-f]+", "t": r"[0-9a-f]+", "T": r"[0-9a-f]+",
    **{code: f"{_HUMAN_TIME}|-" for code in _TIMES}, **{code: r"-?\d+" for code in _EPOCHS},
}
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "a": "\a", "b": "\b", "e": "\x1b", "f": "\f",
            "r": "\r", "v": "\v"}


@dataclass(frozen=True)
class StatFormat:
    lead: str
    fields: tuple[tuple[str, str], ...]  # (directive, literal text after it)

    @property
    def names_files(self) -> bool:
        return any(code == "n" for code, _ in self.fields)

    def pattern(self, name: str | None) -> re.Pattern[str]:
        """The record's expression, with ``%n`` as the literal ``name``."""
        parts = [re.escape(self.lead)]
        for i, (code, after) in enumerate(self.fields):
            body = re.escape(name) if code == "n" and name is not None else PATTERNS.get(code, ".*?")
            parts.append(f"(?P<f{i}>{body}){re.escape(after)}")
        return re.compile("".join(parts), re.DOTALL)


def compile_format(fmt: str, printf: bool) -> StatFormat | str:
    """The format's fields, or why it is not read. ``-c`` adds the record's newline; ``--printf``
    interprets backslash escapes and adds nothing."""
    text = _unescape(fmt) if printf else fmt
    if text is None:
        return "a backslash escape in the --printf format is not read"
    lead, fields, i = "", [], 0
    literal = ""
    while i < len(text):
        ch = text[i]
        if ch != "%":
            literal += ch
            i += 1
            continue
        code = text[i + 1:i + 2]
        if code == "%":
            literal += "%"
            i += 2
            continue
        if code not in PATTERNS and code != "n":
            what = f"%{code}" if code else "a trailing %"
            return f"{what} is not read (flags, widths and %m %N %r %R %H… are out of range)"
        if fields:
            if not literal:
                return f"%{fields[-1][0]} and %{code} have nothing between them to tell them apart"
            fields[-1] = (fields[-1][0], literal)
        else:
            lead = literal
        fields.append((code, ""))
        literal = ""
        i += 2
    if not fields:
        return "the format has no field to read"
    if sum(code in ("t", "T") for code, _ in fields) == 1:
        return "%t and %T (a device's major and minor) are read together"
    fields[-1] = (fields[-1][0], literal + ("" if printf else "\n"))
    return StatFormat(lead, tuple(fields))


def _unescape(fmt: str) -> str | None:
    out, i = [], 0
    while i < len(fmt):
        ch = fmt[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = fmt[i + 1:i + 2]
        if nxt in _ESCAPES and nxt:
            out.append(_ESCAPES[nxt])
            i += 2
        elif m := re.match(r"[0-7]{1,3}", fmt[i + 1:]):
            out.append(chr(int(m.group(), 8)))
            i += 1 + len(m.group())
        elif m := re.match(r"x([0-9a-fA-F]{1,2})", fmt[i + 1:]):
            out.append(chr(int(m.group(1), 16)))
            i += 1 + len(m.group())
        else:
            return None
    return "".join(out)


def parse(text: str, fmt: StatFormat, operands: list[str]) -> list[dict[str, object]]:
    """One row per record, in operand order (see the module docstring)."""
    if not fmt.names_files:
        return _by_position(text, fmt, operands)
    rows, pos = [], 0
    for name in operands:
        m = fmt.pattern(name).match(text, pos)
        if m is not None:
            rows.append(_row(m, fmt))
            pos = m.end()
    if pos != len(text):
        raise Unrecognized(f"stat: output from {text[pos:pos + 60]!r} does not fit the format")
    return rows


def _by_position(text: str, fmt: StatFormat, operands: list[str]) -> list[dict[str, object]]:
    rx, rows, pos = fmt.pattern(None), [], 0
    while pos < len(text):
        m = rx.match(text, pos)
        if m is None or m.end() == pos:
            raise Unrecognized(f"stat: output from {text[pos:pos + 60]!r} does not fit the format")
        rows.append(_row(m, fmt))
        pos = m.end()
    if len(rows) != len(operands):
        raise Unrecognized(f"stat: {len(rows)} records for {len(operands)} files and no %n to tell "
                           "which file each is")
    return [{"file": name, **row} for row, name in zip(rows, operands)]


def _row(m: re.Match[str], fmt: StatFormat) -> dict[str, object]:
    row: dict[str, object] = {}
    rdev: dict[str, int] = {}
    for i, (code, _) in enumerate(fmt.fields):
        value = m.group(f"f{i}")
        if code == "n":
            row["file"] = value
        elif code in _INTS:
            row[_INTS[code]] = int(value)
        elif code in _WORDS:
            row[_WORDS[code]] = value
        elif code == "a":
            row["mode_octal"] = value.rjust(4, "0")
        elif code == "A":
            row["permissions"] = value
        elif code == "F":
            row["file_type"] = value
        elif code == "f":
            mode = int(value, 16)
            row["permissions"] = _stat.filemode(mode)
            row["mode_octal"] = format(_stat.S_IMODE(mode), "04o")
        elif code in ("d", "D"):
            dev = int(value, 10 if code == "d" else 16)
            row["device"] = f"{os.major(dev)},{os.minor(dev)}"
        elif code in ("t", "T"):
            rdev[code] = int(value, 16)
        elif code in _TIMES:
            if value != "-":
                row[f"{_TIMES[code]}_raw"] = value
                row[f"{_TIMES[code]}_at"] = gnu_to_iso(value)
        elif code in _EPOCHS and not (code == "W" and value == "0"):
            row[f"{_EPOCHS[code]}_at"] = _dt.datetime.fromtimestamp(int(value), _dt.timezone.utc).isoformat()
    if len(rdev) == 2:
        row["device_type"] = f"{rdev['t']},{rdev['T']}"
    return row
