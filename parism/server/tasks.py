"""Task-augmented ``tools/call`` (MCP 2025-11-25) over the job model (docs/jobs.md, "Tasks").

SDK 2.3.0 has the task types but no server-side task runtime; this builds one from the SDK's
public hooks, and only for sessions that negotiated 2025-11-25 (the revision that defines
tasks; 2026-07-28 moved them out of the core):

- ``tasks/get``, ``tasks/result``, ``tasks/cancel``, ``tasks/list`` are the methods of an
  ``Extension`` (``MethodBinding``, version-gated to 2025-11-25: any other version gets the
  SDK's -32601). The extension is not advertised under ``capabilities.extensions`` — it is the
  core ``tasks`` capability, not an SEP-2133 extension;
- a ``tools/call`` with a ``task`` field is rewritten by a ``Server.middleware`` (the SDK's
  place for wire-level request rewriting) to the extension's method :data:`TASK_CALL`, which
  starts a job and answers ``CreateTaskResult``. Why not ``Extension.intercept_tool_call``: its
  result is serialised as the ``tools/call`` result, which the 2025-11-25 surface validates as
  a ``CallToolResult`` (``mcp/server/runner.py`` ``_serialize``), so a ``CreateTaskResult``
  would become an internal error;
- the same middleware adds ``tasks {list, cancel, requests.tools.call}`` to the ``initialize``
  answer when (and only when) the negotiated version is 2025-11-25.

Only ``run`` takes a task (its tool says ``execution.taskSupport: "optional"``); a task is a job
started with ``run``'s arguments and ``run``'s default timeout, so everything about jobs holds:
the same guard and sandbox, the output ring, the session's end kills it. ``tasks/result``
blocks until the task is terminal and answers the ``CallToolResult`` ``run`` would have given.
Status: working (running), completed, failed (the result is a tool error, spec decision 11),
cancelled (``tasks/cancel`` or the session's end).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import anyio
from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp_types import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    CallToolRequestParams,
    CancelTaskRequestParams,
    GetTaskPayloadRequestParams,
    GetTaskRequestParams,
    PaginatedRequestParams,
)

from parism.wire.clip import clip
from parism.wire.options import JobStartOptions, OptionsError, RunOptions, build

if TYPE_CHECKING:
    from parism.jobs import Job

TASKS_VERSION = "2025-11-25"
VERSIONS = frozenset({TASKS_VERSION})
TASK_CALL = "parism/tasks/call"  # what a task-augmented tools/call is rewritten to
TASK_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/cancel", "tasks/list", TASK_CALL})
TASK_TOOLS = frozenset({"run"})
CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
DEFAULT_TTL_MS = 600_000
MAX_TTL_MS = 3_600_000
POLL_MS = 500
RELATED = "io.modelcontextprotocol/related-task"


@dataclasses.dataclass
class TaskRecord:
    task_id: str
    created: float  # time.time()
    ttl_ms: int
    job: Job | None = None
    result: dict[str, Any] | None = None  # a call refused before any job: its CallToolResult
    ended: float | None = None


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Tasks(Extension):
    """The task runtime: records, the methods, and the middleware (:meth:`middleware`)."""

    identifier = "io.github.parism/tasks"

    def __init__(self, engine: Any) -> None:  # app.LazyEngine (app imports this module)
        self._engine = engine
        self._tasks: OrderedDict[str, TaskRecord] = OrderedDict()
        self._lock = threading.Lock()
        self.max_tasks = 4 * max(1, engine.cfg.settings.server.max_jobs)

    # -- wiring ---------------------------------------------------------------------

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding(TASK_CALL, CallToolRequestParams, self._call, VERSIONS),
            MethodBinding("tasks/get", GetTaskRequestParams, self._get, VERSIONS),
            MethodBinding("tasks/result", GetTaskPayloadRequestParams, self._result, VERSIONS),
            MethodBinding("tasks/cancel", CancelTaskRequestParams, self._cancel, VERSIONS),
            MethodBinding("tasks/list", PaginatedRequestParams, self._list, VERSIONS),
        )

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """A task-augmented ``tools/call`` goes to :data:`TASK_CALL`; ``initialize`` at
        2025-11-25 advertises ``tasks``. Everything else passes unchanged."""
        params = ctx.params
        if (ctx.method == "tools/call" and ctx.protocol_version == TASKS_VERSION and isinstance(params, Mapping)
                and params.get("task") is not None):
            return await call_next(dataclasses.replace(ctx, method=TASK_CALL))
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict) and result.get("protocolVersion") == TASKS_VERSION:
            caps = result.get("capabilities")
            if isinstance(caps, dict):
                caps["tasks"] = {k: dict(v) for k, v in CAPABILITY.items()}
        return result

    # -- the methods --------------------------------------------------------------------

    async def _call(self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams) -> dict[str, Any]:
        from parism.server.tools import refused, tool_result

        if params.name not in TASK_TOOLS:
            raise MCPError(METHOD_NOT_FOUND, f"tool '{clip(params.name)}' does not take a task (only run does: "
                                             "call it without task)", data={"tool": clip(params.name)})
        opts = build(RunOptions, params.arguments or {})
        engine = await self._engine.get()
        ttl = min(params.task.ttl if params.task and params.task.ttl is not None else DEFAULT_TTL_MS, MAX_TTL_MS)
        record = TaskRecord("", time.time(), max(1, ttl))
        if isinstance(opts, OptionsError):
            record.task_id, record.result, record.ended = _new_id(), refused("run", opts), record.created
        else:
            guard = engine.cfg.settings.guard
            timeout = opts.timeout_ms or min(guard.timeout_ms or guard.max_timeout_ms, guard.max_timeout_ms)
            job_opts = build(JobStartOptions, {**opts.model_dump(exclude_unset=True), "timeout_ms": timeout})
            assert not isinstance(job_opts, OptionsError)  # run's arguments are job_start's
            answer = await anyio.to_thread.run_sync(engine.jobs.start, job_opts)
            if answer.failure is not None and answer.failure.reason in ("too_many_jobs", "jobs_closed"):
                raise MCPError(INVALID_PARAMS, answer.failure.message, data={"reason": answer.failure.reason})
            if answer.job_id is None:  # refused before it ran: a task that is already over
                from parism.wire.envelope import Envelope

                env = Envelope.model_validate(answer.envelope)
                record.task_id, record.ended = _new_id(), record.created
                record.result = tool_result(env, True)
            else:
                record.task_id, record.job = answer.job_id, engine.jobs.find(answer.job_id)
        self._keep(record)
        return {"task": self._task(record)}

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: GetTaskRequestParams) -> dict[str, Any]:
        return self._task(self._record(params.task_id))

    async def _result(self, ctx: ServerRequestContext[Any, Any],
                      params: GetTaskPayloadRequestParams) -> dict[str, Any]:
        record = self._record(params.task_id)
        if record.job is not None:
            await anyio.to_thread.run_sync(record.job.done.wait, abandon_on_cancel=True)
        result = dict(self._payload(record))
        result["_meta"] = {**(result.get("_meta") or {}), RELATED: {"taskId": record.task_id}}
        return result

    async def _cancel(self, ctx: ServerRequestContext[Any, Any], params: CancelTaskRequestParams) -> dict[str, Any]:
        record = self._record(params.task_id)
        status = self._status(record)[0]
        if status != "working":
            raise MCPError(INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{status}'",
                           data={"taskId": record.task_id, "status": status})
        engine = await self._engine.get()
        await anyio.to_thread.run_sync(engine.jobs.stop, record.task_id)
        return self._task(record)

    async def _list(self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> dict[str, Any]:
        with self._lock:
            self._expire()
            records = list(self._tasks.values())
        return {"tasks": [self._task(r) for r in records]}

    # -- records --------------------------------------------------------------------------

    def _keep(self, record: TaskRecord) -> None:
        with self._lock:
            self._expire()
            self._tasks[record.task_id] = record
            ended = [r for r in self._tasks.values() if self._status(r)[0] != "working"]
            for old in ended[:max(0, len(self._tasks) - self.max_tasks)]:
                del self._tasks[old.task_id]

    def _expire(self) -> None:
        """Forget ended tasks past their ttl (under the lock); a working task stays."""
        now = time.time()
        for record in list(self._tasks.values()):
            if now > record.created + record.ttl_ms / 1000 and self._status(record)[0] != "working":
                del self._tasks[record.task_id]

    def _record(self, task_id: str) -> TaskRecord:
        with self._lock:
            self._expire()
            record = self._tasks.get(task_id)
        if record is None:
            raise MCPError(INVALID_PARAMS, "Failed to retrieve task: Task not found",
                           data={"taskId": clip(task_id, 64)})
        return record

    def _status(self, record: TaskRecord) -> tuple[str, str | None]:
        from parism.server.tools import is_tool_error

        if record.result is not None:
            return "failed", "refused before it ran"
        job = record.job
        if job is None or job.envelope is None:
            return "working", None
        if job.state == "stopped":
            return "cancelled", "stopped"
        failure = job.envelope.failure
        if is_tool_error(failure):
            return "failed", failure.message if failure is not None else None
        return "completed", None

    def _task(self, record: TaskRecord) -> dict[str, Any]:
        status, message = self._status(record)
        job = record.job
        updated = record.created
        if job is not None and job.ended is not None:
            updated = record.created + (job.ended - job.started)
        task: dict[str, Any] = {"taskId": record.task_id, "status": status, "createdAt": _iso(record.created),
                                "lastUpdatedAt": _iso(updated), "ttl": record.ttl_ms, "pollInterval": POLL_MS}
        if message:
            task["statusMessage"] = clip(message)
        return task

    def _payload(self, record: TaskRecord) -> dict[str, Any]:
        from parism.server.tools import is_tool_error, tool_result

        if record.result is not None:
            return record.result
        job = record.job
        assert job is not None and job.envelope is not None
        return tool_result(job.envelope, is_tool_error(job.envelope.failure))


def _new_id() -> str:
    import secrets

    return "j_" + secrets.token_hex(8)
