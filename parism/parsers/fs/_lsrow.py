"""One ``ls`` long-format row → dict (GNU, busybox, macOS, FreeBSD).

Row layout: ``[inode] [blocks] MODE[.@+] LINKS OWNER [GROUP] SIZE|MAJ, MIN DATE NAME[ -> TARGET]``.
The row regex is anchored and each part is a bounded token class, so matching is linear; the
date is the first date-shaped run after the size, and the name is the rest of the line after
exactly one space (GNU and BSD both print one space before the name).  German and French dates
put the day first (``1. Dez 21:12``, ``1 déc.  21:12``); German's old-file form ends with a
space of its own (``%e. %b %Y ``), so it is part of the date, not of the name.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Any

from parism.parsers.contract import Unsupported
from parism.parsers.dates import day_month_to_iso, listing_date_to_iso
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
    r"|\d\d-\d\d \d\d:\d\d|\d{4}-\d\d-\d\d"  # iso (recent / old)
    r"|\d{1,2}\.\s+[^\W\d_]{3,5}\.?\s+(?:\d{1,2}:\d\d|\d{4} )"  # German: 1. Dez 21:12 / "20. Mai 2026 "
    r"|\d{1,2}\s+[^\W\d_]{3,5}\.?\s+(?:\d{1,2}:\d\d|\d{4})"  # French: 1 déc. 21:12 / 20 mai 2026
    r"|[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d\d:\d\d:\d\d \d{4})"  # BusyBox -e: ctime(), Tue Dec  1 21:12:50 2026
)
_SIZE = r"(?:\d+(?:[.,]\d+)?[KMGTPEZYkB]?i?|\d+,\s*\d+|0x[0-9a-fA-F]+)"
_PREFIX = r"(?:\s*(?P<inode>\d+)\s+)?(?:\s*(?P<blocks>\d+(?:[.,]\d+)?[KMGTPEZYk]?)\s+)?"
_IDS = r"(?P<owner>\S+)\s+(?:(?P<group>\S+)\s+)?"
# The id columns a listing prints (``RowStyle.ids``): -g drops the owner, -o/-G the group, both
# leave none; the group never matches where it is not printed (a device's major is no group).
_IDS_OF = {2: _IDS, 1: r"(?P<owner>\S+)\s+(?:(?P<group>(?!))\s+)?", 0: r"(?:(?P<owner>(?!)))?(?:(?P<group>(?!)))?"}
_BODY = (
    r"(?P<mode>" + MODE_RE + r")(?P<attr>[.@+]?)\s+(?P<links>\d+)\s+"
    + _IDS + r"(?P<size>" + _SIZE + r")\s+(?P<date>" + _DATE + r") (?P<name>.*)$"
)
ROW_RE = re.compile(r"^" + _PREFIX + r"\s*" + _BODY)
# ls -lZ: the security context (one token: "?" or "user:role:type:level") between group and size
_CONTEXT_ROW_RE = re.compile(r"^" + _PREFIX + r"\s*" + _BODY.replace(
    r"(?:(?P<group>\S+)\s+)?", r"(?:(?P<group>\S+)\s+)?(?P<context>\S+)\s+"))
_WEEKDAY = re.compile(r"[A-Za-z]{3} (?=[A-Za-z]{3} )")
# A line that starts with a mode character has no inode/blocks prefix (those start with a space
# or a digit), so ROW_RE would match it exactly as this does, minus its optional prefix groups,
# which cost a fifth of the match.
_BARE_ROW_RE = re.compile(r"^" + _BODY)
_MODE_START = frozenset("-bcdlpsDwn?")


def _regexes(ids: int) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(ROW_RE, _BARE_ROW_RE, _CONTEXT_ROW_RE) for a listing with ``ids`` id columns."""
    body = _BODY.replace(_IDS, _IDS_OF[ids])
    ctx = body.replace(r"(?:(?P<group>\S+)\s+)?", r"(?:(?P<group>\S+)\s+)?(?P<context>\S+)\s+") if ids == 2 else \
        body.replace(r"(?P<size>", r"(?P<context>\S+)\s+(?P<size>", 1)
    return (re.compile(r"^" + _PREFIX + r"\s*" + body), re.compile(r"^" + body),
            re.compile(r"^" + _PREFIX + r"\s*" + ctx))
_UNSEEN = object()  # a cache miss (None is a cached "not a mode" / "no ISO form")
# ``RowParser.rows``: the keys of a common row after its mode head and attribute, in ``_fill``'s
# order; a mode token; the first branch of _DATE, its fields joined by single spaces
_COMMON = ("links", "owner", "group", "size_bytes", "modified_raw", "modified_at", "name")
_MODE_TOKEN = re.compile(MODE_RE + r"[.@+]?")
_SHORT_DATE = re.compile(r"[A-Za-z]{3} \d{1,2} (?:\d{1,2}:\d\d|\d{4})")
_DEVICE = re.compile(r"(\d+),\s*(\d+)")
# ls could not stat the entry (permission denied): "d????????? ? ? ? ?            ? name"
_UNKNOWN = re.compile(r"^" + _PREFIX + r"\s*(?P<kind>[-bcdlpsDwn?])\?{9}\s+\?\s+\?\s+(?:\?\s+)?\?\s+\?\s(?P<name>.*)$")
ROWISH = re.compile(r"^\s*(?:\d+(?:[.,]\d+)?[KMGTPEZYk]?\s+){0,2}[-bcdlpsDwn?][-rwxsStTlL?]{9}[.@+]?\s")

#: Most entries each conversion cache keeps (a cache is emptied when it is full).
CACHE_LIMIT = 4096
# mode → (row head {mode, type, …}, permissions, is a symlink); copied into rows, never changed
_MODES: dict[str, tuple[dict[str, object], dict[str, object], bool]] = {}
# mode token → (template of the common row, permissions, is a symlink) or None; see ``rows``
_TEMPLATES: dict[str, tuple[dict[str, object], dict[str, object], bool] | None] = {}
# (now_year, today) → single-spaced short date → ISO or None (not a short date, or no ISO form)
_SHORT_DATES: dict[tuple[int | None, _dt.date], dict[str, str | None]] = {}


def _bounded(cache: dict[str, Any]) -> dict[str, Any]:
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    return cache


def _short_dates(now_year: int | None) -> dict[str, str | None]:
    """The short dates' cache for today's listings (one day kept)."""
    key = (now_year, _dt.date.today())
    found = _SHORT_DATES.get(key)
    if found is None:
        _SHORT_DATES.clear()
        found = _SHORT_DATES[key] = {}
    return found


@dataclass(frozen=True)
class RowStyle:
    """How names are printed (decided from the argv)."""

    escaped: bool = False  # -b / --escape / --quoting-style=escape
    c_quoted: bool = False  # -Q / --quote-name / --quoting-style=c
    si: bool = False  # --si: powers of 1000
    has_inode: bool = False
    has_blocks: bool = False
    classify: bool = False  # -F / -p / --file-type: indicator after names
    context: bool = False  # -Z / --context: a security-context column
    ids: int = 2  # id columns printed: 2 (owner group), 1 (-g: group; -o/-G: owner), 0 (-go)
    indicator: str | None = None  # "slash" (-p), "file-type" (--file-type), "classify" (-F)


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


#: The characters each indicator style appends (GNU ls: ``indicator_style``).
INDICATORS = {"slash": "/", "file-type": "/@|=>", "classify": "/*@|=>"}


def expected_indicator(mode: str, style: RowStyle) -> str | None:
    """The indicator ``ls`` appends to a long row's name, known from its mode: ``/`` for a
    directory; with file-type and classify ``|`` (FIFO), ``=`` (socket), ``>`` (door); with
    classify ``*`` for a regular file any execute bit is set on. A symlink's name gets none."""
    kind = mode[:1]
    if style.indicator is None or kind == "l":
        return None
    if kind == "d":
        return "/"
    if style.indicator == "slash":
        return None
    if kind in "psD":
        return {"p": "|", "s": "=", "D": ">"}[kind]
    if kind == "-" and style.indicator == "classify" and len(mode) >= 10 and (
            mode[3] in "xs" or mode[6] in "xs" or mode[9] in "xt"):
        return "*"
    return None


def _after_quote(name: str) -> tuple[str, str | None]:
    """``"a*"*`` (C quoting) → (``"a*"``, ``*``): the indicator is outside the quotes."""
    if len(name) >= 3 and name[0] == '"' and name[-1] != '"' and name[-2] == '"' and name[-1] in "/*@|=>":
        return name[:-1], name[-1]
    return name, None


def strip_indicator(name: str, style: RowStyle, mode: str | None = None) -> tuple[str, str | None]:
    """Remove the indicator the style appended, and only that one; return (name, indicator).

    A long row (``mode``) gets exactly :func:`expected_indicator`'s character stripped, so a
    ``*`` that is part of a name stays. A name list has no mode: there a ``/`` is always the
    indicator (no name holds one) and, C-quoted, whatever follows the closing quote; the other
    characters are refused before (``ls._supports``) unless the names are C-quoted."""
    if style.indicator is None or len(name) < 2:
        return name, None
    if style.c_quoted:
        return _after_quote(name)
    if mode is not None:
        want = expected_indicator(mode, style)
        if want is not None and name.endswith(want):
            return name[:-1], want
        return name, None
    if name[-1] == "/":
        return name[:-1], "/"
    return name, None


def strip_target_indicator(target: str, style: RowStyle, row: dict[str, object]) -> str:
    """A symlink's target with the indicator of *its* file type removed (``-F``/``--file-type``:
    ``lnd -> d/``, ``lnexe -> exe*``; ``-p`` marks none). The type is not in the row, but the
    link's size is the target's length in bytes: one byte more is the indicator. Without an
    exact size (``-h`` above 1023 bytes) a trailing indicator character cannot be placed:
    ``Unsupported``."""
    if style.indicator not in ("file-type", "classify") or not target:
        return target
    if style.c_quoted:
        return _after_quote(target)[0]
    if target[-1] not in INDICATORS[style.indicator]:
        return target
    size = row.get("size_bytes")
    if not isinstance(size, int):
        raise Unsupported("ls: a symlink's target ends with an indicator character and its size is not exact, "
                          "so where the target ends is unknown; use -Q (or drop -h)",
                          hint_args=["--quoting-style=c"])
    length = len(decode_name(target, style).encode("utf-8", "surrogateescape"))
    return target[:-1] if length == size + 1 else target


class RowParser:
    """Parses the rows of one listing.  Listings repeat a handful of modes and dates, so their
    conversions (mode → type/permissions/octal, date → collapsed text + ISO) are memoised: the
    per-row work is one split (or regex match) and a few dict stores.  The mode templates and
    the short dates' ISO forms are kept between listings (a short date's year depends only on
    ``now_year`` and today), within :data:`CACHE_LIMIT` entries."""

    def __init__(self, style: RowStyle, now_year: int | None) -> None:
        self.style = style
        self.now_year = now_year
        self.plain = not (style.classify or style.escaped or style.c_quoted or style.context) and style.ids == 2
        self._row_re, self._bare_re, self._context_re = (ROW_RE, _BARE_ROW_RE, _CONTEXT_ROW_RE) if style.ids == 2 \
            else _regexes(style.ids)
        self.prefixed = style.has_inode or style.has_blocks
        self._modes = _MODES
        self._templates = _TEMPLATES
        self._short_dates = _short_dates(now_year)
        # printed date → (whitespace collapsed, ISO or None, old --time-style=iso date: name padded)
        self._dates: dict[str, tuple[str, str | None, bool]] = {}

    def _mode(self, mode: str) -> tuple[dict[str, object], dict[str, object], bool]:
        info = mode_info(mode)
        perms = info.pop("permissions")
        assert isinstance(perms, dict)
        parts = _bounded(self._modes)[mode] = ({"mode": mode, **info}, perms, info["type"] == "symlink")
        return parts

    def _template(self, token: str) -> tuple[dict[str, object], dict[str, object], bool] | None:
        """For a mode token (mode + attribute character): the keys ``_fill`` gives a common row
        in its order, the attribute set, other values unset; None when it is not a mode."""
        template = None
        if _MODE_TOKEN.fullmatch(token):
            mode, attr = token[:10], token[10:]
            head, perms, is_link = self._modes.get(mode) or self._mode(mode)
            keys = {"permissions": None, **({"attr": attr} if attr else {}), **dict.fromkeys(_COMMON)}
            if is_link:
                keys["target"] = None
            template = ({**head, **keys}, perms, is_link)
        _bounded(self._templates)[token] = template
        return template

    def _short_date(self, date: str) -> str | None:
        """ISO form of a ``Mon DD HH:MM`` / ``Mon DD YYYY`` date (single-spaced), else None."""
        iso = listing_date_to_iso(date, self.now_year) if _SHORT_DATE.fullmatch(date) else None
        _bounded(self._short_dates)[date] = iso
        return iso

    def _date(self, raw: str) -> tuple[str, str | None, bool]:
        date = " ".join(raw.split())
        plain = _WEEKDAY.sub("", date, count=1)  # BusyBox -e: ctime() leads with the weekday
        iso = listing_date_to_iso(plain, self.now_year) or day_month_to_iso(date, self.now_year)
        # --time-style=iso prints old dates as "%Y-%m-%d " (padded to 11 columns)
        parts = self._dates[raw] = (date, iso,
                                    len(date) == 10 and date[4] == "-")
        return parts

    def rows(self, lines: list[str]) -> list[dict[str, object] | None]:
        """``row`` of every line, with a fast path for the common row: nine whitespace-separated
        fields ``MODE[attr] LINKS OWNER GROUP SIZE Mon DD HH:MM|YYYY NAME`` with a size in bytes,
        one space before the name and (for a symlink) one ``' -> '``.  ``str.split`` finds the
        fields in a third of the regex's time, and each field is checked against the part of
        ``_BARE_ROW_RE`` that reads it; where that regex could branch, the checks accept only
        its first branch (owner *and* group, a byte size, the short date), so an accepted line
        gets exactly the regex's fields.  The row is a copy of its mode's template — one
        allocation with every key in ``_fill``'s order, instead of growing the dict twice.
        Anything else goes through ``row``."""
        if not self.plain:
            return list(map(self.row, lines))
        out: list[dict[str, object] | None] = []
        append = out.append
        templates = self._templates
        dates = self._short_dates
        for line in lines:
            parts = line.split(None, 8) if line[:1] in _MODE_START else ()
            if len(parts) != 9:
                append(self.row(line))
                continue
            token, links, owner, group, size, month, day, clock, name = parts
            tpl = templates.get(token, _UNSEEN)
            if tpl is _UNSEEN:
                tpl = self._template(token)
            date = f"{month} {day} {clock}"
            iso = dates.get(date, _UNSEEN)
            if iso is _UNSEEN:
                iso = self._short_date(date)
            cut = -len(name)
            if (tpl is None or iso is None or not links.isdecimal() or not size.isdecimal()
                    or line[cut - 1] != " " or line[cut - 2].isspace()):
                append(self.row(line))
                continue
            template, perms, is_link = tpl  # type: ignore[misc]
            size_bytes = int(size)
            row = template.copy()
            if is_link:
                shown, arrow, target = name.partition(" -> ")
                if " -> " in target:  # more than one arrow: the size may pick the split
                    shown, target, ambiguous = split_link(name, size_bytes)
                    arrow = " -> " if target is not None and not ambiguous else ""
                if not arrow:
                    append(self.row(line))
                    continue
                row["target"] = target
                name = shown
            row["permissions"] = perms.copy()
            row["links"] = int(links)
            row["owner"] = owner
            row["group"] = group
            row["size_bytes"] = size_bytes
            row["modified_raw"] = date
            row["modified_at"] = iso
            row["name"] = name
            append(row)
        return out

    def row(self, line: str) -> dict[str, object] | None:
        """The row as a dict, or None when the line is not a long-format row."""
        if self.style.context:
            return self._context_row(line)
        if line[:1] in _MODE_START:
            m = self._bare_re.match(line)
            if m is None:
                return self._unknown(line)
            return self._fill(*m.groups())
        m = self._row_re.match(line)
        if m is None:
            return self._unknown(line)
        inode, blocks, mode, attr, links, owner, group, size, raw_date, name = m.groups()
        return self._fill(mode, attr, links, owner, group, size, raw_date, name, (inode, blocks))

    def _context_row(self, line: str) -> dict[str, object] | None:
        m = self._context_re.match(line)
        if m is None:
            return self._unknown(line)
        g = m.group
        row = self._fill(g("mode"), g("attr"), g("links"), g("owner"), g("group"), g("size"), g("date"), g("name"),
                         (g("inode"), g("blocks")))
        row["context"] = g("context")
        return row

    def _fill(self, mode: str, attr: str, links: str, owner: str, group: str | None, size: str, raw_date: str,
              name: str, prefix: tuple[str | None, str | None] | None = None) -> dict[str, object]:
        """The row from the matched fields (``prefix``: the inode and blocks columns)."""
        head, perms, is_link = self._modes.get(mode) or self._mode(mode)
        row = head.copy()
        row["permissions"] = perms.copy()
        if attr:
            row["attr"] = attr
        row["links"] = int(links)
        if owner is not None:
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
    mode = row.get("mode")
    name, ind = strip_indicator(name, style, mode if isinstance(mode, str) else None) if target is None else (name, None)
    if target is not None:
        target = strip_target_indicator(target, style, row)
    row["name"] = decode_name(name, style)
    if ind is not None:
        row["indicator"] = ind
    if target is not None:
        row["target"] = decode_name(target, style)
    return ind
