"""Per-call ``timeout_ms`` (run, run_paged, the library): bounded by ``guard.max_timeout_ms``,
refused above it naming the bound; a call past it ends as a timeout with its tree killed."""

from __future__ import annotations

import os
import time
from pathlib import Path

from parism.engine import Engine

from tests.unit.engine.conftest import MakeEngine

#: a child that forks a grandchild in the background, prints its pid and waits
FORKS = 'sleep 30 & echo "$!"; wait'


def _gone(pid: int, within_s: float = 3.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not os.path.exists(f"/proc/{pid}") or _zombie(pid):
            return True
        time.sleep(0.05)
    return False


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_call_past_its_own_timeout_is_a_timeout_and_its_tree_is_killed(make_engine: MakeEngine,
                                                                          tmp_path: Path) -> None:
    engine = make_engine(guard={"timeout_ms": 20_000})
    t0 = time.monotonic()
    env = engine.run("sh", ["-c", FORKS], cwd=str(tmp_path), timeout_ms=400)
    took = time.monotonic() - t0
    assert env.failure is not None and env.failure.reason == "timeout", env.failure
    assert "400 ms" in env.failure.message  # the call's own bound, not the configured 20 s
    assert took < 5.0
    grandchild = int(env.stdout.raw.split()[0])
    assert _gone(grandchild), f"sleep {grandchild} outlived the call"


def test_the_configured_timeout_applies_without_one(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"timeout_ms": 300})
    env = engine.run("sh", ["-c", "sleep 5"], cwd=str(tmp_path))
    assert env.failure is not None and env.failure.reason == "timeout"
    longer = engine.run("sh", ["-c", "sleep 0.6; echo done"], cwd=str(tmp_path), timeout_ms=5000)
    assert longer.ok is True and longer.stdout.raw == "done\n"


def test_above_the_bound_is_refused_naming_it_and_nothing_runs(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"max_timeout_ms": 2000})
    marker = tmp_path / "ran"
    for call in (engine.run, engine.run_paged):
        env = call("sh", ["-c", f"touch {marker}"], cwd=str(tmp_path), timeout_ms=2001)
        assert env.failure is not None and (env.failure.kind, env.failure.reason) == ("config", "invalid_request")
        assert "guard.max_timeout_ms" in env.failure.message and "2000" in env.failure.message
        assert "2001" in env.failure.message
    assert not marker.exists()
    ok = engine.run("sh", ["-c", f"touch {marker}"], cwd=str(tmp_path), timeout_ms=2000)
    assert ok.ok is True and marker.exists()


def test_the_configured_default_is_clipped_to_the_bound(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"timeout_ms": 0, "max_timeout_ms": 300})  # 0: unlimited, bounded anyway
    env = engine.run("sh", ["-c", "sleep 5"], cwd=str(tmp_path))
    assert env.failure is not None and env.failure.reason == "timeout"
    assert env.duration_ms < 3000


def test_run_paged_takes_its_own_timeout(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"timeout_ms": 20_000})
    env = engine.run_paged("sh", ["-c", "sleep 5"], cwd=str(tmp_path), timeout_ms=300)
    assert env.failure is not None and env.failure.reason == "timeout"
    assert env.duration_ms < 3000


def test_bad_values_are_refused_by_the_options_model(engine: Engine, tmp_path: Path) -> None:
    for bad, word in ((0, "greater than or equal to 1"), (True, "integer"), ("100", "integer"), (2**40, "less")):
        env = engine.run("echo", ["x"], cwd=str(tmp_path), timeout_ms=bad)
        assert env.failure is not None and env.failure.reason == "invalid_request"
        assert "timeout_ms" in env.failure.message and word in env.failure.message, env.failure.message
