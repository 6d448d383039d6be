"""Helpers shared by the filesystem parsers (ls, stat, find, du, df, tree).

- ``split_lines``: split on ``\\n`` only. ``str.splitlines`` also breaks at ``\\x0b``, ``\\x1c``,
  ``\\u2028`` … which are legal inside file names; a trailing ``\\r`` (CRLF capture) is dropped.
- ``mode_info``: the 10-character mode string (``drwxr-sr-t``) → type, rwx triplets, octal mode.
- ``unescape_c``: names printed by ``ls -b`` / ``--quoting-style=escape|c`` decoded exactly.
"""

from __future__ import annotations

import re
from functools import lru_cache

from parism.parsers.shellquote import read_octal

TYPE_CHARS: dict[str, str] = {"-": "file", "d": "directory", "l": "symlink"}
FILE_KINDS: dict[str, str] = {
    "-": "regular", "d": "directory", "l": "symlink", "c": "char_device", "b": "block_device",
    "p": "fifo", "s": "socket", "D": "door", "w": "whiteout", "n": "network",
}
MODE_RE = r"[-bcdlpsDwn?][-rwxsStTlL]{9}"


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` split on ``\\n`` only, no final empty line. A CRLF capture (every line
    ends with ``\\r``) loses the ``\\r``; a lone ``\\r`` at the end of one line is part of a name."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if lines and text.count("\r\n") >= len(lines) - 1 and all(ln.endswith("\r") for ln in lines[:-1]):
        return [ln.removesuffix("\r") for ln in lines]
    return lines


def _triplet_bits(trip: str, special: str) -> tuple[int, bool]:
    """rwx bits of one triplet and whether its special bit (s/t) is set."""
    bits = (4 if trip[0] == "r" else 0) | (2 if trip[1] == "w" else 0)
    x = trip[2]
    if x in "xst":
        bits |= 1
    return bits, x in special


def mode_info(mode: str) -> dict[str, object]:
    """``-rwsr-xr-t`` → {type, file_kind, permissions{owner,group,other}, mode_octal, setuid…}.

    Special bits: ``s``/``S`` in the owner or group execute slot (setuid/setgid; lower case =
    execute bit also set), ``t``/``T`` in the other slot (sticky). A fresh dict each call (rows
    own their values); the decoding itself is cached, listings repeat a handful of modes."""
    info, perms = _mode_parts(mode)
    out = dict(info)
    out["permissions"] = dict(perms)
    return out


@lru_cache(maxsize=1024)
def _mode_parts(mode: str) -> tuple[tuple[tuple[str, object], ...], tuple[tuple[str, str], ...]]:
    kind_char = mode[0]
    owner, group, other = mode[1:4], mode[4:7], mode[7:10]
    ob, suid = _triplet_bits(owner, "sS")
    gb, sgid = _triplet_bits(group, "sSlL")
    tb, sticky = _triplet_bits(other, "tT")
    special = (4 if suid else 0) | (2 if sgid else 0) | (1 if sticky else 0)
    info: list[tuple[str, object]] = [
        ("type", TYPE_CHARS.get(kind_char, "other")),
        ("file_kind", FILE_KINDS.get(kind_char, "unknown")),
        ("mode_octal", f"{special}{ob}{gb}{tb}"),
    ]
    info += [(k, True) for k, on in (("setuid", suid), ("setgid", sgid), ("sticky", sticky)) if on]
    return tuple(info), (("owner", owner), ("group", group), ("other", other))


_ESC = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\",
        " ": " ", '"': '"', "'": "'", "?": "?", "e": "\x1b"}


def unescape_c(text: str) -> str:
    """Decode GNU ``ls`` escape/C quoting: ``\\n``, ``\\ ``, ``\\303\\251`` (octal bytes, UTF-8)."""
    if "\\" not in text:
        return text
    out = bytearray()
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "\\" or i + 1 >= n:
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in "01234567":
            byte, i = read_octal(text, i + 1)
            out.append(byte)
        elif nxt in _ESC:
            out += _ESC[nxt].encode()
            i += 2
        else:
            out += nxt.encode("utf-8", "surrogateescape")
            i += 2
    return out.decode("utf-8", "surrogateescape")  # a byte that is not UTF-8 stays itself (truth/exact.py)


_OCTAL = re.compile(r"\\([0-7]{3})")


def decode_octal(text: str) -> str:
    """Decode only ``\\ooo`` byte escapes (``tree`` in a UTF-8 locale leaves ``\\`` alone)."""
    if "\\" not in text:
        return text
    out = bytearray()
    pos = 0
    for m in _OCTAL.finditer(text):
        out += text[pos:m.start()].encode("utf-8", "surrogateescape")
        out.append(int(m.group(1), 8) & 0xFF)
        pos = m.end()
    out += text[pos:].encode("utf-8", "surrogateescape")
    return out.decode("utf-8", "surrogateescape")


def split_unescaped(text: str, sep: str) -> tuple[str, str] | None:
    """Split at the first ``sep`` that is not inside a backslash escape (``ls -b`` link rows)."""
    i, n = 0, len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text.startswith(sep, i):
            return text[:i], text[i + len(sep):]
        i += 1
    return None


def split_link(text: str, size: int | None) -> tuple[str, str | None, bool]:
    """``name -> target`` printed without quoting → (name, target, ambiguous).

    When ``' -> '`` occurs more than once, the symlink's size (the byte length of its target,
    printed by ``ls -l`` and ``stat``) picks the split; without it the first split is kept and
    ``ambiguous`` is True."""
    cut = text.find(" -> ")
    if cut < 0:
        return text, None, False
    cuts = []
    while cut >= 0:  # non-overlapping, left to right
        cuts.append(cut)
        cut = text.find(" -> ", cut + 4)
    if len(cuts) > 1 and size is not None:
        fits = [c for c in cuts if len(text[c + 4:].encode("utf-8", "surrogateescape")) == size]
        if len(fits) == 1:
            return text[:fits[0]], text[fits[0] + 4:], False
    return text[:cuts[0]], text[cuts[0] + 4:], len(cuts) > 1


def unquote_c(text: str) -> str:
    """``"a b\\n"`` (``ls -Q`` / ``--quoting-style=c``) → the decoded name; else unchanged."""
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return unescape_c(text[1:-1])
    return unescape_c(text)


def split_quoted_link(text: str) -> tuple[str, str | None]:
    """``"a -> b" -> "c"`` → (``"a -> b"``, ``"c"``) for C-quoted link rows."""
    i, n = 1, len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            rest = text[i + 1:]
            if rest.startswith(" -> "):
                return text[: i + 1], rest[4:]
            return text, None
        i += 1
    return text, None


