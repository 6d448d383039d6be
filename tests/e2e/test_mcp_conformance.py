"""JSON-RPC conformance of the real server over stdio, raw bytes, no SDK in between (issue 12
item 1): every line that is a request with an id, or cannot be read at all, gets exactly one
well-formed answer with the code JSON-RPC 2.0 / MCP 2025-11-25 ask for; a notification gets none;
and the server then still answers a valid call.

The expected codes come from the JSON-RPC 2.0 specification §5.1 (-32700 parse error, id null;
-32600 invalid request; -32601 method not found; -32602 invalid params) and MCP's tools page
(unknown tool: -32602), not from the server's own earlier output.  Hypothesis generates more
messages with an oracle written from the same rules.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e.rawrpc import RawServer

pytestmark = [pytest.mark.timeout(300)]

PARSE, INVALID, NO_METHOD, PARAMS = -32700, -32600, -32601, -32602


def req(rid: Any, method: str = "ping", **extra: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, **extra}).encode()


def call(rid: Any, name: str, arguments: Any) -> bytes:
    return req(rid, "tools/call", params={"name": name, "arguments": arguments})


# (kind, line, expected): ("error", code, id) | ("result", id) | ("tool_error", id) | None
CORPUS: list[tuple[str, bytes, Any]] = [
    # unreadable lines: -32700, id null
    ("not json", b"hello", ("error", PARSE, None)),
    ("utf-8 bom", b"\xef\xbb\xbf" + req(1), ("error", PARSE, None)),
    ("trailing garbage", req(2) + b" x", ("error", PARSE, None)),
    ("two objects", req(3) + req(4), ("error", PARSE, None)),
    ("truncated", req(5)[:-5], ("error", PARSE, None)),
    # undecodable, but the top-level id can be read: answered with it (issue 23 class 8)
    ("depth 1000 in params", b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"a":'
     + b"[" * 1000 + b"]" * 1000 + b"}}", ("error", INVALID, 6)),
    ("100000 nested arrays in args", b'{"jsonrpc":"2.0","id":60,"method":"tools/call","params":{"name":"run",'
     b'"arguments":{"cmd":"ls","args":' + b"[" * 100_000 + b"]" * 100_000 + b"}}}", ("error", INVALID, 60)),
    ("id after 100000 nested arrays", b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"run",'
     b'"arguments":{"cmd":"ls","args":' + b"[ " * 100_000 + b"] " * 100_000 + b'}},"id":"d61"}',
     ("error", INVALID, "d61")),
    ("5000-digit page", call(62, "run_paged", {"cmd": "ls", "page": 7}).replace(b'"page": 7', b'"page": ' + b"7" * 5000),
     ("error", PARAMS, 62)),
    ("65-digit page", call(63, "run_paged", {"cmd": "ls", "page": 10**64}), ("error", PARAMS, 63)),
    ("64-digit page", call(64, "run_paged", {"cmd": "ls", "page": 10**63}), ("tool_error", 64)),
    ("1e400 page", call(65, "run_paged", {"cmd": "ls", "page": 7}).replace(b'"page": 7', b'"page": 1e400'),
     ("error", PARAMS, 65)),
    ("5000-digit id", b'{"jsonrpc":"2.0","id":' + b"7" * 5000 + b',"method":"ping"}', ("error", PARAMS, None)),
    ("invalid utf-8", b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":"\xff"}}', ("error", PARSE, 7)),
    ("NaN", b'{"jsonrpc":"2.0","id":8,"method":"ping","params":{"a":NaN}}', ("error", PARSE, 8)),
    ("Infinity", b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"a":-Infinity}}', ("error", PARSE, 9)),
    ("NaN in a response", b'{"jsonrpc":"2.0","id":903,"result":{"a":NaN}}', ("error", PARSE, None)),
    ("single quotes", b"{'jsonrpc':'2.0','id':10,'method':'ping'}", ("error", PARSE, None)),
    ("trailing comma", b'{"jsonrpc":"2.0","id":11,"method":"ping",}', ("error", PARSE, None)),
    ("unquoted key", b'{jsonrpc:"2.0","id":12,"method":"ping"}', ("error", PARSE, None)),
    ("lone bracket", b"{", ("error", PARSE, None)),
    ("nul byte", b"\x00", ("error", PARSE, None)),
    # not a request object: -32600
    ("batch", b"[" + req(13) + b"]", ("error", INVALID, None)),
    ("empty batch", b"[]", ("error", INVALID, None)),
    ("depth 1000", b"[" * 1000 + b"]" * 1000, ("error", INVALID, None)),  # a batch, however deep
    ("empty object", b"{}", ("error", INVALID, None)),
    ("null", b"null", ("error", INVALID, None)),
    ("number", b"42", ("error", INVALID, None)),
    ("string", b'"ping"', ("error", INVALID, None)),
    ("true", b"true", ("error", INVALID, None)),
    ("jsonrpc 1.0", json.dumps({"jsonrpc": "1.0", "id": 14, "method": "ping"}).encode(), ("error", INVALID, 14)),
    ("jsonrpc missing", json.dumps({"id": 15, "method": "ping"}).encode(), ("error", INVALID, 15)),
    ("jsonrpc number", json.dumps({"jsonrpc": 2.0, "id": 16, "method": "ping"}).encode(), ("error", INVALID, 16)),
    ("id float", req(1.5), ("error", INVALID, None)),
    ("id 1.0", b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}', ("error", INVALID, None)),
    ("id null", req(None), ("error", INVALID, None)),
    ("id true", req(True), ("error", INVALID, None)),
    ("id object", req({"a": 1}), ("error", INVALID, None)),
    ("id array", req([1]), ("error", INVALID, None)),
    ("id 10 KB string", req("i" * 10_000), ("error", INVALID, None)),
    ("no method", b'{"jsonrpc":"2.0","id":17}', ("error", INVALID, 17)),
    ("method number", json.dumps({"jsonrpc": "2.0", "id": 18, "method": 5}).encode(), ("error", INVALID, 18)),
    ("method null", json.dumps({"jsonrpc": "2.0", "id": 19, "method": None}).encode(), ("error", INVALID, 19)),
    ("lone surrogate in method", b'{"jsonrpc":"2.0","id":20,"method":"\\ud800"}', ("error", INVALID, 20)),
    ("lone surrogate in id", b'{"jsonrpc":"2.0","id":"\\udc00","method":"ping"}', ("error", INVALID, None)),
    # params not an object: -32602
    ("params array", req(21, params=[1, 2]), ("error", PARAMS, 21)),
    ("params string", req(22, params="x"), ("error", PARAMS, 22)),
    ("params number", req(23, params=5), ("error", PARAMS, 23)),
    ("params true", req(24, params=True), ("error", PARAMS, 24)),
    ("lone surrogate in arguments", b'{"jsonrpc":"2.0","id":25,"method":"tools/call","params":'
     b'{"name":"run","arguments":{"cmd":"ls","args":["\\ud800"]}}}', ("error", PARAMS, 25)),
    ("lone low surrogate in a key", b'{"jsonrpc":"2.0","id":26,"method":"tools/call","params":'
     b'{"name":"run","arguments":{"\\udfff":1}}}', ("error", PARAMS, 26)),
    # answered by the SDK or the tools
    ("unknown method", req(27, "no/such"), ("error", NO_METHOD, 27)),
    ("empty method", req(28, ""), ("error", NO_METHOD, 28)),
    ("1 MB method", req(29, "m" * 1_000_000), ("error", NO_METHOD, 29)),
    ("prompts/list not served", req(30, "prompts/list"), ("error", NO_METHOD, 30)),
    ("resources/list not served", req(31, "resources/list"), ("error", NO_METHOD, 31)),
    ("unknown tool", call(32, "rm_everything", {}), ("error", PARAMS, 32)),
    ("tools/call without name", req(33, "tools/call", params={}), ("error", PARAMS, 33)),
    ("tools/call arguments array", call(34, "run", ["ls"]), ("error", PARAMS, 34)),
    ("string id", req("abc"), ("result", "abc")),
    ("empty string id", req(""), ("result", "")),
    ("negative id", req(-7), ("result", -7)),
    ("zero id", req(0), ("result", 0)),
    ("big id", req(10**20), ("result", 10**20)),
    ("params null", req(35, params=None), ("result", 35)),
    ("crlf line end", req(36) + b"\r", ("result", 36)),
    ("leading spaces", b"   " + req(37), ("result", 37)),
    ("valid surrogate pair", b'{"jsonrpc":"2.0","id":38,"method":"tools/call","params":'
     b'{"name":"dry_run","arguments":{"cmd":"ls","args":["\\ud83d\\ude00"]}}}', ("result", 38)),
    ("tools/list", req(39, "tools/list"), ("result", 39)),
    ("arguments null", call(40, "describe", None), ("result", 40)),
    ("includeDiff 0", call(41, "run", {"cmd": "ls", "includeDiff": 0}), ("tool_error", 41)),
    ("page true", call(42, "run_paged", {"cmd": "ls", "page": True}), ("tool_error", 42)),
    ("page_size true", call(43, "run_paged", {"cmd": "ls", "page_size": True}), ("tool_error", 43)),
    ("page 10**30", call(44, "run_paged", {"cmd": "ls", "page": 10**30}), ("tool_error", 44)),
    ("unknown parameter", call(45, "run", {"cmd": "ls", "timeout": 1}), ("tool_error", 45)),
    ("args a string", call(46, "run", {"cmd": "ls", "args": "-la"}), ("tool_error", 46)),
    ("refused 1 MB cmd", call(47, "run", {"cmd": "x" * 1_000_000}), ("tool_error", 47)),
    # notifications: never answered, however malformed
    ("notification", b'{"jsonrpc":"2.0","method":"notifications/nothing"}', None),
    ("notification jsonrpc 1.0", b'{"jsonrpc":"1.0","method":"notifications/nothing"}', None),
    ("notification params array", b'{"jsonrpc":"2.0","method":"notifications/nothing","params":[1]}', None),
    ("notification method number", b'{"jsonrpc":"2.0","method":7}', None),
    ("notification lone surrogate", b'{"jsonrpc":"2.0","method":"notifications/\\ud800"}', None),
    ("cancel unknown request", b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}', None),
    ("progress unknown token", b'{"jsonrpc":"2.0","method":"notifications/progress",'
     b'"params":{"progressToken":"t","progress":1}}', None),
    # responses from the client are never answered
    ("response to nothing", b'{"jsonrpc":"2.0","id":900,"result":{}}', None),
    ("error response to nothing", b'{"jsonrpc":"2.0","id":901,"error":{"code":1,"message":"x"}}', None),
    ("malformed response", b'{"jsonrpc":"2.0","id":902,"result":5}', None),
    ("blank line", b"   ", None),
]


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    from tests.e2e.conftest import TEST_CONFIG

    work = tmp_path_factory.mktemp("conformance")
    work.chmod(0o755)
    (work / "home").mkdir()
    (work / "parism-test.toml").write_text(TEST_CONFIG)
    server = RawServer(work)
    server.initialize()
    yield server
    assert server.close() == 0


def test_the_corpus_has_at_least_57_kinds() -> None:
    assert len({kind for kind, _, _ in CORPUS}) == len(CORPUS) >= 57


@pytest.mark.parametrize(("kind", "line", "expected"), CORPUS, ids=[k for k, _, _ in CORPUS])
def test_each_line_gets_exactly_the_answer_it_is_owed(raw: RawServer, kind: str, line: bytes, expected: Any) -> None:
    wait_for = expected[-1] if expected is not None and expected[-1] is not None else None
    got = raw.probe(line, wait_for=wait_for)
    if expected is None:
        assert got == [], kind
        return
    assert len(got) == 1, (kind, got)
    answer = got[0]
    what, *rest = expected
    if what != "result":
        assert len(json.dumps(answer)) < 16_384, kind  # a refusal never echoes the line whole
    if what == "error":
        code, rid = rest
        assert answer["id"] == rid and answer["error"]["code"] == code, (kind, answer)
    else:
        (rid,) = rest
        assert answer["id"] == rid and "result" in answer, (kind, answer)
        assert answer["result"].get("isError", False) is (what == "tool_error"), (kind, answer)


def test_the_server_still_answers_a_valid_call_after_the_corpus(raw: RawServer) -> None:
    for _, line, expected in CORPUS:
        raw.probe(line, wait_for=expected[-1] if expected is not None else None)
    answer = raw.request("tools/call", {"name": "run", "arguments": {"cmd": "ls", "args": ["-a"], "format": "json"}})
    result = answer["result"]
    assert result["isError"] is False and result["structuredContent"]["exitCode"] == 0
    assert {".", ".."} <= set(result["structuredContent"]["stdout"]["raw"].split())


def test_unknown_tool_error_names_the_tool_in_data(raw: RawServer) -> None:
    (answer,) = raw.probe(call("u1", "frobnicate", {}), wait_for="u1")
    assert answer["error"]["code"] == PARAMS
    assert answer["error"]["data"]["tool"] == "frobnicate"
    assert "frobnicate" in answer["error"]["message"]


def test_argument_type_errors_name_the_parameter_not_an_internal_model(raw: RawServer) -> None:
    (answer,) = raw.probe(call("t1", "run_paged", {"cmd": "ls", "page_size": True}), wait_for="t1")
    text = answer["result"]["content"][0]["text"]
    assert "'page_size'" in text and "an integer" in text and "Arguments" not in text


def test_tools_call_before_initialize_says_the_session_is_not_initialised(workdir: Path) -> None:
    server = RawServer(workdir)
    try:
        (answer,) = server.probe(call("early", "run", {"cmd": "ls"}), wait_for="early")
        assert answer["error"]["code"] == PARAMS
        assert "not initialised" in answer["error"]["message"] and "initialize" in answer["error"]["message"]
        assert answer["error"]["data"]["method"] == "tools/call"
        server.initialize()
        after = server.request("tools/call", {"name": "run", "arguments": {"cmd": "ls"}})
        assert after["result"]["isError"] is False
    finally:
        assert server.close() == 0


def test_a_second_initialize_is_refused_and_the_session_goes_on(workdir: Path) -> None:
    """Issue 27: a second ``initialize`` was accepted (and answered with a new negotiation)."""
    server = RawServer(workdir)
    try:
        server.initialize()
        again = server.request("initialize", {
            "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "other", "version": "1"}})
        assert "result" not in again, again
        assert again["error"]["code"] == -32600, again
        assert "already initialised" in again["error"]["message"]
        assert again["error"]["data"] == {"method": "initialize", "reason": "already_initialised"}
        after = server.request("tools/call", {"name": "run", "arguments": {"cmd": "ls"}})
        assert after["result"]["isError"] is False  # the first session is intact
    finally:
        assert server.close() == 0


@pytest.mark.parametrize("version, served", [
    ("2025-11-25", {"tools", "tasks"}),  # tasks: only the revision that defines them (docs/jobs.md)
    ("2025-06-18", {"tools"}),
])
def test_capabilities_list_only_tools(workdir: Path, version: str, served: set[str]) -> None:
    server = RawServer(workdir)
    try:
        answer = server.request("initialize", {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}})
        caps = answer["result"]["capabilities"]
        assert set(caps) == served, caps
    finally:
        server.close()


# -- generated messages -----------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
ENVELOPE_KEYS = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"])
MESSAGES = st.one_of(
    st.dictionaries(ENVELOPE_KEYS, JSON, max_size=6),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": JSON, "method": st.text(max_size=12)},
                          optional={"params": JSON}),
    st.fixed_dictionaries({"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "method": st.text(max_size=12)},
                          optional={"params": JSON, "id": st.integers() | st.text(max_size=5)}),
    JSON,
)


def owed(line: bytes) -> tuple[int, Any] | None:
    """The oracle (JSON-RPC 2.0 §4–5): how many answers, and the id the one answer carries."""
    try:
        obj = json.loads(line.decode("utf-8"), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    except (ValueError, RecursionError):
        return (1, None)
    if not isinstance(obj, dict):
        return (1, None)
    if "method" not in obj:
        if "id" in obj and ("result" in obj or "error" in obj):
            return None  # a response
        rid = obj.get("id")
        return (1, rid if _echoable(rid) else None)
    if "id" not in obj:
        return None  # a notification
    rid = obj["id"]
    return (1, rid if _echoable(rid) else None)


def _echoable(rid: Any) -> bool:
    return (isinstance(rid, int) and not isinstance(rid, bool)) or (isinstance(rid, str) and len(rid) <= 1024)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(message=MESSAGES, garble=st.sampled_from([b"", b"x", b"}"]))
def test_generated_messages_get_what_they_are_owed(raw: RawServer, message: Any, garble: bytes) -> None:
    if isinstance(message, dict) and message.get("method") in ("initialize", "notifications/cancelled"):
        return  # a second handshake or a cancel changes session state: out of scope here
    line = json.dumps(message).encode() + garble
    expected = owed(line)
    rid = expected[1] if expected else None
    got = raw.probe(line, wait_for=rid if rid is not None else None)
    if expected is None:
        assert got == [], (line, got)
    else:
        assert len(got) == 1 and got[0]["id"] == rid, (line, got)


# -- size limit and end of input --------------------------------------------------------------

SMALL_LIMIT = 65_536


@pytest.mark.parametrize(("where", "rid"), [("first", 71), ("last", 72), ("middle", None)])
def test_a_request_over_the_size_limit_is_answered_with_its_id(workdir: Path, where: str, rid: Any) -> None:
    server = RawServer(workdir, env={"PARISM_MAX_REQUEST_BYTES": str(SMALL_LIMIT)})
    try:
        server.initialize()
        big = {"name": "run", "arguments": {"cmd": "ls", "args": ["a" * (4 * SMALL_LIMIT)]}}
        body = json.dumps({"jsonrpc": "2.0", "method": "tools/call", "params": big})[1:-1]
        members = {"first": f'{{"id":71,{body}}}', "last": f'{{{body},"id":72}}',
                   "middle": f'{{"jsonrpc":"2.0","params":{json.dumps(big)},"id":73,"method":"tools/call",'
                             f'"pad":"{"p" * 2 * SMALL_LIMIT}"}}'}
        (answer,) = server.probe(members[where].encode(), wait_for=rid)
        assert answer["id"] == rid and answer["error"]["code"] == INVALID
        assert "max_request_bytes" in answer["error"]["message"] and len(json.dumps(answer)) < 300
        ok = server.request("tools/call", {"name": "run", "arguments": {"cmd": "ls", "args": ["x" * 1000]}})
        assert "result" in ok  # a request under the limit (with a long argument) is still read
    finally:
        assert server.close() == 0


def test_stdin_eof_mid_call_exits_within_two_seconds(workdir: Path) -> None:
    many = workdir / "many"
    many.mkdir()
    for i in range(30_000):
        (many / f"file-{i:05d}").touch()
    (workdir / "parism-test.toml").write_text(
        (workdir / "parism-test.toml").read_text().replace("timeout_ms = 60000", "timeout_ms = 60000\nmax_output_bytes = 0"))
    server = RawServer(workdir)
    server.initialize()
    server.send(call("busy", "run", {"cmd": "ls", "args": ["-la", str(many)]}))
    time.sleep(0.3)  # the call is running (listing, reading or parsing 30 000 rows)
    started = time.monotonic()
    assert server.close() == 0
    assert time.monotonic() - started <= 2.0
