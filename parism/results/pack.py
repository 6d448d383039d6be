"""Packing a result for the store without ever building more than the store would keep.

``pack_json(value, limit)`` serialises row by row and stops as soon as ``limit`` bytes are
passed: a 50 MB parsed value costs at most ``limit`` bytes (plus one row) of transient memory
before it is refused, instead of a full dump measured afterwards.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import to_json

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)


def utf8_len(text: str) -> int:
    """UTF-8 length without an encoded copy for ASCII text (the common case)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def pack_json(value: Any, limit: int) -> bytes | int:
    """Compact JSON bytes of ``value``, or the number of bytes reached when ``limit`` was passed.

    Top-level arrays (the rows: nearly all of a large result) are encoded one element at a
    time by pydantic-core's encoder, so the check runs after every row and at most one row
    past the limit is ever built; the rest of the value is small and encoded whole."""
    parts: list[bytes] = []
    size = 0

    def add(data: bytes) -> bool:
        nonlocal size
        size += len(data)
        parts.append(data)
        return size <= limit

    try:
        if isinstance(value, list):
            if not _rows(value, add, b"["):
                return size
        elif isinstance(value, dict):
            add(b"{")
            for n, (k, v) in enumerate(value.items()):
                if not add((b"," if n else b"") + _fast(str(k)) + b":"):
                    return size
                if not (_rows(v, add, b"[") if isinstance(v, list) else add(_fast(v))):
                    return size
            add(b"}")
        elif not add(_fast(value)):
            return size
    except (ValueError, TypeError):  # not JSON data: the slow, exact path
        return _pack_slow(value, limit)
    return b"".join(parts) if size <= limit else size


def _rows(rows: list[Any], add: Any, opening: bytes) -> bool:
    if not add(opening):
        return False
    for n, row in enumerate(rows):
        if not add((b"," if n else b"") + _fast(row)):
            return False
    return add(b"]")


def _fast(value: Any) -> bytes:
    return to_json(value, inf_nan_mode="null")


def _pack_slow(value: Any, limit: int) -> bytes | int:
    parts: list[bytes] = []
    size = 0
    for chunk in _ENCODER.iterencode(_nan_to_null(value)):
        data = chunk.encode("utf-8", "surrogatepass")
        size += len(data)
        if size > limit:
            return size
        parts.append(data)
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
