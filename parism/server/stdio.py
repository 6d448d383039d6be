"""Parism's stdio transport: the SDK's session on one side, the wire on the other, and every
line read by :mod:`parism.server.jsonrpc` before the SDK sees it.

It replaces ``mcp.server.stdio.stdio_server`` (whose reader drops what it cannot validate, see
:mod:`parism.server.jsonrpc`) and keeps what that transport does right: while serving, fd 0 reads
``/dev/null`` and fd 1 is stderr, so a child or a stray ``print`` can never write into the
protocol stream.  What it adds:

- a line over ``max_request_bytes`` is not kept: it is answered ``-32600`` with its own id as
  soon as the limit is crossed when the id comes first (as every SDK writes it), else once the
  line ends, and the rest is read in 1 MiB pieces and dropped;
- each answer is serialised once; one with long strings, or too large for the pipe's free
  room, is written in a worker thread (a 64 MiB answer does not stall the event loop), the
  others on the loop, where a write that cannot block is cheaper than the hop; its long strings (a tool result's text block, ``stdout.raw``) are escaped
  and written 1 MiB at a time instead of becoming one more whole copy, a text block that
  mirrors ``structuredContent`` (:data:`STRUCTURED_TEXT`) is written from the one
  serialisation of it, and the freed heap is handed back to the system (``malloc_trim``)
  after a large answer;
- ``on_eof`` is called when the client closes stdin, so the server can bound its exit time.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import secrets
import sys
import termios
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST, JSONRPCResponse
from mcp_types import methods as _methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic_core import to_json

from parism.server import fastpath, host
from parism.server import jsonrpc
from parism.server.jsonrpc import Refusal

log = logging.getLogger("parism.server.wire")

CHUNK = 1 << 20  # bytes read at a time from a long line
KEEP = 64 * 1024  # bytes kept of an oversized line's start and end, to find its id


@dataclass(frozen=True)
class _Oversized:
    size: int
    tail: bytes
    answered: bool


class _Eof:
    pass


EOF = _Eof()


def _too_large(rid: jsonrpc.RequestId | None, limit: int) -> Refusal:
    return Refusal(rid, INVALID_REQUEST,
                   f"Request too large: over server.max_request_bytes ({limit} bytes); it was not read")


def _next(stream: BinaryIO, limit: int, early: Callable[[bytes], bool]) -> Any:
    """One line off the wire (worker thread): a message, a refusal, None, an oversized line's
    summary or EOF.  ``early(head)`` is called once when a line crosses ``limit``."""
    parts: list[bytes] | None = []
    size = 0
    tail = b""
    answered = False
    while True:
        piece = stream.readline(CHUNK)
        if not piece:
            break
        size += len(piece)
        if parts is not None:
            parts.append(piece)
            if size > limit:
                joined = b"".join(parts)
                parts = None
                answered = early(joined[:KEEP])
                tail = joined[-KEEP:]
                del joined
        else:
            tail = (tail + piece)[-KEEP:]
        if piece.endswith(b"\n"):
            break
    if size == 0:
        return EOF
    if parts is None:
        return _Oversized(size, tail, answered)
    return jsonrpc.read(b"".join(parts))


#: A string longer than this is written in slices of this many characters.
SLICE = 1 << 20

#: An answer at least this large is followed by ``malloc_trim``: glibc otherwise keeps the
#: freed heap (measured: RSS stayed 69 MB up after one 64 MiB answer; with it, back to start).
TRIM_AFTER = 8 << 20


_TOKEN = secrets.token_hex(8)
_SLOT = f"\x00parism-{_TOKEN}-{{}}\x00"  # a placeholder no output can forge
_SLOT_JSON = re.compile(re.escape(to_json(_SLOT.format("KEY"))).replace(b"KEY", rb"(\d+|text|structured)"))

#: A tool result's text block that says "the JSON of my ``structuredContent``": the writer
#: serialises the structured content once and writes it twice, as itself and escaped into the
#: block, instead of the server building the text as one more string (a 64 MiB output's text
#: block was a 65 MB string next to the output, plus a 65 MB bytes copy while it was made).
#: The bytes are exactly those of the answer with the text built eagerly.
STRUCTURED_TEXT = _SLOT.format("text")

#: What a handler returns for a call whose answer was already written (:meth:`Wire.answer_now`):
#: the SDK turns it into its own answer for the id, which the writer drops unwritten.
ANSWERED = {"content": [], "isError": False, "resultType": "complete", "_meta": {"parism/answered": _TOKEN}}


def _already_answered(message: Any) -> bool:
    result = getattr(message, "result", None)
    meta = result.get("_meta") if isinstance(result, dict) else None
    return isinstance(meta, dict) and meta.get("parism/answered") == _TOKEN


def _take(message: Any) -> tuple[list[str], dict[str, Any] | None]:
    """Take a tool result's long strings out of ``message`` (the writer owns it now), leaving
    placeholders: the text blocks and ``structuredContent.{stdout,stderr}.{raw,raw_base64}``; and, when a
    text block is :data:`STRUCTURED_TEXT`, the structured content itself (returned)."""
    result = getattr(message, "result", None)
    if not isinstance(result, dict):
        return [], None
    holders: list[tuple[dict[str, Any], str]] = [
        (item, "text") for item in result.get("content") or () if isinstance(item, dict)]
    structured = result.get("structuredContent")
    if not isinstance(structured, dict):
        structured = None
    else:
        holders += [(out, key) for out in (structured.get("stdout"), structured.get("stderr"))
                    if isinstance(out, dict) for key in ("raw", "raw_base64")]
    taken: list[str] = []
    for holder, key in holders:
        value = holder.get(key)
        if isinstance(value, str) and len(value) > SLICE and value != STRUCTURED_TEXT:
            holder[key] = _SLOT.format(len(taken))
            taken.append(value)
    if structured is None or not any(holder.get(key) == STRUCTURED_TEXT for holder, key in holders):
        return taken, None
    result["structuredContent"] = _SLOT.format("structured")
    return taken, structured


def _pieces(message: Any) -> Iterator[bytes]:
    """The message's JSON in pieces whose concatenation is exactly its one-shot serialisation
    (with a :data:`STRUCTURED_TEXT` block holding the JSON of the structured content)."""
    taken, structured = _take(message)
    return _expanded(*_serialised(message, structured), taken)


def _serialised(message: Any, structured: dict[str, Any] | None) -> tuple[bytes, bytes | None]:
    """The JSON of the message (placeholders in it) and of the structured content a text block
    mirrors (None: no such block); or an internal error for the message's id."""
    try:
        return _dump(message), to_json(structured) if structured is not None else None
    except ValueError as exc:  # pydantic_core.PydanticSerializationError is a ValueError
        return _internal_error(message, exc), None


def _expanded(data: bytes, mirror: bytes | None, taken: list[str]) -> Iterator[bytes]:
    """``data`` with its placeholders filled in (the mirror is only scanned for them when
    long strings were taken out of it)."""
    if mirror is None and not taken:
        yield data
        return

    def long(key: str) -> Iterator[bytes]:
        return _json_string(taken[int(key)])

    def inner() -> Iterator[bytes]:
        assert mirror is not None
        return _spliced(mirror, long) if taken else iter((mirror,))

    def expand(key: str) -> Iterator[bytes]:  # not recursive: a closure cycle would keep ``taken``
        if key == "structured":
            return inner()
        if key == "text":
            return _quoted(_escaped(inner()))
        return long(key)

    yield from _spliced(data, expand)


def _spliced(data: bytes, expand: Callable[[str], Iterator[bytes]]) -> Iterator[bytes]:
    """``data`` with each placeholder's JSON string replaced by ``expand(key)``."""
    at = 0
    for slot in _SLOT_JSON.finditer(data):
        yield data[at:slot.start()]
        yield from expand(slot.group(1).decode())
        at = slot.end()
    yield data[at:]


def _json_string(text: str) -> Iterator[bytes]:
    """``to_json(text)``, :data:`SLICE` characters at a time."""
    yield b'"'
    for start in range(0, len(text), SLICE):
        yield to_json(text[start:start + SLICE])[1:-1]
    yield b'"'


def _quoted(pieces: Iterator[bytes]) -> Iterator[bytes]:
    yield b'"'
    yield from pieces
    yield b'"'


def _escaped(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """UTF-8 JSON pieces escaped again as the inside of a JSON string, :data:`SLICE` bytes at a
    time (cut at character boundaries)."""
    for piece in pieces:
        view = memoryview(piece)
        at = 0
        while at < len(view):
            end = min(at + max(SLICE, 4), len(view))  # 4: the longest UTF-8 character
            while end < len(view) and view[end] & 0xC0 == 0x80:  # inside a character
                end -= 1
            yield to_json(str(view[at:end], "utf-8"))[1:-1]
            at = end


def _dump(message: Any) -> bytes:
    return type(message).__pydantic_serializer__.to_json(message, by_alias=True, exclude_unset=True)


def _internal_error(message: Any, exc: ValueError) -> bytes:
    """A message that cannot be written (a lone surrogate in a result) becomes an internal
    error for its id rather than ending the writer."""
    log.error("an answer could not be serialised (%s): sent as an internal error", type(exc).__name__)
    rid = getattr(message, "id", None)  # ids were checked by the reader: always writable
    error = Refusal(rid, INTERNAL_ERROR, "Internal error: the answer could not be written as UTF-8 JSON")
    return _dump(error.response())


#: A write to a pipe the client closed (its reading end): the client is gone, not an error of ours.
GONE = (BrokenPipeError, ConnectionResetError)


def _write(out: BinaryIO, pieces: Iterable[bytes]) -> int:
    """Write one answer (worker thread); returns its size in bytes."""
    size = 0
    for piece in pieces:
        out.write(piece)
        size += len(piece)
    out.write(b"\n")
    out.flush()
    return size


def _room(fd: int) -> int:
    """Bytes the pipe ``fd`` takes now without blocking (0 when it is not a pipe)."""
    try:
        unread = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) - int.from_bytes(unread, sys.byteorder, signed=True)
    except OSError:
        return 0


async def _send(wire: Wire, message: Any) -> int:
    """Write one answer.  Without long strings it is serialised on the event loop (the SDK has
    just dumped the same content there, twice) and, when it fits in the pipe now, written
    there too: a write that cannot block costs less than the hop to a worker thread (~0.13 ms
    CPU per call).  Otherwise the answer is serialised and written in a worker thread, in pieces."""
    taken, structured = _take(message)
    if taken:
        return await anyio.to_thread.run_sync(_write_message, wire, message, structured, taken)
    data, mirror = _serialised(message, structured)
    del message, structured
    size = wire.write_if_room(data, mirror)
    if size is not None:
        return size
    return await anyio.to_thread.run_sync(_write_locked, wire, _expanded(data, mirror, taken))


def _write_locked(wire: Wire, pieces: Iterable[bytes]) -> int:
    with wire.lock:
        return _write(wire.sink, pieces)


def _write_message(wire: Wire, message: Any, structured: dict[str, Any] | None, taken: list[str]) -> int:
    return _write_locked(wire, _expanded(*_serialised(message, structured), taken))


def _claim_std_fds() -> tuple[int, int, Callable[[], None]]:
    """Private copies of fd 0 and fd 1 for the wire; fd 0 → /dev/null, fd 1 → stderr."""
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)

    return wire_in, wire_out, restore


@dataclass(frozen=True)
class Hooks:
    """What the server is told besides the stream pair (:mod:`parism.server.early` uses them).

    ``on_message(msg)``: in the reader thread, for each message before the SDK gets it.
    ``on_answer(id)``: on the event loop, before the answer to that id is written."""

    on_eof: Callable[[], None] = lambda: None
    on_message: Callable[[Any], None] | None = None
    on_answer: Callable[[Any], None] | None = None
    on_wire: Callable[["Wire"], None] | None = None  # given the wire once it is open


class Wire:
    """The answer side of the wire, shared by the writer task and :meth:`answer_now` (any
    thread): one lock around every write, so lines never interleave."""

    def __init__(self, sink: BinaryIO) -> None:
        self.sink = sink
        self.lock = threading.Lock()

    def answer_now(self, rid: Any, version: str | None, result: dict[str, Any]) -> bool:
        """Write the answer to request ``rid`` from this thread, as the SDK would have written
        ``result`` for it, if that cannot block: no long string, it fits in the pipe now, and a
        protocol era whose result this serialises exactly (not the 2026-era stamps). False:
        nothing was written (the handler answers as usual)."""
        if version is None or version in MODERN_PROTOCOL_VERSIONS:
            return False
        message = JSONRPCResponse(jsonrpc="2.0", id=rid,
                                  result=_methods.serialize_server_result("tools/call", version, dict(result)))
        taken, structured = _take(message)
        try:
            return not taken and self.write_if_room(*_serialised(message, structured)) is not None
        except GONE:  # the client closed our stdout: the writer says so once (its own write fails too)
            return False

    def write_if_room(self, data: bytes, mirror: bytes | None) -> int | None:
        """Write a serialised answer without long strings (``_serialised``) now if the pipe has
        room for it, so the write cannot block; its size, or None when nothing was written. The
        lock is held only around such a write (or a worker thread's write of a larger answer)."""
        with self.lock:
            if len(data) + 2 * len(mirror or b"") >= _room(self.sink.fileno()):  # the text block: the mirror again
                return None
            line = b"".join(_expanded(data, mirror, [])) + b"\n"
            if len(line) > _room(self.sink.fileno()):
                return None
            self.sink.write(line)
            self.sink.flush()
        return len(line) - 1


@asynccontextmanager
async def stdio_streams(max_request_bytes: int, hooks: Hooks = Hooks()
                        ) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) stream pair a session runs on, served from the process's stdio."""
    wire_in, wire_out, restore = _claim_std_fds()
    # closefd=False: a worker thread may still block on a descriptor when serving ends.
    source = os.fdopen(wire_in, "rb", buffering=1 << 16, closefd=False)
    sink = os.fdopen(wire_out, "wb", closefd=False)
    wire = Wire(sink)
    if hooks.on_wire is not None:
        hooks.on_wire(wire)
    # the SDK's context-carrying streams (parism/server/fastpath.py: checked at start-up)
    create_context_streams = fastpath.context_streams().create_context_streams
    to_sdk, read_stream = create_context_streams[Any](0)
    write_stream, from_sdk = create_context_streams[SessionMessage](0)
    answers = write_stream.clone()

    async def answer(refusal: Refusal) -> None:
        await answers.send(SessionMessage(refusal.response()))

    def early(head: bytes) -> bool:
        rid = jsonrpc.oversized_id(head, b"")
        if rid is None:
            return False
        anyio.from_thread.run(answer, _too_large(rid, max_request_bytes))
        return True

    def next_item() -> Any:  # worker thread
        item = _next(source, max_request_bytes, early)
        if hooks.on_message is not None and not isinstance(item, (Refusal, _Oversized, _Eof)) and item is not None:
            hooks.on_message(item)
        return item

    # The reader's own thread budget: however many calls hold worker threads, the wire is read
    # (a cancellation, a ping, EOF) — with the shared pool's 40 all taken it was not (issue 27).
    reading = anyio.CapacityLimiter(1)

    async def reader() -> None:
        async with to_sdk, answers:
            while True:
                item = await anyio.to_thread.run_sync(next_item, limiter=reading)
                if item is EOF:
                    hooks.on_eof()
                    return
                if isinstance(item, Refusal):
                    await answer(item)
                elif isinstance(item, _Oversized):
                    if not item.answered:
                        await answer(_too_large(jsonrpc.oversized_id(b"", item.tail), max_request_bytes))
                elif item is not None:
                    await to_sdk.send(SessionMessage(item))

    async def writer() -> None:
        gone = False
        async with from_sdk:
            async for session_message in from_sdk:
                message = session_message.message
                del session_message
                if _already_answered(message):
                    continue  # the SDK's answer to a call whose answer is out (Wire.answer_now)
                if gone:
                    continue  # nobody reads our stdout any more: the SDK's messages are dropped
                if hooks.on_answer is not None and (hasattr(message, "result") or hasattr(message, "error")):
                    hooks.on_answer(getattr(message, "id", None))
                try:
                    size = await _send(wire, message)
                except GONE:
                    # issue #26: a client that went away mid-call left a 60-line traceback here
                    log.warning("the client closed the server's stdout: answers cannot be written; exiting")
                    gone = True
                    hooks.on_eof()
                    continue
                del message
                if size >= TRIM_AFTER:
                    host.trim_heap()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            async with write_stream:
                yield read_stream, write_stream
    finally:
        restore()


async def serve_stdio(server: MCPServer, max_request_bytes: int, hooks: Hooks) -> None:
    """``server.run_stdio_async()`` on Parism's transport (the SDK's low-level run loop)."""
    low = fastpath.lowlevel(server)  # the loop run_stdio_async drives; no public seam takes streams
    async with stdio_streams(max_request_bytes, hooks) as (read, write):
        await low.run(read, write, low.create_initialization_options())
