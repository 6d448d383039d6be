"""The MCP surface end to end: ``python -m parism`` spawned and driven by the SDK's stdio client.

Expected values come from reality (the files the test created, GNU ls's documented exit status,
the process table), never from the server's own earlier output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import Client, ClientSession, MCPError, stdio_client
from mcp.types import CallToolResult

import parism

from tests.e2e.conftest import (
    open_session,
    pid_alive,
    server_params,
    server_pid_of,
    sleep_procs,
    wait_until,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

TOOLS = {"run", "run_paged", "describe", "dry_run", "fetch_result", "explain_result", "compare_results",
         "job_start", "job_status", "job_output", "job_stop"}


def payload(result: CallToolResult) -> dict[str, Any]:
    """The envelope, after checking both channels carry exactly the same compact JSON."""
    assert len(result.content) == 1
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.structured_content is not None
    assert json.loads(text) == result.structured_content
    assert "\n" not in text and ", " not in text[:200]  # compact separators
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error is True
    return " ".join(getattr(c, "text", "") for c in result.content)


async def test_initialize_reports_name_version_and_instructions(workdir: Path) -> None:
    async with stdio_client(server_params(workdir)) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
    assert init.protocol_version == "2025-11-25"
    assert init.server_info.name == "parism"
    assert init.server_info.version == parism.__version__
    text = init.instructions or ""
    for must in ("describe", "dry_run", "failure.kind", "stdout.parsed", "stdout.raw"):
        assert must in text
    assert len(text) < 1500  # short and operational


async def test_modern_era_client_gets_the_same_tools_and_envelopes(workdir: Path) -> None:
    """SDK ``Client`` probes server/discover (2026-07-28): same surface, same envelope."""
    async with Client(server_params(workdir)) as client:
        assert client.protocol_version == "2026-07-28"
        assert "describe" in (client.instructions or "")
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        result = await client.call_tool("run", {"cmd": "ls", "args": ["-a"], "format": "json"})
        env = payload(result)
        assert result.is_error is False and env["ok"] is True
        assert {".", ".."} <= set(env["stdout"]["raw"].split())


async def test_list_tools_exact_names_schemas_and_annotations(session: ClientSession) -> None:
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == TOOLS
    expected_params = {
        "run": {"cmd", "args", "cwd", "format", "includeDiff", "select", "where", "sort_by", "limit",
                "array", "budget", "contract_version", "evidence", "retain", "timeout_ms", "stdin"},
        "run_paged": {"cmd", "args", "cwd", "page", "page_size", "includeDiff", "timeout_ms"},
        "describe": {"cmd"},
        "dry_run": {"cmd", "args", "cwd"},
        "fetch_result": {"result_id", "cursor"},
        "explain_result": {"result_id", "pointer"},
        "compare_results": {"base_id", "current_id", "keys", "ignore_fields", "strict"},
        "job_status": {"job_id"},
        "job_output": {"job_id", "cursor"},
        "job_stop": {"job_id"},
    }
    expected_params["job_start"] = expected_params["run"]  # the same arguments as run
    for name, tool in tools.items():
        props = tool.input_schema["properties"]
        assert set(props) == expected_params[name], name
        assert tool.input_schema["additionalProperties"] is False, name
        assert all(p.get("description") for p in props.values()), name
        assert tool.output_schema is not None and tool.output_schema.get("type") == "object"
        assert tool.annotations is not None
        ann = tool.annotations
        assert None not in (ann.read_only_hint, ann.destructive_hint, ann.idempotent_hint, ann.open_world_hint)
    assert tools["run"].input_schema["required"] == ["cmd"]
    assert "required" not in tools["describe"].input_schema
    fmt = tools["run"].input_schema["properties"]["format"]
    enums = [branch["enum"] for branch in fmt["anyOf"] if "enum" in branch]
    assert enums == [["json", "compact", "json-no-raw"]] and fmt["default"] is None  # None: adaptive
    assert {"ok", "exitCode", "stdout", "stderr", "failure"} <= set(tools["run"].output_schema["properties"])
    assert "would_pass" in tools["dry_run"].output_schema["properties"]
    for name in ("describe", "dry_run", "fetch_result", "explain_result", "compare_results"):
        a = tools[name].annotations
        assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == (True, False, True, False)
    # The test config allows only ls, git and sleep, none of which has network in the profile.
    run_ann = tools["run"].annotations
    assert (run_ann.read_only_hint, run_ann.destructive_hint, run_ann.open_world_hint) == (True, False, False)
    assert run_ann.idempotent_hint is False
    assert tools["run_paged"].annotations == run_ann


async def test_run_hints_follow_the_profile_network_grants(workdir: Path) -> None:
    """The shipped readonly profile lets curl/dig/ping reach the network: run is open-world, and
    still read-only and not destructive (the profile allows no command that writes)."""
    (workdir / "parism-test.toml").write_text("[guard]\ntimeout_ms = 10000\n")
    async with open_session(workdir) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    ann = tools["run"].annotations
    assert ann is not None
    assert (ann.read_only_hint, ann.destructive_hint, ann.open_world_hint) == (True, False, True)
    (workdir / "parism-test.toml").write_text('[guard]\nprofile = "build"\n')
    async with open_session(workdir) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    ann = tools["run"].annotations
    assert ann is not None and (ann.read_only_hint, ann.destructive_hint) == (False, True)  # build writes


async def test_run_ls_la_parses_the_real_directory(session: ClientSession, workdir: Path) -> None:
    (workdir / "alpha.txt").write_text("12345")
    (workdir / "beta").mkdir()
    result = await session.call_tool("run", {"cmd": "ls", "args": ["-la"], "format": "json"})  # seed shape
    env = payload(result)
    assert result.is_error is False
    assert env["ok"] is True and env["exitCode"] == 0
    assert env["cmd"] == "ls" and env["args"] == ["-la"] and env["cwd"] == str(workdir)
    assert "alpha.txt" in env["stdout"]["raw"]
    names = {e["name"] for e in env["stdout"]["parsed"]["entries"]}
    assert set(os.listdir(workdir)) <= names
    sizes = {e["name"]: e.get("size_bytes", e.get("size")) for e in env["stdout"]["parsed"]["entries"]}
    assert sizes["alpha.txt"] == 5


async def test_non_zero_exit_is_data_not_a_tool_error(session: ClientSession, workdir: Path) -> None:
    missing = str(workdir / "no-such-file")
    result = await session.call_tool("run", {"cmd": "ls", "args": [missing]})
    env = payload(result)
    assert result.is_error is False
    assert env["ok"] is False
    assert env["exitCode"] == 2  # GNU ls: 2 = "serious trouble (cannot access argument)"
    assert env["failure"]["kind"] == "exec" and env["failure"]["reason"] == "non_zero_exit"
    assert "no-such-file" in env["stderr"]["raw"]


async def test_guard_refusal_is_a_tool_error_with_the_envelope(session: ClientSession) -> None:
    result = await session.call_tool("run", {"cmd": "rm", "args": ["-rf", "/"]})
    assert result.is_error is True
    env = payload(result)
    assert env["ok"] is False
    assert env["failure"]["kind"] == "guard" and env["failure"]["reason"] == "command_not_allowed"
    assert env["duration_ms"] == 0


async def test_run_paged_returns_the_requested_lines(session: ClientSession, workdir: Path) -> None:
    names = [f"f{i}" for i in range(5)]
    for n in names:
        (workdir / n).write_text("")
    listed = sorted(os.listdir(workdir))  # ls -1 sorts by name in the C locale
    result = await session.call_tool(
        "run_paged", {"cmd": "ls", "args": ["-1"], "page": 1, "page_size": 2}
    )
    env = payload(result)
    assert result.is_error is False and env["ok"] is True
    assert env["stdout"]["parsed"] is None
    assert env["stdout"]["raw"] == "".join(f"{n}\n" for n in listed[2:4])
    info = env["page_info"]
    assert (info["page"], info["page_size"], info["total_lines"]) == (1, 2, len(listed))
    assert info["has_next"] is ((1 + 1) * 2 < len(listed))


async def test_describe_environment_and_one_command(session: ClientSession) -> None:
    whole = await session.call_tool("describe", {})
    env = payload(whole)
    assert whole.is_error is False
    assert env["version"] == parism.__version__
    assert {"ls", "git", "sleep"} <= set(env["allowed_commands"])

    git = await session.call_tool("describe", {"cmd": "git"})
    one = payload(git)
    assert git.is_error is False
    assert one["cmd"] == "git" and "failure" not in one
    assert len(git.content[0].text.encode()) <= 2048 + 512  # "about 2 KB"  # type: ignore[union-attr]


async def test_dry_run_blocks_rm_without_executing(session: ClientSession) -> None:
    result = await session.call_tool("dry_run", {"cmd": "rm", "args": ["-rf", "/"]})
    out = payload(result)
    assert out["would_pass"] is False
    assert out["reason"] == "command_not_allowed"
    assert out["message"]
    assert result.is_error is False  # the question was answered; nothing was refused to run
    ok = payload(await session.call_tool("dry_run", {"cmd": "ls", "args": ["-la"]}))
    assert ok == {"would_pass": True, "reason": None, "message": None}


@pytest.mark.parametrize(
    ("arguments", "mentions"),
    [
        ({"cmd": "ls", "args": "-la"}, "args"),
        ({"cmd": "ls", "format": "yaml"}, "format"),
        ({"args": ["-la"]}, "cmd"),
        ({"cmd": "ls", "includeDiff": "maybe"}, "includeDiff"),
    ],
)
async def test_malformed_arguments_are_clear_tool_errors(
    session: ClientSession, arguments: dict[str, Any], mentions: str
) -> None:
    bad = await session.call_tool("run", arguments)
    text = error_text(bad)
    assert f"'{mentions}'" in text and text.startswith("invalid arguments for run: ")
    assert "errors.pydantic.dev" not in text and "runArguments" not in text  # no internal names
    good = await session.call_tool("run", {"cmd": "ls"})
    assert good.is_error is False and payload(good)["ok"] is True


SCHEMA_CALLS = [
    ("run", {"cmd": "ls", "args": ["-la"]}),
    ("run", {"cmd": "ls", "args": ["no-such-file"]}),
    ("run", {"cmd": "rm", "args": ["-rf", "/"]}),
    ("run", {"cmd": "ls", "args": ["/etc"]}),
    ("run", {"cmd": "ls", "format": "compact"}),
    ("run_paged", {"cmd": "ls", "args": ["-1"], "page": 3}),
    ("describe", {}),
    ("describe", {"cmd": "git"}),
    ("describe", {"cmd": "rm"}),
    ("dry_run", {"cmd": "rm"}),
    ("dry_run", {"cmd": "ls"}),
]


async def test_every_answer_conforms_to_the_published_output_schema(session: ClientSession) -> None:
    """Checked with an independent JSON Schema validator, error results included: clients that
    validate structuredContent must never reject one of our envelopes."""
    import jsonschema

    schemas = {t.name: t.output_schema for t in (await session.list_tools()).tools}
    for name, arguments in SCHEMA_CALLS:
        result = await session.call_tool(name, arguments)
        jsonschema.Draft202012Validator(schemas[name]).validate(payload(result))


async def _start_sleep(session: ClientSession, tg: anyio.abc.TaskGroup, seconds: str) -> psutil.Process:
    """Start ``run sleep <seconds>`` in the background and return the child once it exists."""

    async def call() -> None:
        await session.call_tool("run", {"cmd": "sleep", "args": [seconds]})

    tg.start_soon(call)
    await wait_until(lambda: bool(sleep_procs(seconds)), 15, f"sleep {seconds} to start")
    return sleep_procs(seconds)[0]


async def test_cancelled_call_kills_the_child(session: ClientSession, sleep_arg: str) -> None:
    seconds = sleep_arg
    async with anyio.create_task_group() as tg:
        child = await _start_sleep(session, tg, seconds)
        tg.cancel_scope.cancel()  # the SDK client sends notifications/cancelled
    await wait_until(lambda: not pid_alive(child.pid) and not sleep_procs(seconds), 10, "child killed")
    after = await session.call_tool("run", {"cmd": "ls"})  # the server keeps serving
    assert payload(after)["ok"] is True


async def test_client_read_timeout_kills_the_child(session: ClientSession, sleep_arg: str) -> None:
    seconds = sleep_arg
    with pytest.raises(MCPError) as info:
        await session.call_tool("run", {"cmd": "sleep", "args": [seconds]}, read_timeout_seconds=2.0)
    assert info.value.code == -32001  # REQUEST_TIMEOUT, then the client cancels the request
    await wait_until(lambda: not sleep_procs(seconds), 10, "child killed after read timeout")


async def test_describe_answers_while_a_run_is_in_flight(session: ClientSession, sleep_arg: str) -> None:
    seconds = sleep_arg
    async with anyio.create_task_group() as tg:
        child = await _start_sleep(session, tg, seconds)
        with anyio.fail_after(5):
            described = await session.call_tool("describe", {})
        assert described.is_error is False and payload(described)["version"]
        assert pid_alive(child.pid)  # the run really was still in flight
        tg.cancel_scope.cancel()
    await wait_until(lambda: not sleep_procs(seconds), 10, "child killed")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_signal_to_server_leaves_no_child(workdir: Path, signum: int, sleep_arg: str) -> None:
    seconds = sleep_arg
    async with open_session(workdir) as session, anyio.create_task_group() as tg:

        async def call() -> None:
            try:
                await session.call_tool("run", {"cmd": "sleep", "args": [seconds]})
            except Exception:  # the server goes away mid-call; that is the point
                pass

        tg.start_soon(call)
        await wait_until(lambda: bool(sleep_procs(seconds)), 15, "sleep to start")
        child = sleep_procs(seconds)[0]
        server = psutil.Process(server_pid_of(child))
        os.kill(server.pid, signum)
        # The exit status itself is pinned by the raw test below (asyncio may reap it first here).
        await anyio.to_thread.run_sync(lambda: server.wait(timeout=10))
        assert not pid_alive(server.pid)
        await wait_until(lambda: not sleep_procs(seconds), 5, "no child left after the signal")
        tg.cancel_scope.cancel()


# --- raw JSON-RPC: exit statuses the SDK client cannot observe ------------------------------


def _raw_server(workdir: Path) -> subprocess.Popen[bytes]:
    params = server_params(workdir)
    return subprocess.Popen([params.command, *params.args], cwd=params.cwd, env=params.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _start_raw_sleep(proc: subprocess.Popen[bytes], seconds: str) -> None:
    """Handshake by hand, then call run sleep without waiting for its answer."""
    assert proc.stdout is not None
    _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    answer = json.loads(proc.stdout.readline())
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == "2025-06-18"
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "run", "arguments": {"cmd": "sleep", "args": [seconds]}}})


@pytest.mark.parametrize(("how", "status"), [("eof", 0), ("sigterm", 128 + signal.SIGTERM)])
async def test_raw_eof_or_sigterm_mid_call(workdir: Path, how: str, status: int, sleep_arg: str) -> None:
    seconds = sleep_arg
    proc = _raw_server(workdir)
    try:
        _start_raw_sleep(proc, seconds)
        await wait_until(lambda: bool(sleep_procs(seconds)), 15, "sleep to start")
        if how == "eof":
            assert proc.stdin is not None
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == status
        await wait_until(lambda: not sleep_procs(seconds), 5, "no child left")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_bad_config_still_serves_describe_and_refuses_the_rest(workdir: Path) -> None:
    """Decision 12: the server starts, describe answers, every other tool is a config error."""
    (workdir / "parism-test.toml").write_text("[guard]\ntimeout_msec = 5\n")
    async with open_session(workdir) as session:
        described = await session.call_tool("describe", {})
        assert described.is_error is False and payload(described)["version"] == parism.__version__
        for name, arguments in (("run", {"cmd": "ls"}), ("run_paged", {"cmd": "ls"})):
            result = await session.call_tool(name, arguments)
            assert result.is_error is True
            failure = payload(result)["failure"]
            assert (failure["kind"], failure["reason"]) == ("config", "invalid_config")
            assert "parism-test.toml" in failure["message"] and "timeout_msec" in failure["message"]
        checked = await session.call_tool("dry_run", {"cmd": "ls"})
        assert checked.is_error is True
        assert payload(checked)["reason"] == "invalid_config"


async def test_long_run_reports_progress(session: ClientSession) -> None:
    """About one notification per second while the command runs, increasing, no total."""
    ticks: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        ticks.append((progress, total, message))

    result = await session.call_tool("run", {"cmd": "sleep", "args": ["2.6"]}, progress_callback=on_progress)
    assert payload(result)["ok"] is True
    await anyio.sleep(0.3)  # notifications race the result on a real transport
    progress = [p for p, _, _ in ticks]
    assert len(progress) >= 2  # a loaded machine may add a third second, never drop one
    assert progress == [float(n) for n in range(1, len(progress) + 1)]
    assert all(total is None and message and "running" in message for _, total, message in ticks)


def test_no_progress_without_a_progress_token(workdir: Path) -> None:
    """A call without a progress token gets its answer and nothing before it, however long it
    runs (the answer would come after a tick at 1 s: ``request`` refuses any other line)."""
    from tests.e2e.rawrpc import RawServer

    raw = RawServer(workdir)
    try:
        raw.initialize()
        answer = raw.request("tools/call", {"name": "run", "arguments": {"cmd": "sleep", "args": ["1.6"]}})
        assert answer["result"]["structuredContent"]["ok"] is True
        with_token = {"name": "run", "arguments": {"cmd": "sleep", "args": ["1.6"]}, "_meta": {"progressToken": "t"}}
        raw.send(json.dumps({"jsonrpc": "2.0", "id": "p", "method": "tools/call", "params": with_token}).encode())
        tick = json.loads(raw.answers.get(timeout=30))  # the control: the same call with a token
        assert tick["method"] == "notifications/progress" and tick["params"]["progressToken"] == "t"
    finally:
        assert raw.close() == 0


async def test_internal_error_does_not_echo_exception_text() -> None:
    """An unexpected engine exception becomes a tool error naming only its type: its message
    could quote the call's arguments, which may hold a secret."""
    from mcp.server.mcpserver.exceptions import ToolError

    from parism.server import tools

    class Boom:
        cfg = None

        async def get(self) -> None:
            raise RuntimeError("--token=ghp_" + "A" * 36)

    try:
        await tools.guarded("run", Boom(), lambda e: e)  # type: ignore[arg-type]
    except ToolError as err:
        assert "ghp_" not in str(err) and "RuntimeError" in str(err)
    else:
        raise AssertionError("no tool error")
