"""Git's C-style path quoting (``core.quotePath``): ``"a\\303\\251 \\"b\\".txt"``.

Git quotes a path that contains control characters, ``"``, ``\\`` or (by default) non-ASCII
bytes, writing the bytes as octal escapes. Unquoting restores the bytes and decodes UTF-8; bytes
that are not UTF-8 become lone surrogates (PEP 383), so two different names never read alike.
"""

from __future__ import annotations

_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def read_quoted(text: str, start: int = 0) -> tuple[str, int] | None:
    """Unquote the C string starting at ``text[start] == '"'``; returns (value, index after the
    closing quote), or None when ``text`` has no complete quoted string there."""
    if start >= len(text) or text[start] != '"':
        return None
    out = bytearray()
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            return out.decode("utf-8", errors="surrogateescape"), i + 1
        if ch != "\\":
            out += ch.encode("utf-8", errors="surrogateescape")
            i += 1
            continue
        if i + 1 >= n:
            return None
        nxt = text[i + 1]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif text[i + 1:i + 4].isdigit() and len(text[i + 1:i + 4]) == 3:
            out.append(int(text[i + 1:i + 4], 8) & 0xFF)
            i += 4
        else:
            return None
    return None


def unquote(path: str) -> tuple[str, bool]:
    """(path, was_quoted). A path that is not a complete quoted string is returned as is."""
    got = read_quoted(path)
    if got is not None and got[1] == len(path):
        return got[0], True
    return path, False


def split_arrow(text: str) -> tuple[str, str, bool]:
    """``orig -> new`` (rename/copy lines): each side may be quoted; unquoted text is split at
    the *last* `` -> `` (a name may contain it). Returns (orig, new, any_quoted)."""
    got = read_quoted(text)
    if got is not None and text.startswith(" -> ", got[1]):
        new, _ = unquote(text[got[1] + 4:])
        return got[0], new, True
    if text.endswith('"'):
        idx = text.rfind(' -> "')
        if idx >= 0:
            new, q2 = unquote(text[idx + 4:])
            if q2:
                return text[:idx], new, True
    orig, _, new = text.rpartition(" -> ")
    return orig, new, False


def split_rename(text: str) -> tuple[str | None, str, bool]:
    """A ``--stat``/``--numstat`` path: ``old => new``, ``pre{old => new}post`` (git's compacted
    form for a shared prefix or suffix) or a plain path. Each side of an arrow may be C-quoted
    (git then never compacts). Returns (orig_path or None, path, any_quoted).

    Git does not quote `` => `` inside a name, so a name that contains it reads as a rename:
    ``--numstat -z`` or ``--name-status`` are the exact forms (docs/parsers.md)."""
    got = read_quoted(text)
    if got is not None and got[1] == len(text):
        return None, got[0], True
    if got is not None and text.startswith(" => ", got[1]):
        new, _ = unquote(text[got[1] + 4:])
        return got[0], new, True
    if text.endswith('"') and (idx := text.rfind(' => "')) >= 0:
        new, quoted = unquote(text[idx + 4:])
        if quoted:
            return text[:idx], new, True
    open_, close = text.find("{"), text.rfind("}")
    if 0 <= open_ < close and " => " in text[open_:close]:
        old, _, new = text[open_ + 1:close].partition(" => ")
        pre, post = text[:open_], text[close + 1:]
        # git writes "{ => b}/x" when the old path is only the suffix: no doubled slash
        return _join(pre, old, post), _join(pre, new, post), False
    if " => " in text:
        old, _, new = text.partition(" => ")
        return old, new, False
    return None, text, False


def _join(pre: str, mid: str, post: str) -> str:
    if not mid and pre.endswith("/") and post.startswith("/"):
        return pre + post[1:]
    if not mid and not pre and post.startswith("/"):
        return post[1:]
    return pre + mid + post
