"""``find -printf FORMAT``: output read by the format the caller gave (as ``_statfmt.py`` does for
``stat -c``), each directive a typed field of an ``entries`` row.

The record terminator is the format's own last escape: ``\\0`` or ``\\n`` (anything else is
refused: records could not be told apart).

* ``\\0``: the output is split on NUL, exactly (no name holds one); a record is as many NUL
  pieces as the format has ``\\0``.  Within one piece at most one free-text field (``%p %P %f
  %h %l`` — a name may hold any byte but NUL) stands between typed ones, so the piece, anchored
  at both ends, has one reading whatever the name holds.
* ``\\n``: a name holding a newline would cut one record into two that both fit the format
  (``'a 5\\nb'`` of ``%p %s\\n``) and invent a row; the text cannot show it.  So a ``\\n``
  format may hold only typed fields (sizes, modes, ids, times …), whose values never hold a
  newline; one with a name field is refused with the same format ending in ``\\0`` as the hint.

Typed fields: ``%s`` size_bytes, ``%m`` mode_octal (4 digits, as stat's), ``%M`` permissions,
``%y``/``%Y`` type/target_type (find's letters), ``%i`` inode, ``%n`` links, ``%u``/``%g``
owner/group (a name, or the id find prints when there is none), ``%U``/``%G`` uid/gid, ``%k``
blocks_1k, ``%b`` blocks_512, ``%d`` depth, ``%T@ %A@ %C@`` modified_at/accessed_at/changed_at
(epoch seconds with find's fraction → ISO 8601 UTC, nanoseconds kept).  Refused with a hint:
flags, widths and precisions (``%-10p``), other directives (``%t``, ``%Tk`` forms, ``%F``, ``%S``,
``%Z``…), ``\\c``, two fields with nothing between them.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from parism.parsers.contract import Unrecognized

FREE = {"p": "path", "P": "relative_path", "f": "name", "h": "directory", "l": "target"}
_INT = r"\d+"
TYPED: dict[str, tuple[str, str]] = {
    "s": ("size_bytes", _INT), "m": ("mode_octal", r"[0-7]+"), "M": ("permissions", r"[-a-zA-Z?][-rwxsStT]{9}"),
    "y": ("type", r"[fdlbcpsDU?]"), "Y": ("target_type", r"[fdlbcpsDUNL?]"), "i": ("inode", _INT),
    "n": ("links", _INT), "u": ("owner", r"[^\s\0]+"), "g": ("group", r"[^\s\0]+"), "U": ("uid", _INT),
    "G": ("gid", _INT), "k": ("blocks_1k", _INT), "b": ("blocks_512", _INT), "d": ("depth", _INT),
    "T@": ("modified_at", r"\d+(?:\.\d+)?"), "A@": ("accessed_at", r"\d+(?:\.\d+)?"),
    "C@": ("changed_at", r"\d+(?:\.\d+)?"),
}
_INTS = frozenset({"s", "i", "n", "U", "G", "k", "b", "d"})
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "0": "\0"}


@dataclass(frozen=True)
class FindFormat:
    pieces: tuple[re.Pattern[str], ...]  # one expression per terminator-separated piece of a record
    lazy: tuple[re.Pattern[str], ...]  # the same with every field lazy: a second reading must agree
    codes: tuple[tuple[str, ...], ...]  # the directives of each piece, in order
    terminator: str  # "\0" or "\n"


def _tokens(fmt: str) -> list[tuple[str, str]] | str:
    """("lit", text) and ("dir", code) items, or why the format is not read."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "\\":
            nxt = fmt[i + 1:i + 2]
            m = re.match(r"[0-7]{1,3}", fmt[i + 1:])
            if m and m.group() != "0":
                out.append(("lit", chr(int(m.group(), 8))))
                i += 1 + len(m.group())
            elif nxt in _ESCAPES and nxt:
                out.append(("lit", _ESCAPES[nxt]))
                i += 2
            else:
                return f"the escape '\\{nxt}' in the -printf format is not read"
        elif ch == "%":
            two = fmt[i + 1:i + 3]
            if two in TYPED:
                out.append(("dir", two))
                i += 3
            elif fmt[i + 1:i + 2] == "%":
                out.append(("lit", "%"))
                i += 2
            elif (code := fmt[i + 1:i + 2]) and (code in TYPED or code in FREE):
                out.append(("dir", code))
                i += 2
            else:
                return (f"the directive '%{fmt[i + 1:i + 3]}' is not read (flags, widths, %t/%T<k> times, "
                        "%F %S %Z … are out of range)")
        else:
            out.append(("lit", ch))
            i += 1
    return out


def compile_format(fmt: str) -> FindFormat | str:
    """The format's pieces, or why it is not read (the caller refuses with a hint)."""
    items = _tokens(fmt)
    if isinstance(items, str):
        return items
    if not items or items[-1] != ("lit", "\0") and items[-1] != ("lit", "\n"):
        return "the -printf format does not end with a record terminator (\\0 or \\n)"
    term = items[-1][1]
    if not any(kind == "dir" for kind, _ in items):
        return "the -printf format has no field to read"
    pieces: list[re.Pattern[str]] = []
    lazy: list[re.Pattern[str]] = []
    codes: list[tuple[str, ...]] = []
    parts: list[str] = []
    here: list[str] = []
    prev_dir = False
    for kind, val in items:
        if kind == "lit" and val == term:
            if sum(c in FREE for c in here) > 1:
                return "two name fields (%p %P %f %h %l) in one record piece cannot be told apart; separate them with \\0"
            pieces.append(re.compile("".join(parts), re.DOTALL))
            lazy.append(re.compile("".join(_lazy(p) for p in parts), re.DOTALL))
            codes.append(tuple(here))
            parts, here, prev_dir = [], [], False
            continue
        if kind == "lit":
            parts.append(re.escape(val))
            prev_dir = False
            continue
        if prev_dir:
            return f"%{here[-1]} and %{val} have nothing between them to tell them apart"
        if val in FREE:
            if term == "\n":
                return (f"%{val} may hold a newline, which a format ending in \\n cannot tell from a record's "
                        "end; end the format with \\0")
            parts.append(f"(?P<f{len(here)}>(?:[^\\0])*)")
        else:
            parts.append(f"(?P<f{len(here)}>(?:{TYPED[val][1]}))")
        here.append(val)
        prev_dir = True
    if parts:  # text after the last terminator cannot happen: the format ends with it
        return "the -printf format has text after its last record terminator"
    return FindFormat(tuple(pieces), tuple(lazy), tuple(codes), term)


def _lazy(part: str) -> str:
    """A field's expression with its quantifiers lazy (literals are escaped: no bare + or *)."""
    if not part.startswith("(?P<"):
        return part
    return part.replace("+", "+?").replace("*", "*?").replace(")?", ")??")


def nul_terminated(fmt: str) -> str:
    """The hint's format: the same fields, records ended by NUL."""
    return (fmt[:-2] + "\\0") if fmt.endswith("\\n") else fmt


def _epoch(text: str) -> str:
    sec, _, frac = text.partition(".")
    stamp = _dt.datetime.fromtimestamp(int(sec), _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    frac = frac[:9].rstrip("0")
    return f"{stamp}{'.' + frac if frac else ''}+00:00"


def parse(text: str, fmt: FindFormat) -> list[dict[str, object]]:
    """One row per record."""
    chunks = text.split(fmt.terminator)
    if chunks[-1] != "":
        raise Unrecognized(f"find -printf: the output does not end with the format's terminator "
                           f"({chunks[-1][:60]!r})")
    chunks.pop()
    n = len(fmt.pieces)
    if len(chunks) % n:
        raise Unrecognized(f"find -printf: {len(chunks)} pieces do not make records of {n}")
    rows = []
    for start in range(0, len(chunks), n):
        row: dict[str, object] = {}
        for piece, lazy, codes, chunk in zip(fmt.pieces, fmt.lazy, fmt.codes, chunks[start:start + n]):
            m = piece.fullmatch(chunk)
            if m is None:
                raise Unrecognized(f"find -printf: {chunk[:60]!r} does not fit the format")
            other = lazy.fullmatch(chunk)
            if other is None or other.groups() != m.groups():
                raise Unrecognized(f"find -printf: {chunk[:60]!r} has two readings under the format "
                                   "(a name holds the text between its fields); separate the name with \\0")
            for i, code in enumerate(codes):
                value = m.group(f"f{i}")
                if code in FREE:
                    if value or code != "l":  # %l is empty for all but symlinks (never empty)
                        row[FREE[code]] = value
                elif code in _INTS:
                    row[TYPED[code][0]] = int(value)
                elif code == "m":
                    row["mode_octal"] = value.rjust(4, "0")
                elif code.endswith("@"):
                    row[TYPED[code][0]] = _epoch(value)
                else:
                    row[TYPED[code][0]] = value
        rows.append(row)
    return rows


# ``find -ls``: GNU's fixed layout (findutils listfile.c): inode, blocks (1 KiB), mode, links,
# owner, group, size (``major, minor`` for a device), ``Mon dd HH:MM`` or ``Mon dd  YYYY``, then
# the name — printed with backslash escapes (``\ `` for a space, ``\n``, ``\NNN`` for a byte
# that is not printable), so the one unescaped `` -> `` of a symlink row is the separator.
_LS = re.compile(
    r" *(\d+) +(\d+) +([-a-zA-Z?][-rwxsStT]{9}[.+]?) +(\d+) +(\S+) +(\S+) +(?:(\d+)|(\d+), +(\d+)) +"
    r"([A-Z][a-z]{2} [ \d]\d (?:\d\d:\d\d| \d{4})) (.*)")
_LS_ESCAPES = {"\\": 0x5C, "n": 0x0A, "b": 0x08, "r": 0x0D, "t": 0x09, "f": 0x0C, " ": 0x20, "a": 0x07, "v": 0x0B}


def unescape_ls(text: str) -> str:
    """The name ``-ls`` printed, as the bytes it stands for (decoded with surrogateescape)."""
    out = bytearray()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == " " and text.startswith(" -> ", i):
            raise Unrecognized("find -ls: an unescaped ' -> ' inside a name")
        if ch != "\\":
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
            continue
        nxt = text[i + 1:i + 2]
        m = re.match(r"[0-7]{3}", text[i + 1:])
        if m:
            out.append(int(m.group(), 8) & 0xFF)
            i += 4
        elif nxt in _LS_ESCAPES and nxt:
            out.append(_LS_ESCAPES[nxt])
            i += 2
        else:
            raise Unrecognized(f"find -ls: the escape '\\{nxt}' in {text[:60]!r} is not one find prints")
    return out.decode("utf-8", "surrogateescape")


def parse_ls(text: str, now_year: int | None) -> list[dict[str, object]]:
    from parism.parsers.dates import listing_date_to_iso

    rows = []
    for line in text.split("\n"):
        if not line:
            continue
        m = _LS.fullmatch(line)
        if m is None:
            raise Unrecognized(f"find -ls: {line[:80]!r} is not a -ls row")
        ino, blocks, mode, links, owner, group, size, major, minor, date, rest = m.groups()
        row: dict[str, object] = {"inode": int(ino), "blocks_1k": int(blocks), "permissions": mode,
                                  "links": int(links), "owner": owner, "group": group}
        if size is not None:
            row["size_bytes"] = int(size)
        else:
            row["device_type"] = f"{int(major)},{int(minor)}"
        row["modified_raw"] = date
        iso = listing_date_to_iso(date, now_year)
        if iso is not None:
            row["modified_at"] = iso
        if mode.startswith("l"):
            name, arrow, target = rest.partition(" -> ")
            if not arrow:
                raise Unrecognized(f"find -ls: a symlink row without ' -> ': {line[:80]!r}")
            row["path"], row["target"] = unescape_ls(name), unescape_ls(target)
        else:
            row["path"] = unescape_ls(rest)
        rows.append(row)
    return rows
