"""Exact names: bytes that are not UTF-8 travel losslessly (docs/envelope.md, "Exact names").

Why ``<field>_b64`` siblings and not lone surrogates in the field itself: a lone surrogate
(PEP 383 ``surrogateescape``, JSON ``\\udcff``) cannot be written by pydantic's serialiser
(``to_json`` refuses it) and is refused by the reader of the MCP SDK client (pydantic-core's
JSON parser: "lone leading surrogate in hex escape"), so an answer holding one would never
reach a client. Instead:

- the command's output is decoded with ``surrogateescape`` (each byte that is not UTF-8 becomes
  one lone surrogate U+DC80–U+DCFF) for the parser only, so two different byte names stay two
  different strings while they are parsed;
- after the parse, :func:`exact_names` replaces every such string by its display form (each
  lone surrogate → U+FFFD, exactly like ``raw``) and, where the string is a value in an object,
  adds the sibling ``<key>_b64``: base64 of the exact bytes (``os.fsencode`` of the parsed
  string). A list of strings under ``<key>`` (``find``'s ``paths``) gets a ``<key>_b64`` list
  of the same length: the base64 where the string was replaced, ``null`` where it is exact. A
  field without a ``_b64`` sibling was valid UTF-8 and is exact as it stands;
- everything else (``raw``, the content hash, the result store, evidence, paging) sees only the
  display text, which is always valid UTF-8.
"""

from __future__ import annotations

import base64
import os
import re
from typing import Any, TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import JsonValue

#: A lone surrogate: what ``surrogateescape`` makes of a byte that is not UTF-8 (U+DC80–U+DCFF),
#: and any other a caller's string may hold (JSON ``\\ud800`` …); none can be written as UTF-8.
LONE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
SUFFIX = "_b64"


def has_lone(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (an ASCII text never does: checked first)."""
    return not text.isascii() and LONE.search(text) is not None


def display(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD: one code point for one, so offsets
    into the display form are offsets into ``text``."""
    return LONE.sub(REPLACEMENT, text) if has_lone(text) else text


def decode(data: bytes) -> tuple[str, bool]:
    """(text, valid): UTF-8, with each byte that is not UTF-8 as a lone surrogate."""
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape"), False


def to_bytes(text: str) -> bytes:
    """The exact bytes a parsed string stands for (``os.fsencode``: UTF-8 + surrogateescape);
    a surrogate ``surrogateescape`` cannot have made (a caller's ``\\ud800``) becomes U+FFFD."""
    try:
        return os.fsencode(text)
    except UnicodeEncodeError:
        return display(text).encode("utf-8")


def b64(text: str) -> str:
    return base64.b64encode(to_bytes(text)).decode("ascii")


def exact_names(value: JsonValue) -> tuple[Any, bool]:
    """``value`` with every string holding a lone surrogate in its display form, and a
    ``<key>_b64`` sibling (the exact bytes) beside each such string that is an object's value;
    returns (value, whether anything was replaced). Copy on write: an object or list without
    such a string is returned as it is, and the common value (none at all) costs one scan with
    no call per string."""
    out = _walk(value)
    return (value, False) if out is _SAME else (out, True)


_SAME = object()  # "unchanged" (a value may itself be None)


def _walk(item: JsonValue) -> Any:
    """The changed copy of ``item``, or :data:`_SAME`."""
    kind = type(item)
    if kind is str:
        return display(item) if not item.isascii() and LONE.search(item) else _SAME
    if kind is dict:
        return _walk_dict(item)
    if kind is list:
        return _walk_list(item)
    return _SAME


def _walk_list(item: list[Any]) -> Any:
    out: list[Any] | None = None
    for i, x in enumerate(item):
        kind = type(x)
        if kind is str:
            if x.isascii() or not LONE.search(x):
                continue
            new: Any = display(x)
        elif kind is dict or kind is list:
            new = _walk(x)
            if new is _SAME:
                continue
        else:
            continue
        if out is None:
            out = list(item)
        out[i] = new
    return _SAME if out is None else out


def _walk_dict(item: dict[Any, Any]) -> Any:
    changed = False
    for key, val in item.items():
        kind = type(val)
        if kind is str:
            if not val.isascii() and LONE.search(val):
                changed = True
                break
        elif kind is dict or kind is list:
            if _walk(val) is not _SAME:
                changed = True
                break
        if type(key) is str and not key.isascii() and LONE.search(key):
            changed = True
            break
    if not changed:
        return _SAME
    fixed: dict[Any, Any] = {}
    for key, val in item.items():
        k = display(key) if type(key) is str else key
        if type(val) is str and has_lone(val):
            fixed[k] = display(val)
            fixed[f"{k}{SUFFIX}"] = b64(val)
        elif type(val) is list and any(type(x) is str and has_lone(x) for x in val):
            new = _walk_list(val)
            fixed[k] = val if new is _SAME else new
            fixed[f"{k}{SUFFIX}"] = [b64(x) if type(x) is str and has_lone(x) else None for x in val]
        else:
            new = _walk(val)
            fixed[k] = val if new is _SAME else new
    return fixed
