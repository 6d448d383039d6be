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
    MODE_RE,
    TYPE_CHARS,
    mode_info,
    split_link,
    split_quoted_link,
    split_unescaped,
    unescape_c,
    unquote_c,
)
from parism.parsers.table import human_to_bytes

# The alternatives of _DATE's time part and of _SIZE exclude each other (what follows them, a
# space or a colon, tells them apart), so their order changes no match; the common forms go first.
_DATE = (
    r"(?:[A-Za-z]{3}\s+\d{1,2}\s+(?:\d{1,2}:\d\d|\d{4}|\d{1,2}:\d\d:\d\d\s+\d{4})"  # Mar  6 09:23 / 2018 / -T
    r"|\d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d(?:\.\d+)?)?(?: [+-]\d{4})?"  # long-iso / full-iso
    r"|\d\d-\d\d \d\d:\d\d|\d{4}-\d\d-\d\d)"  # iso (recent / old)
)
_SIZE = r"(?:\d+(?:[.,]\d+)?[KMGTPEZYkB]?i?|\d+,\s*\d+|0x[0-9a-fA-F]+)"
_PREFIX = r"(?:\s*(?P<inode>\d+)\s+)?(?:\s*(?P<blocks>\d+(?:[.,]\d+)?[KMGTPEZYk]?)\s+)?"
_BODY = (
    r"(?P<mode>" + MODE_RE + r")(?P<attr>[.@+]?)\s+(?P<links>\d+)\s+"
    r"(?P<owner>\S+)\s+(?:(?P<group>\S+)\s+)?(?P<size>" + _SIZE + r")\s+(?P<date>" + _DATE + r") (?P<name>.*)$"
)
ROW_RE = re.compile(r"^" + _PREFIX + r"\s*" + _BODY)
# A line that starts with a mode character has no inode/blocks prefix (those start with a space
# or a digit), so ROW_RE would match it exactly as this does, minus its optional prefix groups,
# which cost a fifth of the match.
_BARE_ROW_RE = re.compile(r"^" + _BODY)
_MODE_START = frozenset("-bcdlpsDwn?")
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


class RowParser:
    """Parses the rows of one listing.  Listings repeat a handful of modes and dates, so their
    conversions (mode → type/permissions/octal, date → collapsed text + ISO) are memoised per
    listing: the per-row work is one regex match and a few dict stores."""

    def __init__(self, style: RowStyle, now_year: int | None) -> None:
        self.style = style
        self.now_year = now_year
        self.plain = not (style.classify or style.escaped or style.c_quoted)
        self.prefixed = style.has_inode or style.has_blocks
        # mode → (row head {mode, type, …}, permissions, is a symlink)
        self._modes: dict[str, tuple[dict[str, object], dict[str, object], bool]] = {}
        # printed date → (whitespace collapsed, ISO or None, old --time-style=iso date: name padded)
        self._dates: dict[str, tuple[str, str | None, bool]] = {}

    def _mode(self, mode: str) -> tuple[dict[str, object], dict[str, object], bool]:
        info = mode_info(mode)
        perms = info.pop("permissions")
        assert isinstance(perms, dict)
        parts = self._modes[mode] = ({"mode": mode, **info}, perms, info["type"] == "symlink")
        return parts

    def _date(self, raw: str) -> tuple[str, str | None, bool]:
        date = " ".join(raw.split())
        # --time-style=iso prints old dates as "%Y-%m-%d " (padded to 11 columns)
        parts = self._dates[raw] = (date, listing_date_to_iso(date, self.now_year), len(date) == 10 and date[4] == "-")
        return parts

    def row(self, line: str) -> dict[str, object] | None:
        """The row as a dict, or None when the line is not a long-format row."""
        prefix: tuple[str | None, str | None] | None = None
        if line[:1] in _MODE_START:
            m = _BARE_ROW_RE.match(line)
            if m is None:
                return self._unknown(line)
            mode, attr, links, owner, group, size, raw_date, name = m.groups()
        else:
            m = ROW_RE.match(line)
            if m is None:
                return self._unknown(line)
            inode, blocks, mode, attr, links, owner, group, size, raw_date, name = m.groups()
            prefix = (inode, blocks)
        head, perms, is_link = self._modes.get(mode) or self._mode(mode)
        row = head.copy()
        row["permissions"] = perms.copy()
        if attr:
            row["attr"] = attr
        row["links"] = int(links)
        row["owner"] = owner
        if group is not None:
            row["group"] = group
        if size.isdigit():
            row["size_bytes"] = int(size)
        else:
            self._odd_size(row, size)
        if prefix is not None and self.prefixed:
            self._prefix(row, *prefix)
        date, iso, padded = self._dates.get(raw_date) or self._date(raw_date)
        row["modified_raw"] = date
        if iso is not None:
            row["modified_at"] = iso
        if padded and name[:1] == " ":
            name = name[1:]
        if not self.plain:
            set_name(row, name, self.style)
        elif is_link:
            size_bytes = row.get("size_bytes")
            name, target, ambiguous = split_link(name, size_bytes if isinstance(size_bytes, int) else None)
            if ambiguous:
                row["ambiguous_link"] = True
            row["name"] = name
            if target is not None:
                row["target"] = target
        else:
            row["name"] = name
        return row

    def _odd_size(self, row: dict[str, object], size: str) -> None:
        """Device numbers, BSD device ids and human-readable sizes (``-h``, ``--si``)."""
        dev = _DEVICE.fullmatch(size)
        if dev:
            row["major"], row["minor"] = int(dev.group(1)), int(dev.group(2))
        elif size.startswith("0x"):
            row["device_id"] = size
        else:
            row["size"] = size
            approx = human_to_bytes(size.rstrip("i").rstrip("B") or "0", base=1000 if self.style.si else 1024)
            if approx is not None:
                row["size_bytes_approx"] = approx

    def _prefix(self, row: dict[str, object], inode: str | None, blocks: str | None) -> None:
        """``-i`` / ``-s`` columns; with ``-s`` alone the one number before the mode is blocks."""
        if inode is not None:
            if self.style.has_inode:
                row["inode"] = int(inode)
            elif blocks is None:
                row["blocks"] = inode
        if blocks is not None and self.style.has_blocks:
            row["blocks"] = blocks

    def _unknown(self, line: str) -> dict[str, object] | None:
        """A row ls could not stat (``?`` fields), or None."""
        u = _UNKNOWN.match(line)
        if u is None:
            return None
        row: dict[str, object] = {"stat_failed": True, "type": TYPE_CHARS.get(u.group("kind"), "other")}
        set_name(row, u.group("name"), self.style)
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
