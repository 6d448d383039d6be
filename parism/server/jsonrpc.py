"""Parism's reading of one JSON-RPC line, in front of the SDK: every request with an id is either
handed on as a message the SDK will answer, or refused here with the error it is owed.

Why our own reader: the SDK's stdio transport (``mcp/server/stdio.py``, ``stdin_reader``) sends
a line that fails ``jsonrpc_message_adapter.validate_json`` to the session as an exception item,
and the dispatcher (``mcp/shared/jsonrpc_dispatcher.py``, ``_dispatch``) only logs it at DEBUG —
so a client waiting on that id waits forever.  Worse, ``{"id": 1.5, "method": …}`` or ``{"id":
null, "method": …}`` validate as *notifications* (the id is an ignored extra key) and are dropped
without a word.  JSON-RPC 2.0 §5 and MCP (batches removed in 2025-06-18) say what is owed:

- ``-32700``: not one JSON value in UTF-8 (a BOM, trailing garbage, a truncated line, ``NaN``);
- ``-32600``: a batch, not an object, ``jsonrpc`` ≠ ``"2.0"``, an id neither string nor
  integer (answered with id null — it cannot be echoed), no or a non-string ``method``, a lone
  surrogate in the method or id, an id longer than :data:`MAX_ID_CHARS`, nesting deeper than the
  decoder takes (:data:`DEPTH_BOUND`);
- ``-32602``: ``params`` not an object, a lone surrogate inside ``params`` (but
  U+DC80–U+DCFF in a ``tools/call``'s ``cmd``, ``args`` and ``cwd``: bytes that are not UTF-8), a number longer
  than :data:`MAX_NUMBER_CHARS` characters or too large for a float;
- ``-32601`` for a method longer than any (the SDK would echo it whole in ``data``);
- nothing for a notification (no ``id`` member), however malformed: it is logged.

A line that cannot be decoded is still answered with its own id whenever that id can be read:
:func:`top_level_id` reads the members of the top-level object lexically — strings and brackets
are counted, nothing below the top level is decoded, no recursion — so a request with 100,000
nested arrays in its arguments, or a 5,000-digit number in them, gets one answer carrying its id
(a client would otherwise wait for it forever).  Only a line whose id truly cannot be read (not
one complete object, no ``method``, an id that is not an echoable string or integer) is
answered with id null.

Error messages are short and never repeat the line (a refused 10 MB request costs < 1 KB).
"""

from __future__ import annotations

import json
import logging
import math
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

#: The depth bound is the JSON decoder's: arrays and objects nested deeper than it takes (its
#: recursion limit, ``sys.getrecursionlimit()`` = 1,000 by default, less the reader's own
#: frames) are refused with -32600 and the line's own id.
DEPTH_BOUND = "the JSON decoder's nesting limit (about 1,000 levels)"

#: Tokens the lexical id reader looks at before it falls back to the line's first and last
#: :data:`KEEP` bytes (as for a request over the size limit): its cost stays bounded (~0.1 s)
#: whatever the line holds.
MAX_SCAN_TOKENS = 100_000
KEEP = 64 * 1024

#: A number written with more characters than this, or a float that overflows to infinity, is
#: refused with -32602 (Python would otherwise spend quadratic time on a huge integer, or
#: refuse one over 4,300 digits as a parse error).
MAX_NUMBER_CHARS = 64

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
        obj = json.loads(line.decode("utf-8"), parse_constant=_not_json, parse_int=_int, parse_float=_float)
    except _NumberTooLarge as exc:
        return _unread(line, INVALID_PARAMS, f"Invalid params: {exc}")
    except RecursionError:
        return _unread(line, INVALID_REQUEST, _TOO_DEEP)
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError included
        return _unread(line, PARSE_ERROR, f"Parse error: {_why(exc)}")
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
        where = _lone_surrogate_at(method, params)
        if where is not None:
            return Refusal(rid, INVALID_PARAMS, "Invalid params: a lone UTF-16 surrogate (\\ud800-\\udfff "
                                                f"without its pair) is not a character{where}")
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


#: The arguments of a command-running tool that are byte strings (docs/envelope.md, "Exact
#: names"): in them a lone surrogate U+DC80–U+DCFF is a byte that is not UTF-8 (``\\udcff`` is
#: 0xff, Python's ``surrogateescape``), passed to the program as that byte.
BYTE_ARGUMENTS = ("cmd", "args", "cwd")
_NOT_A_BYTE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def _lone_surrogate_at(method: str, params: Any) -> str | None:
    """Where ``params`` hold a lone surrogate that is not allowed (None: nowhere): anywhere but
    in a ``tools/call``'s byte arguments, and there any but U+DC80–U+DCFF."""
    arguments = params.get("arguments") if method == "tools/call" and isinstance(params, dict) else None
    if not isinstance(arguments, dict):
        return "" if _has_lone_surrogate(params) else None
    rest = {**params, "arguments": {k: v for k, v in arguments.items() if k not in BYTE_ARGUMENTS}}
    if _has_lone_surrogate(rest):
        return " (only cmd, args and cwd may hold \\udc80-\\udcff: a byte that is not UTF-8)"
    for key in BYTE_ARGUMENTS:
        value = arguments.get(key)
        texts = value if isinstance(value, list) else [value]
        for text in texts:
            if isinstance(text, str) and _NOT_A_BYTE.search(text):
                return f" (in '{key}': only \\udc80-\\udcff, a byte 0x80-0xff that is not UTF-8, can be passed)"
            if not isinstance(text, str) and _has_lone_surrogate(text):  # the options model refuses the type
                return f" (in '{key}')"
    return None


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


class _NumberTooLarge(Exception):
    """A number over :data:`MAX_NUMBER_CHARS` characters, or one no float can hold."""


def _int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise _NumberTooLarge(f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})")
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise _NumberTooLarge(f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})")
    value = float(text)
    if not math.isfinite(value):
        raise _NumberTooLarge(f"{clip(text, 32)} is too large for a number")
    return value


# -- the top-level id of a line that is not decoded ---------------------------------------------

_WS = re.compile(rb"[ \t\n\r]*")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
#: A member's value that is not an array or object: a string, or any run of other characters
#: (``NaN``, a misspelt ``tru``: what the decoder refused is not this reader's business; only
#: the id's own value must be a string or an integer).
_SCALAR = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[^ \t\n\r,:\[\]{}"]+', re.S)
_NESTING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{][\[{ \t\n\r]*|[\]}][\]} \t\n\r]*', re.S)
_INTEGER = re.compile(rb"-?(?:0|[1-9][0-9]*)")

_TOO_DEEP = f"Invalid Request: nested deeper than {DEPTH_BOUND}"

#: What :func:`top_level_id` returns for a line whose id cannot be read.
UNREADABLE: Any = object()


class _Budget(Exception):
    """The lexical reader looked at :data:`MAX_SCAN_TOKENS` tokens."""


def _skip(line: bytes, at: int, budget: list[int]) -> int:
    """The end of the array or object starting at ``line[at]``, found by counting brackets
    outside strings (a run of them, blanks between included, at once: 100,000 nested arrays
    are two steps); -1 when it does not close."""
    level = 0
    for token in _NESTING.finditer(line, at):
        budget[0] -= 1
        if budget[0] < 0:
            raise _Budget
        run = token.group()
        if run[:1] == b'"':
            continue
        brackets = _brackets(run, len(run))
        if run[:1] in b"[{":
            level += brackets
        elif brackets < level:
            level -= brackets
        else:  # this run closes it: after its level-th bracket
            if brackets == len(run):
                return token.start() + level
            low, high = level, len(run)  # the shortest prefix holding ``level`` brackets
            while low < high:
                mid = (low + high) // 2
                low, high = (mid + 1, high) if _brackets(run, mid) < level else (low, mid)
            return token.start() + low
    return -1


def _brackets(run: bytes, end: int) -> int:
    """Brackets in ``run[:end]`` (a run holds brackets and blanks only)."""
    return end - sum(run.count(blank, 0, end) for blank in (b" ", b"\t", b"\n", b"\r"))


def _members(line: bytes) -> dict[str, bytes | None] | None:
    """The top-level object's members as {key: scalar token, or None for an array or object},
    read without decoding anything below the top level; None when the line is not exactly one
    complete object (a duplicate key keeps its last value, as :func:`json.loads` does)."""
    i = _WS.match(line).end()  # type: ignore[union-attr]
    if line[i:i + 1] != b"{":
        return None
    out: dict[str, bytes | None] = {}
    budget = [MAX_SCAN_TOKENS]
    i = _WS.match(line, i + 1).end()  # type: ignore[union-attr]
    if line[i:i + 1] == b"}":
        i += 1
    else:
        while True:
            key = _STRING.match(line, i)
            if key is None:
                return None
            i = _WS.match(line, key.end()).end()  # type: ignore[union-attr]
            if line[i:i + 1] != b":":
                return None
            i = _WS.match(line, i + 1).end()  # type: ignore[union-attr]
            value: bytes | None
            if line[i:i + 1] in (b"[", b"{"):
                i = _skip(line, i, budget)
                if i < 0:
                    return None
                value = None
            else:
                scalar = _SCALAR.match(line, i)
                if scalar is None:
                    return None
                value, i = scalar.group(), scalar.end()
            try:
                name = json.loads(key.group()) if b"\\" in key.group() else key.group()[1:-1].decode("utf-8")
            except ValueError:
                return None
            out[name] = value
            i = _WS.match(line, i).end()  # type: ignore[union-attr]
            if line[i:i + 1] == b",":
                i = _WS.match(line, i + 1).end()  # type: ignore[union-attr]
                continue
            if line[i:i + 1] != b"}":
                return None
            i += 1
            break
    return out if not line[i:].strip(b" \t\n\r") else None


def top_level_id(line: bytes) -> Any:
    """The id of the request ``line`` holds, read lexically (see the module docstring): a
    string or an integer, or :data:`UNREADABLE` — not one complete object, not a request (no
    ``method``), no id, or one that cannot be echoed."""
    try:
        members = _members(line)
    except _Budget:  # too many tokens to read it all: the id at the start or the end
        rid = oversized_id(line[:KEEP], line[-KEEP:])
        return UNREADABLE if rid is None else rid
    if members is None or "method" not in members or members.get("id") is None:
        return UNREADABLE
    token = members["id"]
    assert token is not None
    if token[:1] == b'"':
        try:
            rid = json.loads(token.decode("utf-8"))
            rid.encode("utf-8")  # a lone surrogate cannot be echoed
        except ValueError:  # UnicodeDecodeError and UnicodeEncodeError included
            return UNREADABLE
    elif _INTEGER.fullmatch(token) and len(token) <= MAX_NUMBER_CHARS:
        rid = int(token)
    else:
        return UNREADABLE
    return rid if _valid_id(rid) else UNREADABLE


def _unread(line: bytes, code: int, message: str) -> Refusal:
    """The refusal of a line that was not decoded: with its id when that can be read."""
    rid = top_level_id(line)
    return Refusal(None if rid is UNREADABLE else rid, code, message)


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
    except (ValueError, IndexError, RecursionError):  # the member runs past the head, or nests too deep
        return None
