"""``stdin`` on ``run`` (issue 28): the command reads exactly the call's text, bounded by
``guard.max_stdin_bytes``; absent, it reads /dev/null as before (and never a terminal)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from parism.engine import Engine

from tests.unit.engine.conftest import MakeEngine


def test_the_command_reads_the_text_given(engine: Engine, tmp_path: Path) -> None:
    text = "first line\nzweite Zeile ✓\n" * 100
    env = engine.run("cat", [], cwd=str(tmp_path), stdin=text, format="json")
    assert env.ok is True and env.stdout.raw == text


def test_large_stdin_arrives_whole(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"max_output_bytes": 4 * 1024 * 1024})
    text = "".join(f"{i:07d}\n" for i in range(100_000))  # 800 KB: many pipe buffers
    env = engine.run("sh", ["-c", "cat | sha256sum"], cwd=str(tmp_path), stdin=text)
    assert env.ok is True, env.failure
    assert env.stdout.raw.split()[0] == hashlib.sha256(text.encode()).hexdigest()


def test_without_stdin_the_command_reads_dev_null_not_a_terminal(engine: Engine, tmp_path: Path) -> None:
    env = engine.run("sh", ["-c", "wc -c; test -t 0 && echo tty || echo notty"], cwd=str(tmp_path))
    assert env.stdout.raw.split() == ["0", "notty"]
    env = engine.run("sh", ["-c", "test -t 0 && echo tty || echo notty"], cwd=str(tmp_path), stdin="x")
    assert env.stdout.raw == "notty\n"


def test_echoed_secrets_are_redacted_and_stdin_is_never_echoed(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"secrets": {"output_redaction_enabled": True}})
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    env = engine.run("cat", [], cwd=str(tmp_path), stdin=f"token={secret}\n")
    assert secret not in env.to_json()
    assert "[REDACTED]" in env.stdout.raw
    control = engine.run("echo", [f"token={secret}"], cwd=str(tmp_path))
    assert secret not in control.to_json()  # the same rule that masks every output


def test_above_the_bound_is_refused_with_the_size_and_nothing_runs(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"max_stdin_bytes": 10})
    marker = tmp_path / "ran"
    env = engine.run("sh", ["-c", f"touch {marker}"], cwd=str(tmp_path), stdin="ä" * 6)  # 12 bytes
    assert env.failure is not None and (env.failure.kind, env.failure.reason) == ("config", "invalid_request")
    assert "12 bytes" in env.failure.message and "guard.max_stdin_bytes (10)" in env.failure.message
    assert "ä" not in env.failure.message
    assert not marker.exists()
    ok = engine.run("cat", [], cwd=str(tmp_path), stdin="ä" * 5)
    assert ok.ok is True and ok.stdout.raw == "ä" * 5


def test_a_lone_surrogate_is_refused_not_guessed(engine: Engine, tmp_path: Path) -> None:
    env = engine.run("cat", [], cwd=str(tmp_path), stdin="ok\ud800")
    assert env.failure is not None and env.failure.reason == "invalid_request"
    assert "'stdin'" in env.failure.message and "surrogate" in env.failure.message


def test_stdin_is_a_parameter_of_run_only(engine: Engine, tmp_path: Path) -> None:
    env = engine.run_paged("cat", [], cwd=str(tmp_path), stdin="x")
    assert env.failure is not None and "'stdin'" in env.failure.message
    for bad in (1, ["x"], None and 0):
        if bad is None:
            continue
        env = engine.run("cat", [], cwd=str(tmp_path), stdin=bad)
        assert env.failure is not None and "'stdin'" in env.failure.message and "a string" in env.failure.message
