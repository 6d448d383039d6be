"""The top-level id of a request line, read without decoding it (issue 23 class 8): whatever
the line nests or holds below the top level, a request whose id can be read is answered with
that id.  The oracle is :func:`json.loads` of the generated object (the id the client wrote),
never Parism's own output."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from parism.server import jsonrpc
from parism.server.jsonrpc import UNREADABLE, top_level_id

INVALID_REQUEST, INVALID_PARAMS, PARSE_ERROR = -32600, -32602, -32700

TEXT = st.text(alphabet=st.sampled_from('ab"\\[]{},: \t\u00e9\u2028\U0001f600'), max_size=8)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=15)
IDS = st.integers(-(10**30), 10**30) | st.text(max_size=30)
SEPARATORS = st.sampled_from([(",", ":"), (", ", ": "), (" ,\t", " :\n")])


def line_of(members: list[tuple[str, Any]], separators: tuple[str, str], indent: int | None) -> bytes:
    """An object with exactly these members in this order (duplicates kept)."""
    item, key = separators
    parts = [json.dumps(k) + key + json.dumps(v, separators=separators, indent=indent) for k, v in members]
    return ("{" + item.join(parts) + "}").encode()


@settings(max_examples=400, deadline=None)
@given(rid=IDS, before=st.lists(st.tuples(TEXT, JSON), max_size=3), after=st.lists(st.tuples(TEXT, JSON), max_size=3),
       separators=SEPARATORS, indent=st.none() | st.integers(0, 2))
def test_the_id_read_lexically_is_the_id_the_decoder_reads(rid: Any, before: list[tuple[str, Any]],
                                                           after: list[tuple[str, Any]],
                                                           separators: tuple[str, str], indent: int | None) -> None:
    members = [(k, v) for k, v in before if k != "id"] + [("id", rid), ("method", "ping")]
    members += [(k, v) for k, v in after if k != "id"]
    line = line_of(members, separators, indent)
    decoded = json.loads(line)
    assert decoded["id"] == rid
    assert top_level_id(line) == rid


@settings(max_examples=200, deadline=None)
@given(rid=IDS, params=JSON, cut=st.integers(1, 10_000))
def test_a_line_cut_short_has_no_readable_id(rid: Any, params: Any, cut: int) -> None:
    line = line_of([("jsonrpc", "2.0"), ("method", "x"), ("params", params), ("id", rid)], (",", ":"), None)
    prefix = line[:max(1, len(line) - cut)]
    assert top_level_id(prefix) is UNREADABLE


@settings(max_examples=200, deadline=None)
@given(first=IDS, last=IDS, middle=JSON)
def test_a_duplicate_id_reads_as_the_last_one_as_the_decoder_does(first: Any, last: Any, middle: Any) -> None:
    line = line_of([("id", first), ("method", "m"), ("p", middle), ("id", last)], (",", ":"), None)
    assert json.loads(line)["id"] == last
    assert top_level_id(line) == last


@given(rid=IDS)
def test_no_method_no_id_and_not_one_object_are_unreadable(rid: Any) -> None:
    assert top_level_id(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode()) is UNREADABLE  # a response
    assert top_level_id(json.dumps({"jsonrpc": "2.0", "method": "m"}).encode()) is UNREADABLE  # a notification
    one = json.dumps({"id": rid, "method": "m"}).encode()
    assert top_level_id(one + b" x") is UNREADABLE and top_level_id(one + one) is UNREADABLE
    assert top_level_id(b"[" + one + b"]") is UNREADABLE


def test_ids_that_cannot_be_echoed_are_unreadable() -> None:
    for token in (b"1.5", b"true", b"null", b"01", b"1e3", b'"\\ud800"', b"[1]", b'{"a":1}',
                  b"9" * 65, json.dumps("i" * (jsonrpc.MAX_ID_CHARS + 1)).encode()):
        assert top_level_id(b'{"method":"m","id":' + token + b"}") is UNREADABLE, token
    assert top_level_id(b'{"method":"m","\\u0069d":"escaped"}') == "escaped"  # the key as the decoder reads it


def deep_call(rid: bytes, depth: int, first: bool) -> bytes:
    args = b"[" * depth + b"]" * depth
    body = b'"jsonrpc":"2.0","method":"tools/call","params":{"name":"run","arguments":{"cmd":"ls","args":' + args + b"}}"
    return b"{" + (b'"id":' + rid + b"," + body if first else body + b',"id":' + rid) + b"}"


def test_100000_nested_arrays_are_refused_with_their_own_id() -> None:
    for first in (True, False):
        for blank in (b"", b" "):
            line = deep_call(b'"deep"', 100_000, first).replace(b"[[", b"[" + blank + b"[")
            refusal = jsonrpc.read(line)
            assert isinstance(refusal, jsonrpc.Refusal)
            assert (refusal.id, refusal.code) == ("deep", INVALID_REQUEST), refusal
            assert "nested deeper" in refusal.message and len(refusal.message) < 200


def test_numbers_beyond_the_documented_size_are_invalid_params_with_the_id() -> None:
    def page(value: bytes) -> bytes:
        return (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"run_paged",'
                b'"arguments":{"cmd":"ls","page":' + value + b"}}}")

    for value in (b"7" * 5000, b"7" * (jsonrpc.MAX_NUMBER_CHARS + 1), b"1e400", b"-1e400",
                  b"0." + b"1" * jsonrpc.MAX_NUMBER_CHARS):
        refusal = jsonrpc.read(page(value))
        assert isinstance(refusal, jsonrpc.Refusal), value[:20]
        assert (refusal.id, refusal.code) == (9, INVALID_PARAMS), (value[:20], refusal)
    at_bound = jsonrpc.read(page(b"7" * jsonrpc.MAX_NUMBER_CHARS))
    assert not isinstance(at_bound, jsonrpc.Refusal)  # the tool answers it (a page out of range)


def test_an_undecodable_request_keeps_its_id_and_an_unreadable_one_gets_null() -> None:
    nan = jsonrpc.read(b'{"jsonrpc":"2.0","id":8,"method":"ping","params":{"a":NaN}}')
    bad_utf8 = jsonrpc.read(b'{"jsonrpc":"2.0","id":"u","method":"ping","params":{"a":"\xff"}}')
    garbage = jsonrpc.read(b'{"jsonrpc":"2.0","id":8,"method":"ping"} x')
    response = jsonrpc.read(b'{"jsonrpc":"2.0","id":900,"result":NaN}')
    assert isinstance(nan, jsonrpc.Refusal) and (nan.id, nan.code) == (8, PARSE_ERROR)
    assert isinstance(bad_utf8, jsonrpc.Refusal) and (bad_utf8.id, bad_utf8.code) == ("u", PARSE_ERROR)
    assert isinstance(garbage, jsonrpc.Refusal) and (garbage.id, garbage.code) == (None, PARSE_ERROR)
    assert isinstance(response, jsonrpc.Refusal) and response.id is None  # never a client's own id space


def test_past_the_token_budget_the_id_is_read_from_the_start_or_the_end_only() -> None:
    wide = b"[" + b",".join([b"[{}]"] * (jsonrpc.MAX_SCAN_TOKENS + 10)) + b",NaN]"
    head = jsonrpc.read(b'{"jsonrpc":"2.0","id":"h","method":"x","params":' + wide + b"}")
    tail = jsonrpc.read(b'{"jsonrpc":"2.0","method":"x","params":' + wide + b',"id":"t"}')
    middle = jsonrpc.read(b'{"jsonrpc":"2.0","method":"x","params":' + wide + b',"id":"m","pad":' + wide + b"}")
    assert isinstance(head, jsonrpc.Refusal) and head.id == "h"
    assert isinstance(tail, jsonrpc.Refusal) and tail.id == "t"
    assert isinstance(middle, jsonrpc.Refusal) and middle.id is None  # documented: past the budget
