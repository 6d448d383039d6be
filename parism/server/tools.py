"""The tool table: one row per MCP tool, its options model, its answer model and its call.

Why a table and not the SDK's decorated functions: the SDK builds an argument model from each
function signature and validates with it laxly (``includeDiff: 0`` became ``False``, ``page:
true`` became ``1``, unknown keys were dropped) and names that model (``runArguments``) in its
errors. Here the input schema *is* the options model of :mod:`parism.wire.options`, and arguments are
built with :func:`parism.wire.options.build` — the same layer the CLI and the library use — so a call
is refused alike on every surface, naming the parameter and listing the valid ones. A new tool is
a new row (``fetch_result`` & co. call ``Engine.acall`` like ``run``).
"""

import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import Tool, ToolAnnotations, ToolExecution
from pydantic_core import to_json

from parism.server.admission import Admission, QueueFull
from parism.server.schema import inline
from parism.server.stdio import ANSWERED, STRUCTURED_TEXT
from parism.wire.envelope import (
    CompareResult,
    DescribeResult,
    DryRunResult,
    Envelope,
    ExplainResult,
    Failure,
    WireModel,
)
from parism.wire.jobs import JobAnswer, JobOutput
from parism.wire.options import (
    CompareOptions,
    DescribeOptions,
    DryRunOptions,
    ExplainOptions,
    FetchOptions,
    JobIdOptions,
    JobOutputOptions,
    JobStartOptions,
    JobStopOptions,
    OptionsError,
    PagedOptions,
    RunOptions,
    StrictOptions,
    build,
)

if TYPE_CHECKING:
    from parism.engine import Engine
    from parism.server.early import EarlyCall
    from parism.server.lazy import LazyEngine

log = logging.getLogger("parism.server")
M = TypeVar("M", bound=WireModel)

#: Exec reasons that mean "the command did not run to completion" (spec decision 11).
_TOOL_ERROR_EXEC_REASONS = frozenset({"spawn_failed", "timeout", "output_limit", "sandbox_unavailable",
                                       "sandbox_unsupported"})

#: Answers that only read state: describe and dry_run never spawn anything.
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def is_tool_error(failure: Failure | None) -> bool:
    """Spec decision 11: only refusals and runs that could not complete are MCP tool errors."""
    if failure is None:
        return False
    if failure.kind in ("guard", "config"):
        return True
    return failure.kind == "exec" and failure.reason in _TOOL_ERROR_EXEC_REASONS


def _envelope_is_error(env: Any) -> bool:
    return is_tool_error(env.failure)


def _dry_run_is_error(result: DryRunResult) -> bool:
    """A blocked dry_run is a successful answer; only an unusable configuration is an error."""
    return result.reason == "invalid_config"


@dataclass(frozen=True)
class ToolRow:
    """One MCP tool: what it takes (``options``), what it answers (``output``) and how."""

    name: str
    title: str
    description: str
    options: type[StrictOptions]
    output: type[WireModel]
    call: "Callable[[Engine, Any], Awaitable[Any]]"
    is_error: Callable[[Any], bool]
    annotations: ToolAnnotations
    progress: bool = False  # long-running: report elapsed seconds while it runs
    task_support: str | None = None  # MCP 2025-11-25 execution.taskSupport (parism/server/tasks.py)
    admitted: bool = False  # executes a command: waits for an execution slot (server/admission.py)

    def listed(self) -> Tool:
        return Tool(
            name=self.name, title=self.title, description=self.description,
            input_schema=input_schema(self.options), output_schema=output_schema(self.output),
            annotations=self.annotations,
            **({"execution": ToolExecution(task_support=self.task_support)} if self.task_support else {}),
        )


async def _acall(engine: "Engine", opts: StrictOptions) -> Any:
    """The engine's one typed entry (``Engine.acall`` dispatches on the options model)."""
    return await engine.acall(opts)


async def _describe(engine: "Engine", opts: DescribeOptions) -> DescribeResult:
    # A worker thread: the first describe may probe the sandbox (spawns bwrap).
    return await anyio.to_thread.run_sync(engine.describe, opts.cmd)


async def _dry_run(engine: "Engine", opts: DryRunOptions) -> DryRunResult:
    return await anyio.to_thread.run_sync(engine.dry_run, opts.cmd, list(opts.args), opts.cwd)


#: What every result tool says of retention (``results.store``: an idle time, renewed by each read).
KEPT = ("A result is kept 15 minutes after its last read (each fetch_result, explain_result or "
        "compare_results renews it; store.ttl_ms in describe), within store.max_items results and "
        "store.max_total_bytes.")


def tool_rows(exec_hints: ToolAnnotations) -> tuple[ToolRow, ...]:
    """The server's tools; ``exec_hints`` are the annotations of the tools that run commands."""
    return (
        ToolRow("run", "Run a command",
                "Run an allowlisted command (no shell) and return its parsed output as a JSON envelope.",
                RunOptions, Envelope, _acall, _envelope_is_error, exec_hints, progress=True,
                task_support="optional", admitted=True),
        ToolRow("run_paged", "Run a command, page its output",
                "Run a command and return one page of its raw output lines (no parsing); see page_info.",
                PagedOptions, Envelope, _acall, _envelope_is_error, exec_hints, progress=True, admitted=True),
        ToolRow("describe", "Describe the environment",
                "Allowed commands, parsers, guard limits and sandbox state; with cmd, one command's rules.",
                DescribeOptions, DescribeResult, _describe, lambda r: is_tool_error(r.failure), READ_ONLY),
        ToolRow("dry_run", "Check a command against the guard",
                "Run only the guard: would this command be allowed? Nothing is executed.",
                DryRunOptions, DryRunResult, _dry_run, _dry_run_is_error, READ_ONLY),
        # the result tools read what run(retain: true) kept: nothing is executed (docs/results.md)
        ToolRow("fetch_result", "Fetch the next page of a retained result",
                "Next page of a run(retain: true) answer that a budget or max_items cut: pass "
                "continuation.result_id and continuation.cursor unchanged, repeat until the answer's "
                "continuation has no cursor. Nothing is re-run; an unknown, expired, evicted or not "
                "retained id is refused with that reason (run the command again with retain: true). "
                + KEPT,
                FetchOptions, Envelope, _acall, _envelope_is_error, READ_ONLY),
        ToolRow("explain_result", "Explain where a value came from",
                "Where one value of a retained result came from: pointer is a JSON Pointer into "
                "stdout.parsed (e.g. /entries/3/size_bytes). Answers value, source_kind (verbatim, "
                "derived with its transform, or none) and source_spans: [start, end) UTF-8 byte offsets "
                "into the masked stdout. Needs run(retain: true, evidence: \"fields\"). " + KEPT,
                ExplainOptions, ExplainResult, _acall, lambda r: False, READ_ONLY),
        ToolRow("compare_results", "Compare two retained results",
                "What changed between two run(retain: true) results of the same command, args and cwd: "
                "added/removed/changed rows by identity (git status/log/branch: repository + path, hash or "
                "name; kubectl -o json: metadata.uid; other commands: name the identity fields in keys). "
                "comparable: false with refusal_reason when the runs differ or rows have no identity (ps). "
                + KEPT,
                CompareOptions, CompareResult, _acall, lambda r: False, READ_ONLY),
        *job_rows(exec_hints),
    )


def _refused_call(answer: Any) -> bool:
    """A jobs tool's answer is an error only when the call itself was refused (``failure``); the
    job's own outcome (a non-zero exit, a timeout) is data in its envelope."""
    return answer.failure is not None


#: What the job tools only read (nothing is started or stopped).
JOB_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


def job_rows(exec_hints: ToolAnnotations) -> tuple[ToolRow, ...]:
    """The jobs tools (docs/jobs.md): run in the background, poll, read pages, stop."""
    return (
        ToolRow("job_start", "Start a command in the background",
                "Same arguments as run; the command runs as a job under the same guard and sandbox, and the "
                "answer has job_id at once (a refusal is answered instead, with its envelope). Poll job_status, "
                "read job_output pages, end it with job_stop. Default timeout_ms: guard.max_timeout_ms. At most "
                "server.max_jobs run at once; every job ends with the session.",
                JobStartOptions, JobAnswer, _acall, _refused_call, exec_hints),
        ToolRow("job_status", "Where a job is",
                "state (running | done | failed | stopped), exitCode, elapsed_ms, output_bytes so far (dropped_bytes: "
                "fell off the output ring); once ended, envelope: the final answer as run gives it (parsed), "
                "retained for fetch_result/explain_result/compare_results.",
                JobIdOptions, JobAnswer, _acall, _refused_call, JOB_READ),
        ToolRow("job_output", "Read a job's output",
                "One page of what the job printed (stdout and stderr as they came), redacted, cut at a line end: "
                "no cursor = from the oldest byte kept; pass next_cursor to go on (absent once the job has ended "
                "and all was read). skipped_bytes counts output that fell off the ring before it was read.",
                JobOutputOptions, JobOutput, _acall, _refused_call, JOB_READ),
        ToolRow("job_stop", "Stop a job",
                "Kill the job's whole process tree; answers its state (stopped) with the final envelope.",
                JobStopOptions, JobAnswer, _acall, _refused_call, exec_hints),
    )


@functools.cache
def input_schema(model: type[StrictOptions]) -> dict[str, Any]:
    """The options model's JSON schema as a tool's ``inputSchema``: ``additionalProperties:
    false`` on every object (the models forbid extra keys), field descriptions kept; pydantic's
    ``title`` keys and the models' docstrings (written for maintainers) left out."""
    schema = model.model_json_schema()
    for node in (schema, *schema.get("$defs", {}).values()):
        node.pop("title", None)
        node.pop("description", None)
        for prop in node.get("properties", {}).values():
            prop.pop("title", None)
    return schema


@functools.cache
def output_schema(model: type[WireModel]) -> dict[str, Any]:
    """The ``outputSchema`` the SDK derives for ``Annotated[CallToolResult, model]`` (pydantic's
    schema of the model, as the SDK's ``func_metadata`` builds it; the ``tools/list`` golden
    pins the bytes), with its ``$defs`` inlined (:mod:`parism.server.schema`: the same meaning, cheaper for
    every client to validate), built once per model: run and run_paged share the Envelope's,
    the largest (about 12 ms of start-up CPU each time it is generated)."""
    return inline(model.model_json_schema())


def tool_result(model: WireModel, is_error: bool, *, text: str | None = None) -> dict[str, Any]:
    """Wrap a wire model: structuredContent and a compact text copy carry the same JSON.

    A ``CallToolResult`` in its wire names, as a mapping: the SDK copies a mapping shallowly and
    validates it once, where it dumped a model whole first (structuredContent walked once more:
    0.1-0.2 ms per ``ls -la /usr/bin`` answer).  The server passes ``text=STRUCTURED_TEXT``:
    its transport writes that JSON into the block while it writes the answer
    (:mod:`parism.server.stdio`), so it is never built here."""
    wire = model.to_wire()
    if text is not None and text == STRUCTURED_TEXT and _carries_bytes(wire):
        text = bytes_summary(wire)  # the bytes travel once: in structuredContent only
    # Compact, non-ASCII kept, about 3x faster than json.dumps (which writes tiny floats as
    # 1e-05 where this writes 0.00001: the CLI and the MCP text differ there).
    text = to_json(wire).decode() if text is None else text
    return {"content": [{"type": "text", "text": text}], "structuredContent": wire, "isError": is_error,
            "resultType": "complete"}


def _carries_bytes(wire: dict[str, Any]) -> bool:
    return any(isinstance(wire.get(name), dict) and "raw_base64" in wire[name] for name in ("stdout", "stderr"))


def bytes_summary(wire: dict[str, Any]) -> str:
    """The text block of an answer whose output is not text (docs/envelope.md): the envelope's
    JSON with each ``raw_base64`` replaced by a note of its size — the bytes themselves are in
    ``structuredContent`` only, so they are carried once (4/3 of their size) instead of twice."""
    shown = dict(wire)
    for name in ("stdout", "stderr"):
        stream = shown.get(name)
        if isinstance(stream, dict) and "raw_base64" in stream:
            encoded = stream["raw_base64"]
            size = len(encoded) // 4 * 3 - encoded[-2:].count("=") if encoded else 0
            shown[name] = {**stream, "raw_base64": f"<{size} bytes that are not text: base64 in "
                                                   f"structuredContent.{name}.raw_base64>"}
    return to_json(shown).decode()


def refused(tool: str, err: OptionsError) -> dict[str, Any]:
    """SEP-1303: arguments that do not fit are a tool error the model reads and corrects."""
    return {"content": [{"type": "text", "text": f"invalid arguments for {tool}: {err.text()}"}], "isError": True,
            "resultType": "complete"}


def busy(tool: str, full: QueueFull) -> dict[str, Any]:
    """``server.max_queued`` calls already wait: refused at once, nothing runs (a tool error the
    model reads; the queue does not grow)."""
    return {"content": [{"type": "text", "text": f"{tool} refused: {full.text()}"}], "isError": True,
            "resultType": "complete"}


async def call(row: ToolRow, engine: "LazyEngine", arguments: Any, ctx: Context | None,
               started: "EarlyCall | None" = None, admission: Admission | None = None, *,
               ours: bool = True, server: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build the row's options from the raw arguments, then run its call (counted, guarded);
    ``started``: the same call, already running (:mod:`parism.server.early`, which holds its slot),
    is awaited instead. A row that executes first waits for a slot of ``admission`` (on the loop,
    holding no thread; cancelled there, it is simply gone). ``ours``: Parism's transport writes
    the answer (its text block filled by the writer), else the SDK's (the plain path of
    :mod:`parism.server.fastpath`: the text is built here); ``server``: what ``describe``
    (without ``cmd``) reports of the MCP side."""
    ticks = row.progress and ctx is not None and wants_progress(ctx)
    if started is not None:
        wire = started.wire
        if wire is not None and ctx is not None and not ticks:  # no tick may follow the answer
            rid, version = ctx.request_context.request_id, ctx.protocol_version
            started.offer(lambda value: wire.answer_now(
                rid, version, tool_result(value, row.is_error(value), text=STRUCTURED_TEXT)))

        def work(e: "Engine") -> Awaitable[Any]:
            return _with_progress(ctx, started.result()) if ticks else started.result()
    else:
        opts = build(row.options, arguments)
        if isinstance(opts, OptionsError):
            return refused(row.name, opts)

        def work(e: "Engine") -> Awaitable[Any]:
            return _with_progress(ctx, row.call(e, opts)) if ticks else row.call(e, opts)

    admitted = admission is not None and row.admitted and started is None
    if admitted:
        assert admission is not None
        try:
            await admission.take()
        except QueueFull as full:
            return busy(row.name, full)
    try:
        result = await guarded(row.name, engine, work)
    finally:
        if admitted:
            assert admission is not None
            admission.release()
    if server is not None and isinstance(result, DescribeResult) and result.cmd is None and result.failure is None:
        result = result.model_copy(update={"server": server})
    if started is not None and started.answered:
        return ANSWERED  # the SDK's answer to this, the writer drops (the worker wrote ours)
    return tool_result(result, row.is_error(result), text=STRUCTURED_TEXT if ours else None)


class InFlight:
    """Process-wide count of running tool calls: the signal handler exits once it drops to zero
    (every cancelled call has killed its child) instead of always waiting the full grace period."""

    count = 0


async def guarded(name: str, engine: "LazyEngine", work: "Callable[[Engine], Awaitable[M]]") -> M:
    """Count the call, and turn an unexpected engine exception into a readable tool error."""
    InFlight.count += 1
    try:
        return await work(await engine.get())
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


def wants_progress(ctx: Context) -> bool:
    """Whether the request carried a progress token: without one the SDK's stdio dispatcher
    drops every notification, so no ticker (a task group and a task per call) is started."""
    meta = ctx.request_context.meta
    return meta is not None and meta.get("progress_token") is not None


async def _with_progress(ctx: Context | None, work: Awaitable[M]) -> M:
    """Await ``work`` and, while it runs, report elapsed seconds about once a second.

    Some clients reset their request timeout on progress (when they send a progress token:
    :func:`wants_progress`).  A failing notification only stops the ticks.
    The ticker ends on an event, not by cancellation: a cancelled task keeps its
    ``CancelledError``, whose traceback holds the request context (and so the call's
    arguments) in a reference cycle until the next full collection — measured, 24 refused
    10 MB requests held 230 MB that way.
    """
    if ctx is None:  # called outside a request (the SDK always injects one)
        return await work
    done = anyio.Event()

    async def tick() -> None:
        elapsed = 0
        while True:
            with anyio.move_on_after(PROGRESS_INTERVAL_S):
                await done.wait()
            if done.is_set():
                return
            elapsed += 1
            try:
                await ctx.report_progress(elapsed, message=f"running for {elapsed} s")
            except Exception:  # noqa: BLE001 - progress is best effort
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(tick)
        try:
            return await work
        finally:
            done.set()
