"""Names printed in shell quoting (``'a b'``, ``"it's"``, ``'nl'$'\\n''x'``) — read back exactly.

uutils coreutils (``ls``, ``wc``) quote names that need it even into a pipe, and GNU ``ls`` does
the same on a terminal (``--quoting-style=shell-escape``, which also pads unquoted names with one
space).  Nothing in the output says which program printed it, so the decision is made per
listing from the names themselves (``shell_quoted``): every name must be either a bare word that
needs no quoting, or a quoted word whose value needs quoting — the only forms those programs
print — and at least one must be quoted.  A name that a quoting program would never print that
way (a bare ``a b``, a quoted ``'x'``) shows that the names are literal, and nothing is decoded.

uutils 0.0.17 writes a control character inside a double-quoted name as ``'$'\\t''`` (the
single-quote form's escape, a bug: a shell reads it literally); ``decode`` reads what it meant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# characters a bare (unquoted) name never contains when a quoting program printed it
_UNSAFE_BARE = re.compile(r"[\s'\"$`\\|&;<>()*?\[\]!\x00-\x1f\x7f]")
# a value that one of them quotes (GNU also quotes = ^, uutils also { }; U+FFFD: a byte GNU wrote as \\377)
# \udc80-\udcff: a byte that is not UTF-8, as the decoding keeps it (surrogateescape)
_NEEDS_QUOTES = re.compile("[\ufffd\udc80-\udcff]|" r"[\s'\"$`\\|&;<>()*?\[\]!{}^=\x00-\x1f\x7f]|^[#~]")
_QUOTE_CHARS = re.compile(r"['\"]")
_ESCAPES = {"n": 0x0A, "t": 0x09, "r": 0x0D, "a": 0x07, "b": 0x08, "f": 0x0C, "v": 0x0B, "e": 0x1B, "E": 0x1B,
            "\\": 0x5C, "'": 0x27, '"': 0x22, "?": 0x3F}
_ANSI_IN_DQ = re.compile(r"'\$'((?:\\(?:[0-7]{1,3}|x[0-9A-Fa-f]{1,2}|.))+)(?:''|$)")


def read_octal(text: str, i: int) -> tuple[int, int]:
    """The byte of the one to three octal digits at ``text[i]`` (``\\303``), and the index after them."""
    j = i
    while j < len(text) and j < i + 3 and text[j] in "01234567":
        j += 1
    return int(text[i:j], 8) & 0xFF, j


def _ansi_c(text: str, i: int, out: bytearray) -> int | None:
    """Decode ``$'…'`` starting after ``$'`` at ``i``; return the index after the closing quote."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == "'":
            return i + 1
        if c != "\\":
            out += c.encode("utf-8", "surrogateescape")
            i += 1
            continue
        if i + 1 >= n:
            return None
        nxt = text[i + 1]
        if nxt in "01234567":
            byte, i = read_octal(text, i + 1)
            out.append(byte)
        elif nxt == "x" and i + 2 < n and text[i + 2] in "0123456789abcdefABCDEF":
            j = i + 2
            while j < n and j < i + 4 and text[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(text[i + 2:j], 16))
            i = j
        elif nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        else:
            return None
    return None


def _double(text: str, i: int, out: bytearray) -> int | None:
    """Decode a ``"…"`` segment starting after its opening quote; index after the closing one."""
    close, n = i, len(text)
    while close < n and text[close] != '"':
        close += 2 if text[close] == "\\" else 1
    if close >= n:
        return None
    body = text[i:close]
    pos = 0
    for m in _ANSI_IN_DQ.finditer(body):
        out += re.sub(r'\\([\\"$`])', r"\1", body[pos:m.start()]).encode("utf-8", "surrogateescape")
        if _ansi_c(m.group(1) + "'", 0, out) is None:
            return None
        pos = m.end()
    out += re.sub(r'\\([\\"$`])', r"\1", body[pos:]).encode("utf-8", "surrogateescape")
    return close + 1


def word(text: str, start: int = 0) -> tuple[str, int, bool] | None:
    """Read one shell word from ``start`` up to an unquoted space (or the end).

    Returns (value, end index, whether any part was quoted), or None when the text is not a
    word a quoting program prints (an unsafe bare character, an unclosed quote)."""
    out = bytearray()
    i, n, quoted = start, len(text), False
    while i < n:
        c = text[i]
        if c == " ":
            break
        if c == "'":
            close = text.find("'", i + 1)
            if close < 0:
                return None
            out += text[i + 1:close].encode("utf-8", "surrogateescape")
            i, quoted = close + 1, True
        elif c == '"':
            end = _double(text, i + 1, out)
            if end is None:
                return None
            i, quoted = end, True
        elif c == "$" and text.startswith("$'", i):
            end = _ansi_c(text, i + 2, out)
            if end is None:
                return None
            i, quoted = end, True
        elif c == "\\" and i + 1 < n:  # 'it'\''s': an escaped quote between quoted parts
            out += text[i + 1].encode("utf-8", "surrogateescape")
            i, quoted = i + 2, True
        else:
            j = i
            while j < n and text[j] not in " '\"\\" and not text.startswith("$'", j):
                j += 1
            bare = text[i:j]
            if _UNSAFE_BARE.search(bare) or (i == start and bare[:1] in "#~"):
                return None
            out += bare.encode("utf-8", "surrogateescape")
            i = j
    value = out.decode("utf-8", "surrogateescape")  # a byte that is not UTF-8 stays itself (truth/exact.py)
    return (value, i, quoted) if value else None


def _form(text: str) -> str:
    """``bare`` (needs no decoding), ``quoted`` (a quoting program's form) or ``literal``."""
    if text[:1] == " " and text[1:2] not in ("", " ", "'", '"', "$"):  # GNU's alignment pad
        text = text[1:]
    w = word(text)
    if w is None or w[1] != len(text):
        return "literal"
    value, _, quoted = w
    if not quoted:
        return "bare"
    return "quoted" if _NEEDS_QUOTES.search(value) else "literal"


def shell_quoted(names: Iterable[str]) -> bool:
    """Whether these printed names (one listing) are in shell quoting: at least one quoted form
    and none that a quoting program would not print."""
    names = list(names)
    if not any(_QUOTE_CHARS.search(n) for n in names):
        return False
    seen_quoted = False
    for name in names:
        form = _form(name)
        if form == "literal":
            return False
        seen_quoted = seen_quoted or form == "quoted"
    return seen_quoted


def decode(text: str) -> str:
    """The value of one printed name (call only when ``shell_quoted`` said yes)."""
    if text[:1] == " " and text[1:2] not in ("", " "):
        text = text[1:]
    w = word(text)
    return w[0] if w is not None and w[1] == len(text) else text


def split_link(text: str) -> tuple[str, str] | None:
    """``'a -> b' -> 'c d'`` → (printed name, printed target), split outside the quotes."""
    if text[:1] == " " and text[1:2] not in ("", " "):
        text = text[1:]
    w = word(text)
    if w is None or not text.startswith(" -> ", w[1]):
        return None
    return text[: w[1]], text[w[1] + 4:]


def unquote_rows(rows: list[dict[str, object]], key: str, target_key: str | None = None) -> bool:
    """Decode ``key`` (and a symlink's ``target_key``, split again outside the quotes) of every
    row in place when the listing is shell-quoted; True when it was."""
    texts = [(row, row.get(key), row.get(target_key) if target_key else None) for row in rows]
    if not any(_QUOTE_CHARS.search(t) for _, name, target in texts for t in (name, target) if isinstance(t, str)):
        return False
    printed: list[tuple[dict[str, object], str, str | None]] = []
    for row, name, target in texts:
        if not isinstance(name, str):
            continue
        if isinstance(target, str):
            parts = split_link(f"{name} -> {target}")
            if parts is None:
                return False
            printed.append((row, *parts))
        else:
            printed.append((row, name, None))
    if not shell_quoted(t for _, name, target in printed for t in (name, target) if t is not None):
        return False
    for row, name, target in printed:
        row[key] = decode(name)
        if target is not None and target_key:
            row[target_key] = decode(target)
            row.pop("ambiguous_link", None)
    return True


def newline_name(text: str) -> str | None:
    """GNU ``wc`` (coreutils 9) quotes only names that contain a newline (``'a'$'\\n''b'``):
    the value when ``text`` is such a quoted word, else None (one printed line cannot hold a
    literal newline, so the decoding is unambiguous)."""
    if "$'" not in text:
        return None
    w = word(text)
    return w[0] if w is not None and w[1] == len(text) and w[2] and "\n" in w[0] else None


WARNING = ("shell_quoted_names: the names were printed in shell quoting (uutils, or GNU ls on a "
           "terminal) and were decoded")
