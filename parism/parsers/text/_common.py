"""Helpers shared by the text, env and git parsers: line and record splitting, flag dropping.

``str.splitlines`` also breaks on form feeds, vertical tabs and U+2028, which occur inside real
file content; these parsers must split on ``\\n`` only and must not invent a trailing empty line.
"""

from __future__ import annotations


def split_lines(text: str) -> tuple[list[str], bool]:
    """Lines of ``text`` split on ``\\n``; a final newline does not add an empty line.

    A ``\\r`` before the ``\\n`` (CRLF output) is removed; the flag says whether any was."""
    if not text:
        return [], False
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if "\r" not in text:  # the usual case: no per-line pass over a large output
        return lines, False
    crlf = False
    for i, line in enumerate(lines):
        if line.endswith("\r"):
            lines[i] = line[:-1]
            crlf = True
    return lines, crlf


def split_records(text: str, sep: str = "\0") -> list[str]:
    """NUL-terminated (or -separated) records; an empty last record is dropped."""
    if not text:
        return []
    recs = text.split(sep)
    if recs[-1] in ("", "\n"):
        recs.pop()
    return recs


