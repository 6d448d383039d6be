"""One ``ls`` long-format row → dict (GNU, busybox, macOS, FreeBSD).

Row layout: ``[inode] [blocks] MODE[.@+] LINKS OWNER [GROUP] SIZE|MAJ, MIN DATE NAME[ -> TARGET]``.
The row regex is anchored and each part is a bounded token class, so matching is linear; the
date is the first date-shaped run after the size, and the name is the rest of the line after
exactly one space (GNU and BSD both print one space before the name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from parism.parsers.dates import listing_date_to_iso
from parism.parsers.fs._common import (
    MODE_RE, TYPE_CHARS, mode_info, split_link, split_quoted_link, split_unescaped, unescape_c, unquote_c,
)
from parism.parsers.table import human_to_bytes

_DATE = (
    r"(?:[A-Za-z]{3}\s+\d{1,2}\s+(?:\d{1,2}:\d\d:\d\d\s+\d{4}|\d{1,2}:\d\d|\d{4})"  # Mar  6 09:23 / 2018 / -T
    r"|\d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d(?:\.\d+)?)?(?: [+-]\d{4})?"  # long-iso / full-iso
    r"|\d\d-\d\d \d\d:\d\d|\d{4}-\d\d-\d\d)"  # iso (recent / old)
)
_SIZE = r"(?:\d+,\s*\d+|0x[0-9a-fA-F]+|\d+(?:[.,]\d+)?[KMGTPEZYkB]?i?)"
_PREFIX = r"(?:\s*(?P<inode>\d+)\s+)?(?:\s*(?P<blocks>\d+(?:[.,]\d+)?[KMGTPEZYk]?)\s+)?"
ROW_RE = re.compile(
    r"^" + _PREFIX + r"\s*(?P<mode>" + MODE_RE + r")(?P<attr>[.@+]?)\s+(?P<links>\d+)\s+"
    r"(?P<owner>\S+)\s+(?:(?P<group>\S+)\s+)?(?P<size>" + _SIZE + r")\s+(?P<date>" + _DATE + r") (?P<name>.*)$"
)
_DEVICE = re.compile(r"(\d+),\s*(\d+)")
# ls could not stat the entry (permission denied): "d????????? ? ? ? ?            ? name"
_UNKNOWN = re.compile(r"^" + _PREFIX + r"\s*(?P<kind>[-bcdlpsDwn?])\?{9}\s+\?\s+\?\s+(?:\?\s+)?\?\s+\?\s(?P<name>.*)$")
ROWISH = re.compile(r"^\s*(?:\d+(?:[.,]\d+)?[KMGTPEZYk]?\s+){0,2}[-bcdlpsDwn?][-rwxsStTlL?]{9}[.@+]?\s")


@dataclass(frozen=True)
class RowStyle:
    """How names are printed (decided from the argv)."""

    escaped: bool = False  # -b / --escape / --quoting-style=escape
    c_quoted: bool = False  # -Q / --quote-name / --quoting-style=c
    si: bool = False  # --si: powers of 1000
    has_inode: bool = False
    has_blocks: bool = False
    classify: bool = False  # -F / -p / --file-type: indicator after names


def decode_name(text: str, style: RowStyle) -> str:
    if style.c_quoted:
        return unquote_c(text)
    if style.escaped:
        return unescape_c(text)
    return text


def _split_link(name: str, style: RowStyle, row: dict[str, object]) -> tuple[str, str | None, bool]:
    """(name, target, ambiguous). Without quoting a name containing ' -> ' cannot be told apart."""
    if style.c_quoted:
        left, right = split_quoted_link(name)
        return left, right, False
    if style.escaped:
        parts = split_unescaped(name, " -> ")
        return (parts[0], parts[1], False) if parts else (name, None, False)
    size = row.get("size_bytes")
    return split_link(name, size if isinstance(size, int) else None)


def strip_indicator(name: str, style: RowStyle) -> tuple[str, str | None]:
    """Remove the ``-F``/``-p`` indicator (``/ * @ | =``); return (name, indicator)."""
    if style.classify and name and name[-1] in "/*@|=>" and len(name) > 1:
        return name[:-1], name[-1]
    return name, None


def parse_row(line: str, style: RowStyle, now_year: int | None) -> dict[str, object] | None:
    """The row as a dict, or None when the line is not a long-format row."""
    m = ROW_RE.match(line)
    if m is None:
        u = _UNKNOWN.match(line)
        if u is None:
            return None
        row: dict[str, object] = {"stat_failed": True, "type": TYPE_CHARS.get(u.group("kind"), "other")}
        set_name(row, u.group("name"), style)
        return row
    g = m.groupdict()
    mode = g["mode"]
    row: dict[str, object] = {"mode": mode}
    row.update(mode_info(mode))
    if g["attr"]:
        row["attr"] = g["attr"]
    row["links"] = int(g["links"])
    row["owner"] = g["owner"]
    if g["group"] is not None:
        row["group"] = g["group"]
    size = g["size"]
    dev = _DEVICE.fullmatch(size)
    if dev:
        row["major"], row["minor"] = int(dev.group(1)), int(dev.group(2))
    elif size.isdigit():
        row["size_bytes"] = int(size)
    elif size.startswith("0x"):
        row["device_id"] = size
    else:
        row["size"] = size
        approx = human_to_bytes(size.rstrip("i").rstrip("B") or "0", base=1000 if style.si else 1024)
        if approx is not None:
            row["size_bytes_approx"] = approx
    if g["inode"] is not None and style.has_inode:
        row["inode"] = int(g["inode"])
    if g["blocks"] is not None and style.has_blocks:
        row["blocks"] = g["blocks"]
    elif g["inode"] is not None and not style.has_inode and style.has_blocks:
        row["blocks"] = g["inode"]
    date = " ".join(g["date"].split())
    row["modified_raw"] = date
    iso = listing_date_to_iso(date, now_year)
    if iso is not None:
        row["modified_at"] = iso
    name = g["name"]
    if len(date) == 10 and date[4] == "-" and name.startswith(" "):
        name = name[1:]  # --time-style=iso prints old dates as "%Y-%m-%d " (padded to 11 columns)
    set_name(row, name, style)
    return row


def set_name(row: dict[str, object], raw_name: str, style: RowStyle) -> str | None:
    """Fill ``name`` (and ``target`` for symlinks) from the printed name; return the indicator."""
    name: str = raw_name
    target: str | None = None
    if row.get("type") == "symlink":
        name, target, ambiguous = _split_link(raw_name, style, row)
        if ambiguous:
            row["ambiguous_link"] = True
    name, ind = strip_indicator(name, style) if target is None else (name, None)
    if target is not None:
        target, _ = strip_indicator(target, style)
    row["name"] = decode_name(name, style)
    if target is not None:
        row["target"] = decode_name(target, style)
    return ind
