"""Cursors: where the next page of a retained result starts, bound to the result and the query.

Format (agreed in ``docs/architecture.md``, read by the budget and by ``fetch_result``)::

    c1.<payload>.<tag>
    payload = base64url(JSON {"r": result_id, "q": query_hash, "o": offset})   (no padding)
    tag     = base64url(HMAC-SHA256(process key, "c1." + payload)[:16])

The key is random per process (``secrets.token_bytes``), so a cursor from another server process,
an edited offset or a forged binding fails the tag and is ``cursor_invalid``; a well-signed cursor
of another result or another query is ``cursor_mismatch``. The offset counts rows of the result's
*projected* row array (after where/sort_by/limit), never chosen by the client.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import Any, Literal

PREFIX = "c1."
_KEY = secrets.token_bytes(32)


@dataclass(frozen=True)
class CursorError:
    reason: Literal["cursor_invalid", "cursor_mismatch"]
    message: str


def query_hash(query: dict[str, Any]) -> str:
    """First 16 hex chars of SHA-256 over the canonical JSON of the query (``RunOptions.query()``)."""
    canon = json.dumps(query, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _tag(payload: str) -> str:
    return _b64(hmac.new(_KEY, (PREFIX + payload).encode("ascii"), hashlib.sha256).digest()[:16])


def sign(result_id: str, qhash: str, offset: int) -> str:
    payload = _b64(json.dumps({"r": result_id, "q": qhash, "o": offset}, separators=(",", ":")).encode())
    return f"{PREFIX}{payload}.{_tag(payload)}"


def verify(cursor: str, result_id: str, qhash: str | None = None) -> int | CursorError:
    """The offset the cursor carries, or why it is refused. ``qhash=None``: any query of this
    result (``fetch_result`` re-applies the query stored with the cursor's binding)."""
    invalid = CursorError("cursor_invalid", "the cursor is not one this server issued (tampered, truncated or from another process)")
    if not isinstance(cursor, str) or not cursor.startswith(PREFIX) or cursor.count(".") != 2:
        return invalid
    payload, tag = cursor[len(PREFIX):].split(".")
    if not hmac.compare_digest(tag, _tag(payload)):
        return invalid
    try:
        data = json.loads(_unb64(payload))
        rid, q, off = data["r"], data["q"], data["o"]
    except (ValueError, KeyError, TypeError):
        return invalid
    if not isinstance(off, int) or isinstance(off, bool) or off < 0:
        return invalid
    if rid != result_id:
        return CursorError("cursor_mismatch", f"the cursor belongs to another result, not {result_id}")
    if qhash is not None and q != qhash:
        return CursorError("cursor_mismatch", "the cursor was issued for a different query (projection or budget)")
    return off


def query_of(cursor: str) -> str | None:
    """The query hash a (verified) cursor is bound to."""
    try:
        return json.loads(_unb64(cursor[len(PREFIX):].split(".")[0]))["q"]
    except (ValueError, KeyError, TypeError, IndexError):
        return None
