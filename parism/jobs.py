"""Long-running jobs: ``run`` in the background, polled (docs/jobs.md).

A job is one ``run`` call — the same options model, guard, sandbox, executor and finisher —
whose execution goes on in a thread of its own after ``job_start`` has answered its id:

- the guard, the binary lookup and the sandbox's launcher are decided *before* ``job_start``
  answers (a refusal is the answer, with its envelope; no job is made);
- what the command prints (stdout and stderr, in the order read) is teed into a bounded ring
  (``server.job_output_bytes``, default 1 MiB); what falls off its front is counted
  (``dropped_bytes``), never silently lost; ``job_output`` reads it in pages of at most
  ``server.job_page_bytes``, each redacted like every output, cut at line ends so that a
  value is not split between two pages (a line longer than a page is the exception);
- past ``guard.max_output_bytes`` the final envelope's capture stops growing but the command is
  not killed (the pipes are still drained into the ring): its envelope says so (``truncated``,
  an omission);
- the final envelope (parsed, as ``run`` answers) is kept with the job and retained in the
  result store like a ``retain: true`` run;
- at most ``server.max_jobs`` jobs run at once (they do not take ``guard.max_concurrency``'s
  slots); ended jobs are kept until ``server.max_jobs`` newer ones ended after them;
- ``job_stop`` and :meth:`JobTable.close` (the session's end: stdin EOF, SIGTERM, engine
  close) cancel the job: the executor kills its whole tree, as on a cancelled ``run``.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from parism.wire.envelope import Envelope, Failure, Omission
from parism.run.executor import CancelToken
from parism.wire.jobs import JobAnswer, JobOutput, JobState
from parism.results import cursor as cursors

if TYPE_CHECKING:
    from parism.wire.options import JobOutputOptions, JobStartOptions

STOP_WAIT_S = 10.0  # job_stop waits this long for the tree to be gone
CLOSE_WAIT_S = 1.2  # the session's end: every job's tree killed within this (the server exits at 1.5 s)
CURSOR_QUERY = "job-output"
ALIGN_BYTES = 4096  # a page that starts mid-line skips at most this much to the next line


class Ring:
    """The last ``cap`` bytes of a job's output, with absolute offsets (thread-safe)."""

    def __init__(self, cap: int) -> None:
        self.cap = max(1, cap)
        self.buf = bytearray()
        self.base = 0  # absolute offset of buf[0]
        self.total = 0
        self.lock = threading.Lock()

    def append(self, data: bytes) -> None:
        with self.lock:
            self.buf += data
            self.total += len(data)
            over = len(self.buf) - self.cap
            if over > 0:
                del self.buf[:over]
                self.base += over

    def read(self, offset: int, size: int) -> tuple[int, bytes, int, int]:
        """(start, bytes from there, bytes skipped because they fell off, total so far)."""
        with self.lock:
            start = max(offset, self.base)
            at = start - self.base
            return start, bytes(self.buf[at:at + size]), start - offset, self.total

    @property
    def dropped(self) -> int:
        return self.base


class Job:
    def __init__(self, job_id: str, req: Any, prep: Any, ring_bytes: int) -> None:
        self.id = job_id
        self.req = req
        self.prep = prep
        self.ring = Ring(ring_bytes)
        self.token = CancelToken()
        self.token.tee = self.ring.append
        self.started = time.monotonic()
        self.ended: float | None = None
        self.envelope: Envelope | None = None
        self.wire: dict[str, Any] | None = None
        self.stop_requested = False
        self.done = threading.Event()
        self.thread: threading.Thread | None = None

    @property
    def state(self) -> JobState:
        if self.envelope is None:
            return "running"
        if self.stop_requested:
            return "stopped"
        return "done" if self.envelope.ok else "failed"


class JobTable:
    """The engine's jobs (``Engine.jobs``)."""

    def __init__(self, engine: Any, request: Callable[[str, Any], Any]) -> None:
        """``engine``: the Engine (this module sits beside it, so it is not imported: no cycle);
        ``request``: ``Request.of``, which builds a call's request."""
        self.engine = engine
        self.request = request
        server = engine.cfg.settings.server
        self.max_jobs = server.max_jobs
        self.ring_bytes = server.job_output_bytes
        self.page_bytes = server.job_page_bytes
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False

    # -- the tools --------------------------------------------------------------------

    def start(self, opts: JobStartOptions) -> JobAnswer:
        engine = self.engine
        guard = engine.cfg.settings.guard
        opts = opts.model_copy(update={"retain": True, "timeout_ms": opts.timeout_ms or guard.max_timeout_ms})
        req = self.request("job_start", opts)
        with self._lock:
            running = sum(1 for j in self._jobs.values() if j.envelope is None)
            if self._closed or running >= self.max_jobs:
                return JobAnswer(failure=self._full(running))
        prep = engine._prepare(req)
        if isinstance(prep, Envelope):  # refused before anything ran: no job
            env = engine._echo_masked(req, prep)
            return JobAnswer(state="failed", cmd=env.cmd, args=env.args, cwd=env.cwd, envelope=env.to_wire(),
                             failure=env.failure)
        prep.spec = replace(prep.spec, drain_past_cap=True)
        job = Job("j_" + secrets.token_hex(8), req, prep, self.ring_bytes)
        with self._lock:
            running = sum(1 for j in self._jobs.values() if j.envelope is None)
            if self._closed or running >= self.max_jobs:  # another start won the last place meanwhile
                return JobAnswer(failure=self._full(running))
            self._jobs[job.id] = job
            self._evict()
        job.thread = threading.Thread(target=self._run, args=(job,), name=f"parism-{job.id}", daemon=True)
        job.thread.start()
        return self.answer(job)

    def find(self, job_id: str) -> Job | None:
        """The job itself (the task runtime keeps it past the table's eviction)."""
        with self._lock:
            return self._jobs.get(job_id)

    def status(self, job_id: str) -> JobAnswer:
        job = self._get(job_id)
        return job if isinstance(job, JobAnswer) else self.answer(job)

    def stop(self, job_id: str) -> JobAnswer:
        job = self._get(job_id)
        if isinstance(job, JobAnswer):
            return job
        if job.envelope is None:
            job.stop_requested = True
            job.token.cancel()
            job.done.wait(STOP_WAIT_S)
        return self.answer(job)

    def output(self, opts: JobOutputOptions) -> JobOutput:
        job = self._get(opts.job_id)
        if isinstance(job, JobAnswer):
            return JobOutput(failure=job.failure)
        ended = job.envelope is not None  # read before the ring: all output is in once it ended
        if opts.cursor is None:
            offset = job.ring.dropped
            mid_line = offset > 0
        else:
            got = cursors.verify(opts.cursor, job.id, cursors.query_hash({"q": CURSOR_QUERY}))
            if isinstance(got, cursors.CursorError):
                return JobOutput(job_id=job.id, state=job.state, failure=Failure(
                    kind="config", reason=got.reason, message=f"parameter 'cursor': {got.message}"))
            offset, mid_line = got, False
        start, data, skipped, total = job.ring.read(offset, self.page_bytes)
        mid_line = mid_line or skipped > 0
        if mid_line and data:  # the front fell off inside a line: start at the next one
            cut = data.find(b"\n", 0, ALIGN_BYTES)
            if cut >= 0:
                data, start, skipped = data[cut + 1:], start + cut + 1, skipped + cut + 1
        data = _page_end(data, full=len(data) >= self.page_bytes, final=ended and start + len(data) >= total)
        end = start + len(data)
        masked = self.engine.redactor.mask(data.decode("utf-8", "replace"))
        finished = ended and end >= total
        return JobOutput(
            job_id=job.id, state=job.state, text=masked.text, start=start, end=end, output_bytes=total,
            skipped_bytes=skipped, redactions=masked.count, more=end < total,
            next_cursor=None if finished else cursors.sign(job.id, cursors.query_hash({"q": CURSOR_QUERY}), end),
        )

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """The session's end: no new job, every running one cancelled, its tree killed (waited
        for, bounded)."""
        with self._lock:
            self._closed = True
            running = [j for j in self._jobs.values() if j.envelope is None]
        for job in running:
            job.stop_requested = True
            job.token.cancel()
        deadline = time.monotonic() + wait_s
        for job in running:
            job.done.wait(max(0.0, deadline - time.monotonic()))

    # -- helpers ------------------------------------------------------------------------

    def answer(self, job: Job) -> JobAnswer:
        env = job.envelope
        echo = self.engine.finisher.echo(job.req, job.prep.decision.cwd)
        end = job.ended if job.ended is not None else time.monotonic()
        return JobAnswer(
            job_id=job.id, state=job.state, cmd=echo.text(job.req.cmd), args=echo.args(),
            cwd=echo.text(job.prep.decision.cwd), exitCode=env.exitCode if env is not None else None,
            signal=env.signal if env is not None else None, elapsed_ms=int((end - job.started) * 1000),
            output_bytes=job.ring.total, dropped_bytes=job.ring.dropped,
            envelope=job.wire if env is not None else None,
        )

    def _run(self, job: Job) -> None:
        engine = self.engine
        try:
            env = engine._run_prepared(job.prep, job.token)
            env = engine._echo_masked(job.req, env)
            if env.truncated and job.ring.total > 0:
                note = Omission(stage="capture", reason=(
                    f"the job printed {job.ring.total} bytes: its envelope holds the first "
                    f"{job.prep.spec.max_stdout} of stdout (guard.max_output_bytes); job_output has the last "
                    f"{job.ring.cap} of stdout and stderr"))
                env = env.model_copy(update={"omission": [*(env.omission or []), note]})
        except Exception as exc:  # noqa: BLE001 - the engine promises values; never a silent end
            env = engine._request_error(job.req, f"internal error in the job: {type(exc).__name__}")
        job.ended = time.monotonic()
        job.wire = env.to_wire()  # serialised once: every later job_status answers it
        job.envelope = env
        job.done.set()
        with self._lock:
            self._evict()

    def _evict(self) -> None:
        """Keep at most ``max_jobs`` ended jobs (the oldest go first); under the lock."""
        ended = [j for j in self._jobs.values() if j.envelope is not None]
        for job in sorted(ended, key=lambda j: j.ended or 0)[:max(0, len(ended) - self.max_jobs)]:
            del self._jobs[job.id]

    def _get(self, job_id: str) -> Job | JobAnswer:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            from parism.wire.clip import clip

            return JobAnswer(failure=Failure(
                kind="config", reason="unknown_job",
                message=f"no job '{clip(job_id, 64)}': never started here or ended and evicted "
                        f"(the last {self.max_jobs} ended jobs are kept)",
                hint="job_start answers the job_id; an ended job's envelope stays fetchable with fetch_result "
                     "while the result store keeps it"))
        return job

    def _full(self, running: int) -> Failure:
        if self._closed:
            return Failure(kind="config", reason="jobs_closed", message="the session is ending: no new job")
        return Failure(kind="config", reason="too_many_jobs",
                       message=f"{running} jobs are running: server.max_jobs ({self.max_jobs}) is the most",
                       hint="wait for one to end (job_status) or stop one (job_stop)")


def _page_end(data: bytes, *, full: bool, final: bool) -> bytes:
    """Where a page ends: after its last complete line; a page with no line end is cut at a
    character boundary when it is full, kept whole when it is the job's last output, and
    left for the next call otherwise (the line is still being written)."""
    if final:
        return data
    cut = data.rfind(b"\n")
    if cut >= 0:
        return data[:cut + 1]
    if not full:
        return b""
    end = len(data)
    back = 0
    while back < 4 and end - back - 1 >= 0 and data[end - back - 1] & 0xC0 == 0x80:
        back += 1
    lead = data[end - back - 1] if end - back - 1 >= 0 else 0
    width = 4 if lead >= 0xF0 else 3 if lead >= 0xE0 else 2 if lead >= 0xC0 else 1
    return data[:end - back - 1] if width > back + 1 else data
