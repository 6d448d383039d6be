"""The jobs tools' answers (docs/jobs.md); every field is data, ``failure`` only says why this
call itself was refused (the job's own outcome is its ``envelope``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from parism.wire.envelope import Failure, WireModel

JobState = Literal["running", "done", "failed", "stopped"]


class JobAnswer(WireModel):
    """``job_start``, ``job_status``, ``job_stop``: where a job is."""

    job_id: str | None = Field(default=None, description="The job's id (job_status, job_output, job_stop).")
    state: JobState | None = Field(default=None, description=(
        "running; done (exited 0); failed (any other end, see envelope.failure); stopped (job_stop or the "
        "session's end)."))
    cmd: str | None = None
    args: list[str] | None = None
    cwd: str | None = None
    exitCode: int | None = None
    signal: str | None = None
    elapsed_ms: int | None = Field(default=None, description="Since the job started (its run time once ended).")
    output_bytes: int | None = Field(default=None, description="Bytes the command printed so far (stdout + stderr).")
    dropped_bytes: int | None = Field(default=None, description=(
        "Of those, bytes that fell off the front of the job's output ring (server.job_output_bytes)."))
    # the Envelope as its wire dict: run's outputSchema describes it (inlined here it would double
    # the tools/list answer and its start-up cost)
    envelope: dict[str, Any] | None = Field(default=None, description=(
        "The final envelope, as run would answer (parsed; run's outputSchema), once the job has ended; "
        "retained for fetch_result/explain_result/compare_results (review.result_id)."))
    failure: Failure | None = Field(default=None, description="Why this call was refused (nothing else is).")


class JobOutput(WireModel):
    """``job_output``: one page of a job's output (stdout and stderr as they came, masked)."""

    job_id: str | None = None
    state: JobState | None = None
    text: str | None = Field(default=None, description="The page, redacted like every output.")
    start: int | None = Field(default=None, description=(
        "Byte offset of the page's first byte in everything the job printed."))
    end: int | None = Field(default=None, description="Byte offset after its last byte.")
    output_bytes: int | None = Field(default=None, description="Bytes printed so far.")
    skipped_bytes: int | None = Field(default=None, description=(
        "Bytes between the cursor (or the start) and this page that fell off the ring before they were read."))
    redactions: int | None = None
    more: bool | None = Field(default=None, description=(
        "More output is kept past this page now (call again with next_cursor at once)."))
    next_cursor: str | None = Field(default=None, description=(
        "Where the next page starts; absent once the job has ended and everything kept was read."))
    failure: Failure | None = Field(default=None, description="Why this call was refused (nothing else is).")
