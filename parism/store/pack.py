"""Packing a result for the store without ever building more than the store would keep.

``pack_json(value, limit)`` serialises incrementally (``JSONEncoder.iterencode``) and stops as
soon as ``limit`` bytes are passed: a 50 MB parsed value costs at most ``limit`` bytes of
transient memory before it is refused, instead of a full dump measured afterwards.
"""

from __future__ import annotations

import json
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)


def utf8_len(text: str) -> int:
    """UTF-8 length without an encoded copy for ASCII text (the common case)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def pack_json(value: Any, limit: int) -> bytes | int:
    """Compact JSON bytes of ``value``, or the number of bytes reached when ``limit`` was passed."""
    parts: list[bytes] = []
    size = 0
    try:
        for chunk in _ENCODER.iterencode(value):
            data = chunk.encode("utf-8", "surrogatepass")
            size += len(data)
            if size > limit:
                return size
            parts.append(data)
    except ValueError:  # NaN/inf cannot be JSON: store it as the wire does (null)
        return pack_json(_nan_to_null(value), limit)
    return b"".join(parts)


def unpack_json(data: bytes) -> Any:
    return json.loads(data)


def _nan_to_null(value: Any) -> Any:
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_null(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nan_to_null(v) for v in value]
    return value
