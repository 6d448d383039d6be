"""``git log --format=<string>``: which format strings are read, and how a line is split.

A format is a sequence of placeholders and literal separators on one line per commit. A field
that may contain spaces (names, subjects, decorations, text dates) may only be followed by a
separator that cannot occur in it: a control character (``%x09`` TAB, ``%x00``, ``%x1f``) —
or, for names and dates, ``|``/``;``/``#``; otherwise it must be the last field. Anything else
(``%n``, ``%b``, unknown placeholders) is out of range, with a hint to the TAB-separated form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HINT_FORMAT = "%H%x09%an%x09%aI%x09%s"

FIELDS = {
    "H": "hash", "h": "hash", "P": "parents", "p": "parents", "T": "tree", "t": "tree",
    "an": "author", "aN": "author", "ae": "author_email", "aE": "author_email",
    "ad": "date", "aD": "date", "ar": "date", "at": "date", "ai": "date", "aI": "date", "as": "date",
    "cn": "committer", "cN": "committer", "ce": "committer_email", "cE": "committer_email",
    "cd": "commit_date", "cD": "commit_date", "cr": "commit_date", "ct": "commit_date",
    "ci": "commit_date", "cI": "commit_date", "cs": "commit_date",
    "s": "message", "d": "refs", "D": "refs",
}
_NO_SPACE = {"H", "h", "T", "t", "ae", "aE", "ce", "cE", "at", "ct", "aI", "cI", "as", "cs"}
_HEX = {"H", "h", "T", "t"}
_HEX_TEXT = re.compile(r"[0-9a-f]{4,64}")
_FREE_TEXT = {"s", "d", "D"}  # may contain any printable character
_PLACEHOLDER = re.compile(r"%(x[0-9a-fA-F]{2}|%|[acd][a-zA-Z]|[HhPpTtsdD])")
NAMED = {"oneline", "short", "medium", "full", "fuller"}


@dataclass(frozen=True)
class LineFormat:
    lead: str  # literal text before the first placeholder
    fields: tuple[tuple[str, str], ...]  # (placeholder code, separator that follows it)


def compile_format(fmt: str) -> LineFormat | str:
    """A ``LineFormat``, or the reason the format string is out of range."""
    for prefix in ("format:", "tformat:"):
        if fmt.startswith(prefix):
            fmt = fmt[len(prefix):]
    lead = ""
    fields: list[list[str]] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(fmt):
        literal = fmt[pos:m.start()]
        if "%" in literal:
            return f"placeholder in '{literal}' is not supported"
        code = m.group(1)
        pos = m.end()
        if code == "%" or code.startswith("x"):
            text = "%" if code == "%" else chr(int(code[1:], 16))
            literal += text
            code = ""
        if fields:
            fields[-1][1] += literal
        else:
            lead += literal
        if code:
            if code not in FIELDS:
                return f"placeholder %{code} is not supported"
            fields.append([code, ""])
    tail = fmt[pos:]
    if "%" in tail:
        return f"placeholder in '{tail}' is not supported"
    if not fields:
        return "the format has no placeholder"
    fields[-1][1] += tail
    names = [FIELDS[c] for c, _ in fields]
    if "hash" not in names:
        return "the format needs %H or %h"
    if len(set(names)) != len(names):
        return "a field appears twice"
    if "\n" in lead or any("\n" in sep for _, sep in fields):
        return "multi-line formats are not supported"
    for code, sep in fields[:-1]:
        if not _separable(code, sep):
            return f"%{code} followed by '{sep}' is ambiguous"
    return LineFormat(lead, tuple((c, s) for c, s in fields))


def _separable(code: str, sep: str) -> bool:
    if not sep:
        return False
    if any(ord(ch) < 32 for ch in sep):
        return True
    if code in _FREE_TEXT:
        return False
    if code in _NO_SPACE:
        return True
    return bool(sep.strip()) and all(ch in "|;# " for ch in sep)


def split_line(line: str, fmt: LineFormat) -> dict[str, str] | None:
    """Field code → text for one output line, or None when the line does not fit."""
    if not line.startswith(fmt.lead):
        return None
    pos = len(fmt.lead)
    out: dict[str, str] = {}
    last = len(fmt.fields) - 1
    for i, (code, sep) in enumerate(fmt.fields):
        if i == last:
            end = len(line) - len(sep) if sep and line.endswith(sep) else len(line)
            if sep and not line.endswith(sep):
                return None
        else:
            end = line.find(sep, pos)
            if end < 0:
                return None
        text = line[pos:end]
        if code in _NO_SPACE and (" " in text or (code in _HEX and not _HEX_TEXT.fullmatch(text))):
            return None  # a --stat line after a one-field format is not a commit
        out[code] = text
        pos = end + len(sep)
    return out
