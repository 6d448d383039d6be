"""Output that is not text, carried as bytes: classified, masked, base64 (docs/envelope.md).

Why: a stream of NUL, random or invalid-UTF-8 bytes decoded as text became ``\\u0000`` (6 bytes
per byte) or U+FFFD (3) in ``stdout.raw``, and again, escaped once more, in the text block that
mirrors ``structuredContent``: 64 MiB of NUL was an 872 MB answer (13x), random bytes 8x, and
invalid UTF-8 peaked at 7.5x the output in the server's RSS (issue 27). Such a stream now
travels once, as base64 (4/3 of its bytes), in ``raw_base64``; ``raw`` is empty, and the
answer's text block is a short summary (``parism.server.tools.tool_result``).

What counts as binary (:func:`is_binary`): more than one byte in :data:`BINARY_SHARE` (1/20),
and more than :data:`BINARY_FLOOR` (8) bytes, is a control byte JSON must escape (C0 but tab, newline, carriage return) or part of an invalid
UTF-8 sequence. Below that a stream stays text, its few bad bytes as U+FFFD (their cost is then
bounded: 2x the bytes plus at most 13/20), so "mostly text" keeps being read as text. The scan
reads the bytes in :data:`SCAN` pieces and copies none of them whole.

Masking (:func:`mask_binary`): secrets are masked on the bytes read as Latin-1 — one character
per byte, so every span is a byte range and ASCII secrets are found exactly as in text; the
masked bytes are what is encoded. A redaction pattern that cannot finish withholds
the stream (fail closed), as for text. A marker character outside Latin-1 is written as ``?``.

RE2 searches the bytes themselves (``Redactor.find``'s ``subject``: its spans are byte offsets,
which are the Latin-1 text's character offsets), so no UTF-8 copy of the text is made — it
would be two bytes for each byte >= 0x80. Read that way RE2 sees what it sees in decoded text:
valid UTF-8 sequences as one character, an invalid byte as one.

Memory (``tests/e2e/test_mcp_binary.py``): the bytes and their Latin-1 text while they are
searched (2x), then the masked bytes and their base64 pieces, then the base64 (joined once, then
made a str): about 2.7x the stream at the peak for NUL, random and invalid UTF-8 alike, never
the 13x of escaped text.
"""

from __future__ import annotations

import binascii
import codecs
from collections.abc import Callable
from dataclasses import dataclass

SCAN = 1 << 20  # bytes looked at (and decoded, for the UTF-8 count) at a time
BINARY_SHARE = 20  # more than len // BINARY_SHARE bad bytes: binary ...
BINARY_FLOOR = 8  # ... and more than this many (``printf 'a\377b'`` stays text)
B64_PIECE = 3 * (1 << 18)  # 768 KiB in, 1 MiB of base64 out (a multiple of 3: no padding inside)

#: C0 control bytes JSON writes as ``\\u00XX``: all but tab, newline and carriage return.
CONTROLS = bytes(b for b in range(0x20) if b not in (0x09, 0x0A, 0x0D))


def controls(data: bytes) -> int:
    """How many bytes of ``data`` are :data:`CONTROLS` (counted a piece at a time)."""
    view = memoryview(data)
    found = 0
    for at in range(0, len(view), SCAN):
        piece = view[at:at + SCAN]
        found += len(piece) - len(bytes(piece).translate(None, CONTROLS))
    return found


def invalid_utf8(data: bytes, stop_after: int) -> int:
    """How many characters of ``data`` decode to U+FFFD (each maximal invalid subpart is one),
    decoding a piece at a time; stops counting once past ``stop_after``."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    view = memoryview(data)
    found = 0
    for at in range(0, len(view), SCAN):
        found += decoder.decode(view[at:at + SCAN], final=at + SCAN >= len(view)).count("\ufffd")
        if found > stop_after:
            break
    return found


def is_binary(data: bytes) -> bool:
    """More than one byte in :data:`BINARY_SHARE` (and more than :data:`BINARY_FLOOR` bytes) a
    control byte or invalid UTF-8."""
    allowed = max(len(data) // BINARY_SHARE, BINARY_FLOOR)
    bad = controls(data)
    if bad > allowed:
        return True
    try:
        data.decode("utf-8")  # the common case: valid text (a failure comes at the first bad byte)
        return False
    except UnicodeDecodeError:
        pass
    return bad + invalid_utf8(data, allowed - bad) > allowed


@dataclass
class MaskedBytes:
    base64: str
    size: int  # bytes encoded (after masking)
    count: int  # secrets masked
    withheld_reason: str | None = None
    fallback_ran: bool = False


def mask_binary(take: Callable[[], bytes], mask: Callable[[str, bytes], object]) -> MaskedBytes:
    """Mask and encode the stream ``take()`` hands over (the caller keeps no reference to it).
    ``mask(text, subject)`` is ``Redactor.mask``: ``text`` the bytes read as Latin-1, ``subject``
    the bytes, which RE2 searches as they are (no UTF-8 copy of ``text``: two bytes for each
    byte >= 0x80)."""
    data = take()
    text = data.decode("latin-1")
    masked = mask(text, data)
    del text, data
    withheld = getattr(masked, "withheld_reason", None)
    fallback = bool(getattr(masked, "fallback_ran", False))
    if withheld is not None:
        return MaskedBytes("", 0, 0, withheld, fallback)
    count = int(getattr(masked, "count", 0))
    data = str(getattr(masked, "text")).encode("latin-1", "replace")
    del masked
    size = len(data)
    pieces = _base64_pieces(data)
    del data  # the bytes go before the pieces are joined: at most two of the three alive
    joined = b"".join(pieces)
    del pieces
    return MaskedBytes(joined.decode("ascii"), size, count, None, fallback)


def _base64_pieces(data: bytes) -> list[bytes]:
    view = memoryview(data)
    try:
        return [binascii.b2a_base64(view[at:at + B64_PIECE], newline=False) for at in range(0, len(view), B64_PIECE)]
    finally:
        view.release()


def encode(data: bytes) -> str:
    """``base64.b64encode(data).decode("ascii")``, built from pieces (what :func:`mask_binary` does)."""
    return b"".join(_base64_pieces(data)).decode("ascii")
