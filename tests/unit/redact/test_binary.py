"""What counts as output that is not text, and its base64 (parism/output/redact/binary.py)."""

from __future__ import annotations

import base64
import os

from parism.output.redact.binary import controls, encode, invalid_utf8, is_binary


def test_text_stays_text() -> None:
    assert not is_binary(b"")
    assert not is_binary(b"a\xffb") and not is_binary(b"\x00" * 8)  # a few bad bytes: at most 8 stay text
    assert is_binary(b"\x00" * 9)
    assert not is_binary("name\tsize\r\nnaïve 日本語\n".encode() * 1000)  # tab, CR, LF are text
    assert not is_binary((b"a" * 95 + b"\xff" * 5) * 100)  # 1 byte in 20 bad: still text
    assert not is_binary((b"a" * 95 + b"\x00" * 5) * 100)


def test_past_one_in_twenty_it_is_binary() -> None:
    assert is_binary((b"a" * 94 + b"\xff" * 6) * 100)
    assert is_binary((b"a" * 94 + b"\x01" * 6) * 100)
    assert is_binary((b"a" * 94 + b"\x00" * 3 + b"\xfe" * 3) * 100)  # both kinds add up
    assert is_binary(bytes(1 << 20))
    assert is_binary(os.urandom(1 << 20))


def test_counts_against_the_bytes() -> None:
    data = b"\x00\x1b\x07\t\n\r\x7f" * 3
    assert controls(data) == 9  # NUL, ESC, BEL; not tab, LF, CR, DEL
    assert invalid_utf8(b"ok\xffok\xc3\xa9\xe2\x82", 100) == 2  # a lone 0xFF, a cut 3-byte sequence
    big = b"\xff" * (3 << 20)  # pieces of 1 MiB: counted across them
    assert invalid_utf8(big, 10 << 20) == 3 << 20
    assert invalid_utf8(big, 5) <= (1 << 20)  # stops counting past the bound


def test_encode_is_base64() -> None:
    for size in (0, 1, 2, 3, 786431, 786432, 786433, 3_000_001):
        data = os.urandom(size)
        assert encode(data) == base64.b64encode(data).decode("ascii")
