"""MCP stdio server: the tool table of :mod:`parism.server.tools` served over the SDK.

The server holds no pipeline logic.  Each tool is a row (options model → engine call → answer
model); its arguments are built by :func:`parism.wire.options.build`, never by the SDK's lax argument
models, and its ``CallToolResult`` is ours (compact JSON text, ``isError`` per spec decision 11).
An unknown tool is a JSON-RPC error (-32602).  Cancellation reaches the engine as anyio cancellation of
the tool task (the engine kills the child tree); :func:`_exit_on_signal` turns SIGTERM/SIGINT/SIGHUP
into the same cancellation, because the SDK does not handle them and a dying server would
otherwise orphan its children.

Start-up is on the critical path of a client's ``tools/list``: no ``from __future__ import
annotations`` (the SDK would evaluate each tool's annotation strings again), the engine is built
only once the tool list is out (:class:`LazyEngine`, :func:`_warm_up`).
"""

import gc
import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import INVALID_PARAMS, Tool, ToolAnnotations
from opentelemetry import trace

from parism.run import memlimit
from parism.server.signals import next_signal
from parism.wire.clip import clip
from parism.server import host
from parism.server import fastpath
from parism.server.admission import Admission
from parism.server.session import SERVED, initialise_first
from parism.server.tasks import Tasks
from parism.server.early import Early
from parism.server.stdio import Hooks, serve_stdio
from parism.server.lazy import LazyEngine
from parism.server.tools import InFlight, ToolRow, call, tool_rows

if TYPE_CHECKING:
    from parism.config import LoadedConfig

log = logging.getLogger("parism.server")

INSTRUCTIONS = """\
Parism runs allowlisted commands without a shell and returns a JSON envelope.
1. Call describe first (describe with cmd=<name> shows one command's allowed subcommands/flags).
2. Call dry_run for a command you have not used yet: it runs only the guard.
3. run takes cmd plus args as a list. No shell runs: the guard refuses pipes, ';', '&&' and '$(';
   a '>' is only ever a character of an argument, never a redirect; a glob such as * is not
   expanded (the program gets a literal *): name the files instead.
   Leave format unset: the default answer is the cheapest. Use budget to page long row lists,
   run_paged for long raw output.
4. ok=true: read stdout.parsed; when it is null, read stdout.raw (stdout.parse_error says why).
   ok=false: branch on failure.kind (guard|exec|parse|config); failure.hint says what to change.
   A non-zero exit code is data (failure.reason non_zero_exit), not a tool error.
   A table {schema, same, rows}: row i is same plus schema zipped with rows[i]; null means null.
5. run with retain=true keeps the answer (review.result_id) 15 minutes after its last read:
   fetch_result pages on after a budget cut (until continuation has no cursor), explain_result
   shows where a value came from (with evidence="fields"), compare_results diffs two runs of the
   same command. They never re-run."""


def run_annotations(cfg: "LoadedConfig") -> ToolAnnotations:
    """Hints for the executing tools, from what the active profile allows (fixed for the server's
    lifetime): the shipped ``readonly`` profile changes nothing (read-only, not destructive);
    open-world when any allowed command reaches the network (curl, dig: the answer depends on
    the world outside, which is what the hint means — not that it writes)."""
    master = cfg.settings.sandbox.network  # false takes the network from every command
    boxes = [p.sandbox for p in map(cfg.policy, cfg.settings.guard.allowed_commands) if p is not None]
    network = any(box.namespace == "host_net" or (master and box.network) for box in boxes)
    read_only = cfg.profile.name == "readonly"
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=not read_only,
        idempotent_hint=False,
        open_world_hint=network,
    )


def _traced() -> bool:
    """Whether an OpenTelemetry tracer provider is installed (``opentelemetry-instrument``, an
    embedding application): only then is the SDK's span per request kept.  Without one the
    span is a no-op that still cost ~0.1 ms CPU per call (scripts/bench_mcp_layer.py)."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


class ParismServer(MCPServer):
    """MCPServer serving Parism's tool table (:mod:`parism.server.tools`) instead of the SDK's
    decorated functions, and telling :func:`_serve` when a client has fetched the tool list."""

    tools_listed: anyio.Event | None = None
    early: Early | None = None  # set while serving stdio (_serve)
    admission: Admission | None = None  # the execution slots and their queue (_serve)

    def __init__(self, name: str, *, rows: Sequence[ToolRow] = (), engine: LazyEngine | None = None,
                 **options: Any) -> None:
        # No subscriptions/listen: the tool list never changes, and serving it made modern-era
        # clients read listChanged: true.
        # Tasks (MCP 2025-11-25) over the job model: methods as an extension, the task-augmented
        # tools/call and the capability through middleware (parism/server/tasks.py)
        self.tasks = Tasks(engine) if engine is not None else None
        middleware = [initialise_first, *([self.tasks.middleware] if self.tasks else [])]
        super().__init__(name, subscriptions=False, middleware=middleware,
                         extensions=[self.tasks] if self.tasks else None, **options)
        # the SDK internals the fast path needs, looked for once (parism/server/fastpath.py)
        self.fast = fastpath.check(self)
        if self.fast.active:
            if self.tasks is not None:  # the core ``tasks`` capability, not an SEP-2133 extension to advertise
                fastpath.drop_extension(self, self.tasks.identifier)
            fastpath.serve_only(self, SERVED)
            if not _traced():  # the SDK's documented opt-out: drop it from the list
                fastpath.drop_tracing(self)
        self._rows = {row.name: row for row in rows}
        self._listed = [row.listed() for row in rows]  # schemas built once, before any client
        self._engine = engine
        self._server_info = {"fast_path": self.fast.describe()}

    async def list_tools(self) -> list[Tool]:
        if self.tools_listed is not None:
            self.tools_listed.set()
        return list(self._listed)

    async def call_tool(  # type: ignore[override]  # a CallToolResult as a mapping (tools.tool_result)
            self, name: str, arguments: dict[str, Any], context: Context | None = None) -> dict[str, Any]:
        """An unknown tool is a protocol error (MCP 2025-11-25: -32602, the name in ``data``);
        everything else is the row's answer."""
        row = self._rows.get(name)
        if row is None or self._engine is None:
            shown = clip(name)
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {shown}", data={"tool": shown, "valid": sorted(self._rows)})
        started = None
        if self.early is not None and context is not None and row.name == "run":
            started = self.early.claim(context.request_context.request_id, arguments)
        return await call(row, self._engine, arguments, context, started, self.admission,
                          ours=self.fast.active, server=self._server_info)


def build_server(engine: LazyEngine, version: str) -> ParismServer:
    """A fresh server with the tool table bound to ``engine``."""
    return ParismServer("parism", version=version, instructions=INSTRUCTIONS,
                        rows=tool_rows(run_annotations(engine.cfg)), engine=engine)


#: Seconds a termination signal leaves cancelled calls to kill their children before we exit
#: (within the documented 2 s: docs/mcp-clients.md). Only the admitted calls run anything — at
#: most ``guard.max_concurrency`` — and a queued one is gone the moment it is cancelled, so this
#: holds at any number in flight (measured: 0.07 s with 500).
HARD_EXIT_GRACE_S = 1.5


async def _end_jobs(engine: "LazyEngine | None") -> None:
    """The session is over: every job's tree is killed before the process goes (docs/jobs.md)."""
    built = engine.ready() if engine is not None else None
    if built is not None:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(built.jobs.close)


async def _exit_on_signal(scope: anyio.CancelScope, engine: "LazyEngine | None" = None) -> None:
    """SIGTERM/SIGINT/SIGHUP: cancel every call and job, wait for their cleanup, then exit 128+signal.

    The exit is forced (``os._exit``) because the SDK's stdin reader sits in a worker thread
    that cancellation cannot interrupt; a timer guarantees it even if a cleanup hangs.
    """
    signum = await next_signal()
    _begin_exit()
    log.warning("received signal %d, cancelling in-flight calls", signum)
    timer = threading.Timer(HARD_EXIT_GRACE_S, _hard_exit, args=(128 + signum,))
    timer.daemon = True
    timer.start()
    scope.cancel()
    with anyio.CancelScope(shield=True):
        await anyio.lowlevel.checkpoint()  # let the cancelled handlers start their cleanup
        while InFlight.count:
            await anyio.sleep(0.01)
        await _end_jobs(engine)
    _hard_exit(128 + signum)


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


#: Seconds from stdin EOF to a forced exit: in-flight calls are cancelled at EOF and kill their
#: children at once, but a guard check or a parse running in a worker thread cannot be
#: interrupted, and the client that closed stdin waits for the process to end.
EOF_EXIT_S = 1.5


def _exit_soon() -> None:
    """Stdin is closed: exit 0 within :data:`EOF_EXIT_S` even if a worker is still busy."""
    _begin_exit()
    timer = threading.Timer(EOF_EXIT_S, _hard_exit, args=(0,))
    timer.daemon = True
    timer.start()


#: From stdin EOF or a signal to the process's exit, at most (docs/mcp-clients.md).
SHUTDOWN_S = 2.0


class _Exit:
    """The engine being served and when shutting down began (EOF or a signal)."""

    engine: "LazyEngine | None" = None
    since: float | None = None


def _begin_exit() -> float:
    """The time by which the process must be gone (set once, at EOF or the first signal)."""
    if _Exit.since is None:
        _Exit.since = time.monotonic()
    return _Exit.since + SHUTDOWN_S - 0.1


def _release(until: float) -> None:
    """Before exiting: the engine's pre-started sandboxes and pack workers ended, and every
    background sandbox teardown run (both bounded by ``until``), so what the server started is
    reaped by it — not re-parented, as zombies, to the subreaper above it (SIGTERM's
    ``os._exit`` skipped the pool's atexit close, and a cancelled call's teardown could still
    be queued)."""
    engine = _Exit.engine.ready() if _Exit.engine is not None else None
    if engine is not None:
        closing = threading.Thread(target=engine.close, name="parism-exit-close", daemon=True)
        closing.start()
        closing.join(max(0.0, until - time.monotonic()))
    launcher = sys.modules.get("parism.sandbox.launcher")  # not imported: no sandbox ever ran
    if launcher is not None and not launcher.settle(until - time.monotonic()):
        log.warning("exiting with sandbox teardowns still pending")


def _hard_exit(status: int) -> None:
    _release(_begin_exit())
    logging.shutdown()
    os._exit(status)


async def _serve(server: ParismServer, engine: LazyEngine) -> None:
    """Serve stdio until EOF (in-flight calls are cancelled by the SDK) or a signal."""
    settings = engine.cfg.settings
    limit = settings.server.max_request_bytes
    memory = memlimit.budget(settings.guard)  # the engine's slots are the same (Engine.memory)
    memlimit.warn_if_lowered(memory)
    slots = memory.effective
    server.admission = admission = Admission(slots, settings.server.max_queued)
    # Admitted calls hold a worker thread each (two while a cancelled one is killed): room for
    # them beside describe, dry_run, the result tools and large answers' writes.
    limiter = anyio.to_thread.current_default_thread_limiter()
    limiter.total_tokens = max(limiter.total_tokens, 2 * slots + 40)
    if not server.fast.active:  # the plain SDK path (fastpath.check said why): no early start
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_exit_on_signal, tg.cancel_scope, engine)
                tg.start_soon(_warm_up, server, engine)
                await server.run_stdio_async()
                _exit_soon()
                tg.cancel_scope.cancel()
        finally:
            server.admission = None
            await _end_jobs(engine)
        return
    server.early = early = Early(engine, admission)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_exit_on_signal, tg.cancel_scope, engine)
            tg.start_soon(_warm_up, server, engine)
            await serve_stdio(server, limit, Hooks(on_eof=_exit_soon, on_message=early.begin,
                                                   on_answer=early.answered, on_wire=early.attach))
            tg.cancel_scope.cancel()
    finally:
        server.early = server.admission = None
        early.close()
        await _end_jobs(engine)


def report_config_problems(cfg: "LoadedConfig") -> None:
    """Each configuration problem on stderr at start-up, one line per key: a broken file is
    seen when the client starts the server (its log), not at the first call.  stderr, not MCP
    logging: protocol logging is deprecated (mcp-notes §0.7) and clients show stderr."""
    from parism.output.redact import validate_output_patterns

    problems = [str(p) for p in cfg.errors]
    problems += validate_output_patterns(cfg.settings.guard.secrets.output_patterns)
    for problem in problems:
        log.error("configuration: %s", " ".join(problem.split()))
    if problems:
        log.error("configuration: every tool but describe answers invalid_config until this is fixed")


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
    from parism.run.sandbox.identity import readable_by_calls

    host.bound_heap()  # before anyio starts its worker threads
    cfg = load_config(config_path, project_access=readable_by_calls)
    if cfg.settings.sandbox.mode != "off":
        # orphans of our sandboxes come back to us and are waited for (parism/run/sandbox/reap.py);
        # unconfined commands are not ours to adopt: what they leave goes where it always went
        host.become_subreaper()
    report_config_problems(cfg)
    _Exit.engine = engine = LazyEngine(cfg)
    try:
        server = build_server(engine, parism.__version__)
    except ValueError as exc:  # PARISM_FAST_PATH (server/fastpath.py): named, never ignored
        log.error("%s", exc)
        return 2
    anyio.run(_serve, server, engine)
    _release(_begin_exit())
    return 0
