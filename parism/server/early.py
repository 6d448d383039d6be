"""An early start for ``tools/call run``: the guard and the hand-over to the sandbox run while
the SDK is still dispatching the request.

Why: between the line being read and the tool handler being entered, the SDK validates the
message again, opens a request context and spawns the handler (≈1.1 ms), the options are built
(≈0.2 ms) and the engine hops to a worker thread (≈0.5 ms); only then does the guard start and the
command get handed over. All of that is Python that can run while the command runs instead.

How: the transport's reader thread passes each message to :meth:`Early.begin` before the SDK
sees it. For a well-formed ``run`` call in an initialised session (the same options model the
handler would build, :func:`parism.wire.options.build`), the engine's call is started in a worker
thread, and the reader waits (at most :data:`HANDOVER_WAIT_S`) until the command has been handed
over or the call has ended (a refusal) — while it waits the GIL is the worker's, so the guard is
not slowed by the SDK's own work. The message then goes to the SDK as always; the handler claims
the running call by its request id (:meth:`Early.claim`) and awaits it instead of starting one.

Progress ticks and cancellation go through the handler as before, and each id gets one answer:
the SDK's, or — when the handler claimed the call in time, the request has no progress token
and the call was not cancelled — the one the worker writes itself the moment the envelope is
ready (:meth:`EarlyCall.offer`, ``Wire.answer_now`` in :mod:`parism.server.stdio`), the SDK's then
being dropped by the writer. A call the handler never claims (the SDK refused the request, or a
``notifications/cancelled`` arrived before dispatch) is cancelled when its id is answered or
cancelled, or at shutdown, so its command is killed like any cancelled call.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from mcp.types import CallToolRequestParams
from mcp_types import JSONRPCNotification, JSONRPCRequest
from pydantic import ValidationError

from parism.wire.options import OptionsError, RunOptions, build

if TYPE_CHECKING:
    from parism.server.admission import Admission
    from parism.run.executor import CancelToken
    from parism.server.stdio import Wire
    from parism.server.lazy import LazyEngine

log = logging.getLogger("parism.server")

#: How long the reader waits for the hand-over before it passes the message on anyway (a call
#: queued for an execution slot, a slow guard): reading must not stall behind one call.
HANDOVER_WAIT_S = 0.05

#: Seconds a cancelled call is given to kill its child tree (as ``engine._in_thread``).
CANCEL_WAIT_S = 5.0

#: Worker threads for early calls (the engine's ``max_concurrency`` still bounds executions).
WORKERS = 16


class EarlyCall:
    """One early call: its token, and its outcome once the worker is done."""

    def __init__(self, token: CancelToken, loop: asyncio.AbstractEventLoop, arguments: Any) -> None:
        self.token = token
        self.arguments = arguments  # what the handler must be called with to take this call
        self._loop = loop
        self._done = asyncio.Event()
        self.finished = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None
        self.wire: "Wire | None" = None  # set when a handler claims the call
        self._reply_lock = threading.Lock()
        self._reply: Callable[[Any], bool] | None = None
        self._reply_closed = False
        self.answered = False  # the worker wrote the answer itself (the handler says so)

    def offer(self, reply: Callable[[Any], bool]) -> None:
        """The handler's way to write the answer from the worker (``reply(value) -> written``),
        used if the call is still running: the answer then skips the event loop's wake-up and
        the SDK's result path (≈1 ms). Too late once the worker has finished."""
        with self._reply_lock:
            if not self._reply_closed:
                self._reply = reply

    def _answer(self, value: Any) -> None:
        """Worker thread: write the answer if the handler offered how."""
        with self._reply_lock:
            self._reply_closed = True
            reply, self._reply = self._reply, None
        if reply is not None and not self.token.cancelled:  # a cancelled request gets no answer here
            try:
                self.answered = reply(value)
                if self.answered:
                    log.debug("answer written by the call's worker")
            except Exception:  # noqa: BLE001 - the handler answers as usual
                log.exception("an early answer could not be written; the SDK answers instead")

    def settle(self, value: Any, error: BaseException | None) -> None:
        """Worker thread: keep the outcome and wake the handler on the event loop."""
        self._value, self._error = value, error
        self.finished.set()
        try:
            self._loop.call_soon_threadsafe(self._done.set)
        except RuntimeError:  # the loop is closed: the server is exiting
            pass

    async def result(self) -> Any:
        """The engine's answer; cancelled, the command is killed before this re-raises."""
        try:
            await self._done.wait()
        except anyio.get_cancelled_exc_class():
            self.token.cancel()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.finished.wait, CANCEL_WAIT_S)
            raise
        if self._error is not None:
            raise self._error
        return self._value


class Early:
    """The early calls of one session, by request id."""

    def __init__(self, engine: "LazyEngine", admission: "Admission | None" = None) -> None:
        self._engine = engine
        self._admission = admission  # an early call holds one of its slots until its worker ends
        self._loop = asyncio.get_running_loop()
        self._calls: dict[Any, EarlyCall] = {}
        self._lock = threading.Lock()
        self._initialised = False
        self.wire: "Wire | None" = None  # the transport's (Hooks.on_wire)
        self._running = 0  # early calls whose worker has not finished (bounded by WORKERS)
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="parism-early")

    # -- the reader thread ------------------------------------------------------------------

    def begin(self, message: Any) -> None:
        """Called by the reader thread for every message, before the SDK gets it."""
        if isinstance(message, JSONRPCNotification):
            self._notified(message)
            return
        if not isinstance(message, JSONRPCRequest) or message.method != "tools/call" or not self._initialised:
            return
        checked = self._run_options(message.params)
        engine = self._engine.ready()
        if checked is None or engine is None:
            return
        opts, arguments = checked
        # imported here, not at start-up (psutil and the process-tree code are not needed for
        # initialize / tools/list): the engine is built by now, so the module is loaded already
        from parism.run.executor import CancelToken

        started = EarlyCall(CancelToken(), self._loop, arguments)
        with self._lock:
            if message.id in self._calls or self._running >= WORKERS:
                return  # a duplicate id (the SDK answers it), or every worker busy: the usual path
            if self._admission is not None and not self._admission.try_take():
                return  # no free slot (or calls queued before it): the handler queues it
            self._calls[message.id] = started
            self._running += 1
        work = engine.handler(opts)

        def run() -> None:
            value, error = None, None
            try:
                value = work(started.token)
            except BaseException as exc:  # noqa: BLE001 - handed to the handler, which reports it
                error = exc
            finally:
                started.token.handed_over.set()
                with self._lock:
                    self._running -= 1
                if self._admission is not None:
                    self._admission.release()
            if error is None:
                started._answer(value)
            started.settle(value, error)

        self._pool.submit(run)
        started.token.handed_over.wait(HANDOVER_WAIT_S)
        log.debug("early start of request %r", message.id)

    def _notified(self, note: JSONRPCNotification) -> None:
        if note.method == "notifications/initialized":
            self._initialised = True
        elif note.method == "notifications/cancelled" and isinstance(note.params, dict):
            # cancelled, not dropped: if the SDK still dispatches the request, its handler
            # takes this (cancelled) call instead of running the command again
            with self._lock:
                started = self._calls.get(note.params.get("requestId"))
            if started is not None:
                started.token.cancel()

    @staticmethod
    def _run_options(params: Any) -> tuple[RunOptions, dict[str, Any]] | None:
        """The options the handler would build and the arguments it gets, or None when the SDK
        or the options model may refuse the request (it then takes the ordinary path, and its
        refusal)."""
        if not isinstance(params, dict) or params.get("name") != "run" or params.get("task") is not None:
            return None  # (a task-augmented run becomes a job: parism/server/tasks.py)
        try:
            checked = CallToolRequestParams.model_validate(params, by_name=False)
        except ValidationError:
            return None
        arguments = checked.arguments or {}
        opts = build(RunOptions, arguments)
        return None if isinstance(opts, OptionsError) else (opts, arguments)  # type: ignore[return-value]

    # -- the event loop ---------------------------------------------------------------------

    def claim(self, request_id: Any, arguments: Any) -> EarlyCall | None:
        """The early call of this request, taken by its handler (once). A call started for
        other arguments under the same id (a client reusing an id in flight) is stopped, and
        the handler runs its own."""
        with self._lock:
            started = self._calls.pop(request_id, None)
        if started is not None and started.arguments != arguments:
            started.token.cancel()
            return None
        if started is not None:
            started.wire = self.wire
        return started

    def attach(self, wire: "Wire") -> None:
        """``Hooks.on_wire``: where an early call may write its own answer."""
        self.wire = wire

    def answered(self, request_id: Any) -> None:
        """The writer is about to answer this id (before the client can reuse it): a call its
        handler never claimed (the SDK refused the request) is stopped."""
        if not self._calls:
            return
        with self._lock:
            started = self._calls.pop(request_id, None)
        if started is not None:
            started.token.cancel()

    def close(self) -> None:
        """Shutdown: every unclaimed call is cancelled; the workers are not waited for."""
        with self._lock:
            calls, self._calls = list(self._calls.values()), {}
        for started in calls:
            started.token.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)
