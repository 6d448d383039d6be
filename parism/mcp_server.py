"""MCP stdio server: four tools that hand their arguments to the engine and serialise its answer.

The server holds no pipeline logic.  Each tool returns a ``CallToolResult`` so we control the text
block (compact JSON, the same bytes as ``structuredContent``) and ``isError`` (spec decision 11);
its ``outputSchema`` is the one the SDK derives for ``Annotated[CallToolResult, Model]``, computed
once per model (:func:`output_schema`).  Cancellation reaches the engine as anyio cancellation of
the tool task (the engine kills the child tree); :func:`_exit_on_signal` turns SIGTERM/SIGINT/SIGHUP
into the same cancellation, because the SDK does not handle them and a dying server would
otherwise orphan its children.

Start-up is on the critical path of a client's ``tools/list``: no ``from __future__ import
annotations`` (the SDK would evaluate each tool's annotation strings again), the engine is built
only once the tool list is out (:class:`LazyEngine`, :func:`_warm_up`).
"""

import functools
import gc
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import anyio
import anyio.lowlevel
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool as RegisteredTool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent, Tool, ToolAnnotations
from pydantic import Field
from pydantic_core import to_json

from parism.cli.signals import next_signal
from parism.envelope import DescribeResult, DryRunResult, Envelope, Failure, WireModel

if TYPE_CHECKING:
    from parism.config import LoadedConfig
    from parism.engine import Engine

log = logging.getLogger("parism.mcp")
M = TypeVar("M", bound=WireModel)

INSTRUCTIONS = """\
Parism runs allowlisted shell commands without a shell and returns a JSON envelope.
1. Call describe first (describe with cmd=<name> shows one command's allowed subcommands/flags).
2. Call dry_run for a command you have not used yet: it runs only the guard.
3. run takes cmd plus args as a list; no pipes, redirects, globs or ';' (the guard blocks them).
   Use run_paged for long output, format="compact" to save tokens.
4. ok=true: read stdout.parsed; when it is null or stdout.parse_error is set, use stdout.raw.
   ok=false: branch on failure.kind (guard|exec|parse|config); failure.hint says what to change.
   A non-zero exit code is data (failure.reason non_zero_exit), not a tool error."""

#: Exec reasons that mean "the command did not run to completion" (decision 11).
_TOOL_ERROR_EXEC_REASONS = frozenset({"spawn_failed", "timeout", "output_limit", "sandbox_unavailable",
                                       "sandbox_unsupported"})

#: Answers that only read state: describe and dry_run never spawn anything.
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

Cmd = Annotated[str, Field(description="Program name, looked up on PATH (never run through a shell).")]
Args = Annotated[list[str], Field(description="Arguments, passed as argv (one list item per argument).")]
Cwd = Annotated[
    str | None,
    Field(description="Working directory; must be inside the allowed paths. Default: the server's."),
]
Format = Annotated[
    Literal["json", "compact", "json-no-raw"] | None,
    Field(
        description='"json" (parsed + raw), "compact" (rows folded into columns), "json-no-raw" '
        "(parsed only). Unset: json, compacted automatically when the result has many rows."
    ),
]
IncludeDiff = Annotated[
    bool, Field(description="Report files created/deleted/modified under cwd (depth 2).")
]


def is_tool_error(failure: Failure | None) -> bool:
    """Decision 11: only refusals and runs that could not complete are MCP tool errors."""
    if failure is None:
        return False
    if failure.kind in ("guard", "config"):
        return True
    return failure.kind == "exec" and failure.reason in _TOOL_ERROR_EXEC_REASONS


def _dry_run_is_error(result: DryRunResult) -> bool:
    """A blocked dry_run is a successful answer; only an unusable configuration is an error."""
    return result.reason == "invalid_config"


def tool_result(model: WireModel, is_error: bool) -> CallToolResult:
    """Wrap a wire model: structuredContent and a compact text copy carry the same JSON."""
    wire = model.to_wire()
    # Compact, non-ASCII kept, about 3x faster than json.dumps (which writes tiny floats as
    # 1e-05 where this writes 0.00001: the CLI and the MCP text differ there).
    text = to_json(wire).decode()
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=wire, is_error=is_error
    )


class InFlight:
    """Process-wide count of running tool calls: the signal handler exits once it drops to zero
    (every cancelled call has killed its child) instead of always waiting the full grace period."""

    count = 0


class LazyEngine:
    """The engine, built once in a worker thread.

    Importing the pipeline costs about 100 ms of CPU; :func:`_serve` starts the build once the
    client has the tool list instead of before the handshake, so a client's ``tools/list`` does
    not wait for it.  Every tool awaits the same build; only the configuration (for the
    annotations) is loaded up front.
    """

    def __init__(self, cfg: "LoadedConfig", engine: "Engine | None" = None) -> None:
        self.cfg = cfg
        self._engine = engine
        self._lock = anyio.Lock()

    async def get(self) -> "Engine":
        if self._engine is None:
            async with self._lock:
                if self._engine is None:
                    self._engine = await anyio.to_thread.run_sync(self._build)
        return self._engine

    def _build(self) -> "Engine":
        from parism.engine import Engine

        return Engine(self.cfg)


async def _guarded(name: str, engine: LazyEngine, call: "Callable[[Engine], Awaitable[M]]") -> M:
    """Count the call, and turn an unexpected engine exception into a readable tool error."""
    InFlight.count += 1
    try:
        return await call(await engine.get())
    except anyio.get_cancelled_exc_class():
        raise
    except Exception as exc:  # the engine promises values; this is the last line of defence
        log.exception("internal error in tool %s", name)
        # the exception text may quote the call's arguments (a token): only its type goes back
        raise ToolError(f"internal error in {name}: {type(exc).__name__} (details in the server's log)") from exc
    finally:
        InFlight.count -= 1


#: Seconds between progress notifications of a running command (spec: rate-limit them).
PROGRESS_INTERVAL_S = 1.0


async def _with_progress(ctx: Context | None, work: Awaitable[M]) -> M:
    """Await ``work`` and, while it runs, report elapsed seconds about once a second.

    Some clients reset their request timeout on progress; the SDK drops the notifications when
    the request carried no progress token.  A failing notification only stops the ticks.
    """
    if ctx is None:  # called outside a request (the SDK always injects one)
        return await work
    async with anyio.create_task_group() as tg:

        async def tick() -> None:
            elapsed = 0
            while True:
                await anyio.sleep(PROGRESS_INTERVAL_S)
                elapsed += 1
                try:
                    await ctx.report_progress(elapsed, message=f"running for {elapsed} s")
                except Exception:  # noqa: BLE001 - progress is best effort
                    return

        tg.start_soon(tick)
        result = await work
        tg.cancel_scope.cancel()
    return result


def run_annotations(cfg: "LoadedConfig") -> ToolAnnotations:
    """Hints for the executing tools, from the active profile (fixed for the server's lifetime):
    read-only only for the shipped ``readonly`` profile when no allowed command gets network."""
    master = cfg.settings.sandbox.network  # false takes the network from every command
    boxes = [p.sandbox for p in map(cfg.policy, cfg.settings.guard.allowed_commands) if p is not None]
    network = any(box.namespace == "host_net" or (master and box.network) for box in boxes)
    read_only = cfg.profile.name == "readonly" and not network
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=not read_only,
        idempotent_hint=False,
        open_world_hint=network,
    )


class ParismServer(MCPServer):
    """MCPServer that tells :func:`_serve` when a client has fetched the tool list."""

    tools_listed: anyio.Event | None = None

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        if self.tools_listed is not None:
            self.tools_listed.set()
        return tools


@functools.cache
def output_schema(model: type[WireModel]) -> dict[str, Any]:
    """The ``outputSchema`` the SDK derives for ``Annotated[CallToolResult, model]`` (its own code
    path, so the same bytes), built once per model: run and run_paged share the Envelope's, the
    largest (about 12 ms of start-up CPU each time it is generated)."""
    schema = FuncMetadata(arg_model=ArgModelBase, output_model=model).output_schema
    assert schema is not None  # the SDK raises if a model cannot be given one
    return schema


def build_server(engine: LazyEngine, version: str) -> ParismServer:
    """A fresh server with the four tools bound to ``engine``."""
    exec_hints = run_annotations(engine.cfg)
    tools: list[RegisteredTool] = []

    def tool(model: type[WireModel], **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a tool returning ``CallToolResult`` that publishes ``model``'s schema.

        The SDK does not validate the result against ``model`` again (a schema published without
        an ``output_model`` is advertised, not checked): ``structuredContent`` is that model's dump.
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            made = RegisteredTool.from_function(fn, **options)
            made.fn_metadata.output_schema = output_schema(model)
            tools.append(made)
            return fn

        return register

    @tool(Envelope, name="run", title="Run a command", annotations=exec_hints)
    async def run(
        cmd: Cmd,
        args: Args = [],  # noqa: B006 - pydantic copies defaults; the schema shows []
        cwd: Cwd = None,
        format: Format = None,
        includeDiff: IncludeDiff = False,
        ctx: Context | None = None,
    ) -> CallToolResult:
        """Run an allowlisted command (no shell) and return its parsed output as a JSON envelope."""
        env = await _guarded(
            "run",
            engine,
            lambda e: _with_progress(ctx, e.arun(cmd, args, cwd, format=format, includeDiff=includeDiff)),
        )
        return tool_result(env, is_tool_error(env.failure))

    @tool(Envelope, name="run_paged", title="Run a command, page its output", annotations=exec_hints)
    async def run_paged(
        cmd: Cmd,
        args: Args = [],  # noqa: B006
        cwd: Cwd = None,
        page: Annotated[int, Field(ge=0, description="0-based page number.")] = 0,
        page_size: Annotated[
            int | None,
            Field(ge=1, description="Lines per page (default guard.default_page_size, max guard.max_page_size)."),
        ] = None,
        includeDiff: IncludeDiff = False,
        ctx: Context | None = None,
    ) -> CallToolResult:
        """Run a command and return one page of its raw output lines (no parsing); see page_info."""
        env = await _guarded(
            "run_paged",
            engine,
            lambda e: _with_progress(
                ctx, e.arun_paged(cmd, args, cwd, page=page, page_size=page_size, includeDiff=includeDiff)
            ),
        )
        return tool_result(env, is_tool_error(env.failure))

    @tool(DescribeResult, name="describe", title="Describe the environment", annotations=READ_ONLY)
    async def describe(
        cmd: Annotated[
            str | None,
            Field(description="A command name: show only its policy, parser and examples."),
        ] = None,
    ) -> CallToolResult:
        """Allowed commands, parsers, guard limits and sandbox state; with cmd, one command's rules."""
        # A worker thread: the first describe may probe the sandbox (spawns bwrap).
        res = await _guarded("describe", engine, lambda e: anyio.to_thread.run_sync(e.describe, cmd))
        return tool_result(res, is_tool_error(res.failure))

    @tool(DryRunResult, name="dry_run", title="Check a command against the guard", annotations=READ_ONLY)
    async def dry_run(cmd: Cmd, args: Args = [], cwd: Cwd = None) -> CallToolResult:  # noqa: B006
        """Run only the guard: would this command be allowed? Nothing is executed."""
        res = await _guarded("dry_run", engine, lambda e: anyio.to_thread.run_sync(e.dry_run, cmd, args, cwd))
        return tool_result(res, _dry_run_is_error(res))

    return ParismServer("parism", version=version, instructions=INSTRUCTIONS, tools=tools)


#: Seconds a termination signal leaves cancelled calls to kill their children before we exit.
HARD_EXIT_GRACE_S = 3.0


async def _exit_on_signal(scope: anyio.CancelScope) -> None:
    """SIGTERM/SIGINT/SIGHUP: cancel every call, wait for their cleanup, then exit 128+signal.

    The exit is forced (``os._exit``) because the SDK's stdin reader sits in a worker thread
    that cancellation cannot interrupt; a timer guarantees it even if a cleanup hangs.
    """
    signum = await next_signal()
    log.warning("received signal %d, cancelling in-flight calls", signum)
    timer = threading.Timer(HARD_EXIT_GRACE_S, os._exit, args=(128 + signum,))
    timer.daemon = True
    timer.start()
    scope.cancel()
    with anyio.CancelScope(shield=True):
        await anyio.lowlevel.checkpoint()  # let the cancelled handlers start their cleanup
        while InFlight.count:
            await anyio.sleep(0.01)
    logging.shutdown()
    os._exit(128 + signum)


#: A client that calls tools without listing them first still gets a warm engine this soon.
WARM_UP_FALLBACK_S = 1.0

#: ``list_tools`` returns before its answer is serialised and written (by worker threads); a
#: build started at once holds the GIL against them: tools/list took ~11 ms instead of ~5 ms.
ANSWER_GRACE_S = 0.02


#: Allocations between young collections in the server (Python's default: 700).
GEN0_THRESHOLD = 10_000


async def _warm_up(server: ParismServer, engine: LazyEngine) -> None:
    """Build the engine right after the handshake (not during it: the GIL would slow it down).

    A tool call arriving first starts the build itself (every tool awaits ``engine.get()``).
    """
    server.tools_listed = anyio.Event()
    try:
        with anyio.move_on_after(WARM_UP_FALLBACK_S):
            await server.tools_listed.wait()
            await anyio.sleep(ANSWER_GRACE_S)
        await engine.get()
    finally:
        # Everything built so far (the SDK's and our models, the engine) lives as long as the
        # server: frozen, it stays out of the full collections that a call's parsed rows
        # trigger (each one walked all of it: ~100 ms). ``parism serve`` starts with the
        # collector off; from here on it runs, with a young generation sized for a call's
        # answer: at the default 700 allocations a 500-row listing (~30k objects, none in a
        # cycle) set off dozens of young collections, each walking the rows built so far
        # (measured: ls -la /usr/bin 11.2 -> 10.4 ms CPU per call with 10 000).
        gc.freeze()
        gc.set_threshold(GEN0_THRESHOLD, *gc.get_threshold()[1:])
        gc.enable()


async def _serve(server: ParismServer, engine: LazyEngine) -> None:
    """Serve stdio until EOF (in-flight calls are cancelled by the SDK) or a signal."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(_exit_on_signal, tg.cancel_scope)
        tg.start_soon(_warm_up, server, engine)
        await server.run_stdio_async()
        tg.cancel_scope.cancel()


def serve(config_path: str | None = None) -> int:
    """Entry point of ``parism`` / ``parism serve``: returns the exit status (0 on stdin EOF)."""
    import parism

    level = os.environ.get("PARISM_LOG_LEVEL", "WARNING").upper()
    logging.basicConfig(
        stream=sys.stderr,  # stdout is the protocol channel
        level=logging.getLevelNamesMapping().get(level, logging.WARNING),
        format="[parism] %(levelname)s %(name)s: %(message)s",
    )
    # Argument errors reach the model as text: the pydantic docs URL in each one is token noise.
    os.environ.setdefault("PYDANTIC_ERRORS_INCLUDE_URL", "0")
    from parism.config import load_config

    engine = LazyEngine(load_config(config_path))
    anyio.run(_serve, build_server(engine, parism.__version__), engine)
    return 0
