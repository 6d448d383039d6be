"""Jobs in the engine (issue 28, docs/jobs.md): the output ring counts what falls off, pages are
whole lines and redacted, a job is not killed at the capture cap, a job's default timeout is
guard.max_timeout_ms, and closing the engine kills every job's tree."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from parism.wire.options import JobIdOptions, JobOutputOptions, JobStartOptions, build

from tests.unit.engine.conftest import MakeEngine
from tests.unit.engine.test_call_timeout import _gone


def start(engine: Any, script: str, cwd: Path, **options: Any) -> Any:
    opts = build(JobStartOptions, {"cmd": "sh", "args": ["-c", script], "cwd": str(cwd), **options})
    return engine.call(opts)


def wait_done(engine: Any, job_id: str, within_s: float = 20.0) -> Any:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        status = engine.call(build(JobIdOptions, {"job_id": job_id}))
        if status.state != "running":
            return status
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still running after {within_s} s")


def read_all(engine: Any, job_id: str) -> list[Any]:
    pages, cursor = [], None
    while True:
        page = engine.call(build(JobOutputOptions, {"job_id": job_id, **({"cursor": cursor} if cursor else {})}))
        assert page.failure is None, page.failure
        pages.append(page)
        cursor = page.next_cursor
        if cursor is None:
            return pages


def lines(n: int) -> str:
    return "".join(f"row {i:06d} {'y' * 40}\n" for i in range(n))


def test_the_ring_keeps_the_tail_and_counts_what_fell_off(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(server={"job_output_bytes": 65536, "job_page_bytes": 8192},
                         guard={"max_output_bytes": 4 * 1024 * 1024})
    text = lines(5000)  # 256 KB
    (tmp_path / "big.txt").write_text(text)
    job = start(engine, "cat big.txt", tmp_path)
    status = wait_done(engine, job.job_id)
    total = len(text.encode())
    assert status.state == "done" and status.output_bytes == total
    assert status.dropped_bytes == total - 65536
    pages = read_all(engine, job.job_id)
    first = pages[0]
    assert first.start > status.dropped_bytes and text.encode()[first.start - 1:first.start] == b"\n"  # a line start
    assert first.skipped_bytes == first.start - status.dropped_bytes
    got = "".join(p.text for p in pages)
    assert got == text.encode()[first.start:].decode() and got.endswith("row 004999 " + "y" * 40 + "\n")
    assert all(len(p.text.encode()) <= 8192 and p.text.endswith("\n") for p in pages)
    assert status.envelope["stdout"]["raw"] == text  # the envelope is the whole output (under the cap)


def test_a_job_is_not_killed_at_the_capture_cap(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"max_output_bytes": 1024})
    text = lines(400)  # 20 KB
    (tmp_path / "big.txt").write_text(text)
    status = wait_done(engine, start(engine, "cat big.txt; echo finished", tmp_path).job_id)
    assert status.state == "done" and status.exitCode == 0  # a run would end output_limit here
    env = status.envelope
    assert env["truncated"] is True and len(env["stdout"]["raw"].encode()) <= 1024
    assert any("guard.max_output_bytes" in o["reason"] for o in env["omission"])
    assert "".join(p.text for p in read_all(engine, status.job_id)) == text + "finished\n"
    ran = engine.run("sh", ["-c", "cat big.txt; echo finished"], cwd=str(tmp_path))
    assert ran.failure is not None and ran.failure.reason == "output_limit"  # the control: run stops there


def test_pages_are_redacted(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"secrets": {"output_redaction_enabled": True}})
    secret = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    status = wait_done(engine, start(engine, f"echo before; echo token={secret}; echo after", tmp_path).job_id)
    pages = read_all(engine, status.job_id)
    text = "".join(p.text for p in pages)
    assert secret not in text and "[REDACTED]" in text and text.startswith("before\n")
    assert sum(p.redactions for p in pages) >= 1
    assert secret not in str(status.envelope)


def test_a_job_defaults_to_the_largest_timeout(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"timeout_ms": 100, "max_timeout_ms": 1500})
    t0 = time.monotonic()
    status = wait_done(engine, start(engine, "sleep 0.5; echo slept", tmp_path).job_id)
    assert status.state == "done", status.envelope  # past guard.timeout_ms: a job is for longer commands
    over = wait_done(engine, start(engine, "sleep 10", tmp_path).job_id)
    assert over.state == "failed" and over.envelope["failure"]["reason"] == "timeout"
    assert time.monotonic() - t0 < 8
    refused = start(engine, "true", tmp_path, timeout_ms=1501)
    assert refused.job_id is None and refused.failure is not None and "guard.max_timeout_ms" in refused.failure.message


def test_closing_the_engine_kills_every_job(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine()
    job = start(engine, 'sleep 30 & echo "$!"; wait', tmp_path)
    deadline = time.monotonic() + 5
    text = ""
    while not text.strip() and time.monotonic() < deadline:
        text = engine.call(build(JobOutputOptions, {"job_id": job.job_id})).text
        time.sleep(0.05)
    pid = int(text.split()[0])
    assert os.path.exists(f"/proc/{pid}")  # the control: it is running before the close
    engine.close()
    assert _gone(pid), f"sleep {pid} outlived the engine"
    later = start(engine, "true", tmp_path)
    assert later.failure is not None and later.failure.reason == "jobs_closed"


def test_max_jobs_zero_refuses_every_job(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(server={"max_jobs": 0})
    refused = start(engine, "true", tmp_path)
    assert refused.failure is not None and refused.failure.reason == "too_many_jobs"
