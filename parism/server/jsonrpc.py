"""Parism's reading of one JSON-RPC line, in front of the SDK: every request with an id is either
handed on as a message the SDK will answer, or refused here with the error it is owed.

Why our own reader: the SDK's stdio transport (``mcp/server/stdio.py``, ``stdin_reader``) sends
a line that fails ``jsonrpc_message_adapter.validate_json`` to the session as an exception item,
and the dispatcher (``mcp/shared/jsonrpc_dispatcher.py``, ``_dispatch``) only logs it at DEBUG —
so a client waiting on that id waits forever.  Worse, ``{"id": 1.5, "method": …}`` or ``{"id":
null, "method": …}`` validate as *notifications* (the id is an ignored extra key) and are dropped
without a word.  JSON-RPC 2.0 §5 and MCP (batches removed in 2025-06-18) say what is owed:

- ``-32700`` (id null): not one JSON value in UTF-8 (a BOM, trailing garbage, a truncated line,
  ``NaN``, nesting deeper than the decoder goes);
- ``-32600``: a batch, not an object, ``jsonrpc`` ≠ ``"2.0"``, an id neither string nor
  integer (answered with id null — it cannot be echoed), no or a non-string ``method``, a lone
  surrogate in the method or id, an id longer than :data:`MAX_ID_CHARS`;
- ``-32602``: ``params`` not an object, or a lone surrogate inside ``params``;
- ``-32601`` for a method longer than any (the SDK would echo it whole in ``data``);
- nothing for a notification (no ``id`` member), however malformed: it is logged.

Error messages are short and never repeat the line (a refused 10 MB request costs < 1 KB).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
)
from mcp_types.jsonrpc import jsonrpc_message_adapter
from pydantic import ValidationError

from parism.wire.clip import clip

log = logging.getLogger("parism.server.wire")

RequestId = int | str

#: A longer string id is refused (it would have to be echoed in the answer).
MAX_ID_CHARS = 1024

#: No method is longer; the SDK would echo a longer one whole in its -32601 ``data``.
MAX_METHOD_CHARS = 128

#: ``\uD800``–``\uDFFF`` escapes: only a line with one can hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abAB-fF]")


@dataclass(frozen=True)
class Refusal:
    """A request (or an unreadable line) answered here, never seen by the SDK."""

    id: RequestId | None
    code: int
    message: str

    def response(self) -> JSONRPCError:
        return JSONRPCError(jsonrpc="2.0", id=self.id, error=ErrorData(code=self.code, message=self.message))


def read(line: bytes) -> JSONRPCMessage | Refusal | None:
    """What one line of the wire is: a message for the SDK, a refusal to send back, or nothing
    to answer (a blank line, a malformed notification or response — logged)."""
    if not line.strip():
        return None
    try:
        obj = json.loads(line.decode("utf-8"), parse_constant=_not_json)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError included
        return Refusal(None, PARSE_ERROR, f"Parse error: {_why(exc)}")
    if isinstance(obj, list):
        return Refusal(None, INVALID_REQUEST, "Invalid Request: batches are not supported (MCP 2025-06-18)")
    if not isinstance(obj, dict):
        return Refusal(None, INVALID_REQUEST, f"Invalid Request: a message is an object, got {_kind(obj)}")
    if "method" not in obj:
        return _not_a_request(obj)
    if "id" not in obj:
        return _notification(obj, line)
    return _request(obj, line)


def _request(obj: dict[str, Any], line: bytes) -> JSONRPCMessage | Refusal:
    rid = obj["id"]
    if not _valid_id(rid):
        why = "too long" if isinstance(rid, str) else f"{_kind(rid)}, not a string or an integer"
        return Refusal(None, INVALID_REQUEST, f"Invalid Request: id is {why}")
    if obj.get("jsonrpc") != "2.0":
        return Refusal(rid, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    method = obj["method"]
    if not isinstance(method, str):
        return Refusal(rid, INVALID_REQUEST, f"Invalid Request: method is {_kind(method)}, not a string")
    if len(method) > MAX_METHOD_CHARS:
        return Refusal(rid, METHOD_NOT_FOUND, f"Method not found: {clip(method, 64)}")
    params = obj.get("params")
    if params is not None and not isinstance(params, dict):
        return Refusal(rid, INVALID_PARAMS, f"Invalid params: params must be an object, got {_kind(params)}")
    if _SURROGATE_ESCAPE.search(line):
        if _has_lone_surrogate(rid):  # not echoable: it cannot be written as UTF-8
            return Refusal(None, INVALID_REQUEST, "Invalid Request: a lone UTF-16 surrogate in the id")
        if _has_lone_surrogate(method):
            return Refusal(rid, INVALID_REQUEST, "Invalid Request: a lone UTF-16 surrogate in the method")
        if _has_lone_surrogate(params):
            return Refusal(rid, INVALID_PARAMS, "Invalid params: a lone UTF-16 surrogate (\\ud800-\\udfff "
                                                "without its pair) is not a character")
    try:
        return jsonrpc_message_adapter.validate_python(obj, by_name=False)
    except ValidationError as exc:
        return Refusal(rid, INVALID_REQUEST, f"Invalid Request: {exc.error_count()} field error(s)")


def _notification(obj: dict[str, Any], line: bytes) -> JSONRPCMessage | None:
    method = clip(str(obj.get("method")), 64)
    if obj.get("jsonrpc") != "2.0" or not isinstance(obj["method"], str):
        log.info("dropped a malformed notification (%s)", method)
        return None
    params = obj.get("params")
    if (params is not None and not isinstance(params, dict)) or (
            _SURROGATE_ESCAPE.search(line) and _has_lone_surrogate(obj)):
        log.info("dropped notification %s: params not an object or not valid Unicode", method)
        return None
    try:
        return jsonrpc_message_adapter.validate_python(obj, by_name=False)
    except ValidationError:
        log.info("dropped a malformed notification (%s)", method)
        return None


def _not_a_request(obj: dict[str, Any]) -> JSONRPCMessage | Refusal | None:
    """No ``method``: a client's response to a server request, or an invalid request."""
    rid = obj.get("id")
    if "id" in obj and ("result" in obj or "error" in obj):
        try:
            return jsonrpc_message_adapter.validate_python(obj, by_name=False)
        except ValidationError:
            log.info("dropped a malformed response (id %s)", clip(repr(rid), 64))
            return None  # a response is never answered
    return Refusal(rid if _valid_id(rid) else None, INVALID_REQUEST, "Invalid Request: no method")


def _valid_id(rid: Any) -> bool:
    if isinstance(rid, bool):
        return False
    return isinstance(rid, int) or (isinstance(rid, str) and len(rid) <= MAX_ID_CHARS)


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a parsed JSON value holds a string that is not valid Unicode."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 (byte {exc.start})"
    return clip(str(exc), 120)


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "an integer",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


# -- requests over the size limit -------------------------------------------------------------

_TAIL_ID = re.compile(rb',\s*"id"\s*:\s*(-?\d{1,40}|"(?:[^"\\]|\\.){0,1024}")\s*}\s*$')


def oversized_id(head: bytes, tail: bytes) -> RequestId | None:
    """The id of a request too large to read, from its first and last bytes: a top-level ``id``
    member before the first value that does not fit in ``head``, or the object's last member."""
    rid = _leading_id(head)
    if rid is None:
        found = _TAIL_ID.search(tail)
        if found is not None:
            try:
                rid = json.loads(found.group(1))
            except ValueError:
                return None
    return rid if _valid_id(rid) else None


def _leading_id(head: bytes) -> Any:
    text = head.decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")
    try:
        i = ws.match(text, 0).end()  # type: ignore[union-attr]
        if text[i] != "{":
            return None
        i += 1
        while True:
            i = ws.match(text, i).end()  # type: ignore[union-attr]
            key, i = decoder.raw_decode(text, i)
            i = ws.match(text, i).end()  # type: ignore[union-attr]
            if text[i] != ":":
                return None
            i = ws.match(text, i + 1).end()  # type: ignore[union-attr]
            value, i = decoder.raw_decode(text, i)
            if key == "id":
                return value
            i = ws.match(text, i).end()  # type: ignore[union-attr]
            if text[i] != ",":
                return None
            i += 1
    except (ValueError, IndexError):  # the member runs past the head
        return None
