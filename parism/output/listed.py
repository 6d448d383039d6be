"""A name list that cannot show a newline: the host says whether its names are real.

``ls`` without ``-l`` prints one name per line and nothing else, so a name holding a newline
prints as two lines. The parser sees it when the lines break the C name order or hold a blank
line (``parism/parsers/fs/ls.py``), but not when both parts keep the order (``a\\nb`` alone in a
directory). After the parse of a run, :func:`verify` looks up each listed name with
``os.lstat`` where the command ran (the guard-resolved working directory, the operand or the
section's directory): a part of a split name is not a file there, or it is also listed on its
own (names in one directory are unique). Either way no entry is reported — the printed lines go
to ``unresolved`` with the hint ``-b`` — rather than an invented one. Nothing is followed
(``lstat``), nothing is read but existence, and a name that vanished in between is a refusal,
never an entry. A name list in an escaping style (``-b``, ``-Q``, ``--quoting-style``) shows
every newline and is not looked up. Saved text (``parse``) is not verified: there is no host.
"""

from __future__ import annotations

import os
from typing import Any, TYPE_CHECKING

from parism.parsers.hints import drop_args

if TYPE_CHECKING:
    from pydantic import JsonValue

_LONG = ("-l", "-n", "-g", "-o", "--numeric-uid-gid", "--full-time")
_EXACT = ("-b", "--escape", "-Q", "--quote-name")
WARNING = ("names_with_newlines: a listed name is not in its directory on the host (or is listed twice), so a "
           "name with a newline was split; no entry is reported. Rerun with -b to read names exactly")


def _applies(args: list[str]) -> bool:
    for a in args:
        if a == "--":
            break
        if a in _LONG or a in _EXACT or a.startswith(("--format", "--quoting-style", "--zero")):
            return False
        if a.startswith("-") and not a.startswith("--") and any(c in "lngobQ" for c in a[1:]):
            return False
    return True


def _operands(args: list[str]) -> list[str]:
    out, ended = [], False
    for a in args:
        if ended or a == "-" or not a.startswith("-"):
            out.append(a)
        elif a == "--":
            ended = True
    return out


def verify(args: list[str], parsed: JsonValue, cwd: str) -> Any:
    """``parsed`` (an ``ls`` name list) as it is when every name is real and listed once, else
    with no entry (``unresolved``, ``hint_args``, a warning)."""
    if not isinstance(parsed, dict) or not _applies(args):
        return parsed
    entries = parsed.get("entries")
    if not isinstance(entries, list) or not entries:
        return parsed
    ops = _operands(args)
    single = ops[0] if len(ops) == 1 and os.path.isdir(os.path.join(cwd, ops[0])) else ""
    seen: set[tuple[str, str]] = set()
    for row in entries:
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            return parsed
        base = row["directory"] if isinstance(row.get("directory"), str) else single
        key = (base, row["name"])
        if key in seen or not _exists(os.path.join(cwd, base, row["name"])):
            return _unresolved(parsed, args)
        seen.add(key)
    return parsed


def _exists(path: str) -> bool:
    try:
        os.lstat(path)
    except (OSError, ValueError):  # ValueError: an embedded NUL
        return False
    return True


def _unresolved(parsed: dict[str, Any], args: list[str]) -> dict[str, Any]:
    lines = [str(r.get("name")) for r in parsed["entries"] if isinstance(r, dict)]
    warnings = [*(parsed.get("warnings") or []), WARNING]
    return {**parsed, "entries": [], "unresolved": lines, "warnings": warnings,
            "hint_args": drop_args(args, add=["-b"])}
