"""The stdio writer streams a tool result's text block from its ``structuredContent``
(``STRUCTURED_TEXT``) and its long strings in slices: the bytes on the wire must be exactly the
one-shot serialisation of the same answer with the text built eagerly (``tool_result``
without ``text``), whatever the strings hold (quotes, backslashes, control characters,
non-ASCII, astral characters across a slice boundary)."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_types import JSONRPCResponse
from mcp_types.methods import serialize_server_result

from parism.wire.envelope import Envelope, OutputField
from parism.server import stdio
from parism.server.stdio import STRUCTURED_TEXT
from parism.server.tools import tool_result


def envelope(raw: str, err: str, parsed: object = None) -> Envelope:
    return Envelope(ok=True, exitCode=0, cmd="cat", args=["f"], cwd="/tmp", duration_ms=1,
                    stdout=OutputField(raw=raw, parsed=parsed), stderr=OutputField(raw=err))


def response(env: Envelope, text: str | None) -> JSONRPCResponse:
    """What the SDK hands the writer for a tool result (its validated dump of our mapping)."""
    result = serialize_server_result("tools/call", "2025-11-25", tool_result(env, False, text=text))
    return JSONRPCResponse(jsonrpc="2.0", id=7, result=result)


def written(message: JSONRPCResponse) -> bytes:
    out = io.BytesIO()
    stdio._write(out, stdio._pieces(message))
    return out.getvalue()


def one_shot(message: JSONRPCResponse) -> bytes:
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)


@settings(max_examples=150, deadline=None)
@given(raw=TEXT, err=TEXT, short=st.booleans())
def test_streamed_answer_is_the_eager_answer(raw: str, err: str, short: bool) -> None:
    env = envelope(raw, err, parsed={"lines": [raw[:5]], "n": 1.5e-05})
    expected = one_shot(response(env, None))
    with pytest.MonkeyPatch.context() as patch:
        # a tiny slice: the strings are "long" and cut (astral characters included) at many places
        patch.setattr(stdio, "SLICE", 1000 if short else 3)
        got = written(response(env, STRUCTURED_TEXT))
    assert got == expected
    answer = json.loads(got)["result"]
    assert json.loads(answer["content"][0]["text"]) == answer["structuredContent"]
    assert answer["structuredContent"]["stdout"]["raw"] == raw


def test_large_output_text_block() -> None:
    """The real slice size, an output of several slices with every kind of escape."""
    raw = ('a"b\\c\n\t\x01é€😀' * 150_000)  # ~2 MB: cut into slices mid-run
    env = envelope(raw, "warning\n")
    assert written(response(env, STRUCTURED_TEXT)) == one_shot(response(env, None))


def test_unwritable_answer_is_an_internal_error() -> None:
    """A lone surrogate cannot be UTF-8: the answer becomes an internal error for its id."""
    env = envelope("ok", "x", parsed={"name": "\ud800"})
    answer = json.loads(written(response(env, STRUCTURED_TEXT)))
    assert answer["id"] == 7 and answer["error"]["code"] == -32603


def sent(message: JSONRPCResponse, *, prefill: int = 0, hop: bool) -> bytes:
    """What ``_send`` writes into a pipe that already holds ``prefill`` unread bytes, checking
    that it went through a worker thread (``hop``) or not; the pipe is read only after the hop."""
    import os
    import threading

    import anyio
    import anyio.to_thread

    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"x" * prefill)
    hopped = threading.Event()
    real = anyio.to_thread.run_sync

    async def counted(*args: object, **kwargs: object) -> object:
        hopped.set()
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    got = bytearray()

    def drain() -> None:
        hopped.wait(5)  # a write on the loop into a full pipe would block until then
        with os.fdopen(read_fd, "rb") as source:
            got.extend(source.read())

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    with pytest.MonkeyPatch.context() as patch, os.fdopen(write_fd, "wb") as out:
        patch.setattr(anyio.to_thread, "run_sync", counted)
        anyio.run(stdio._send, stdio.Wire(out), message)
    assert hopped.is_set() == hop
    hopped.set()
    reader.join(10)
    return bytes(got[prefill:])


def test_small_answer_is_written_on_the_loop_and_a_large_one_in_a_thread() -> None:
    small = envelope("a\"b\n" * 100, "", parsed={"rows": [{"n": i} for i in range(50)]})
    assert sent(response(small, STRUCTURED_TEXT), hop=False) == one_shot(response(small, None))
    # the same answer into a pipe without room for it: the loop must not block on it
    assert sent(response(small, STRUCTURED_TEXT), prefill=65_000, hop=True) == one_shot(response(small, None))
    large = envelope("é" * (stdio.SLICE + 10), "")  # a long string: always in pieces, in a thread
    assert sent(response(large, STRUCTURED_TEXT), hop=True) == one_shot(response(large, None))


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_the_result_mapping_is_what_the_sdk_made_of_a_call_tool_result(version: str) -> None:
    """The SDK validates our mapping once instead of dumping a CallToolResult first: what it
    sends must be what it sent for the model, in every protocol era (2026-07-28 requires
    resultType), for an answer and for a refusal."""
    from mcp.server.runner import _dump_result
    from mcp.types import CallToolResult, TextContent

    from parism.server.tools import refused
    from parism.wire.options import OptionsError

    env = envelope("x\n", "", parsed={"rows": [{"n": 1}]})
    model = CallToolResult(content=[TextContent(type="text", text="t")], structured_content=env.to_wire(),
                           is_error=False)
    err = OptionsError("cwd", "parameter 'cwd' must be a string")
    refusal = CallToolResult(content=[TextContent(type="text", text=f"invalid arguments for run: {err.text()}")],
                             is_error=True)
    for ours, theirs in ((tool_result(env, False, text="t"), model), (refused("run", err), refusal)):
        sent = serialize_server_result("tools/call", version, _dump_result(ours))
        assert sent == serialize_server_result("tools/call", version, _dump_result(theirs))
