"""Seed behaviours of issue 12 item 6 and the echo bounds of item 3, through a real engine and
real commands (``sh``, ``echo``); each has its control (the same call without the setting)."""

from __future__ import annotations

from pathlib import Path

from parism.config.trust import widening
from parism.parsers import registry

from tests.unit.engine.conftest import MakeEngine

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # the GitHub token shape the defaults mask


def test_empty_output_patterns_turn_output_redaction_off(make_engine: MakeEngine, tmp_path: Path) -> None:
    on = make_engine(guard={"secrets": {"output_redaction_enabled": True}})
    off = make_engine(guard={"secrets": {"output_redaction_enabled": True, "output_patterns": []}})
    assert TOKEN not in on.run("echo", [TOKEN], str(tmp_path)).stdout.raw  # control: the default rules mask it
    assert off.run("echo", [TOKEN], str(tmp_path)).stdout.raw == TOKEN + "\n"


def test_an_untrusted_project_may_not_turn_redaction_off() -> None:
    problems = widening({"guard.secrets.output_patterns": []}, {}, "project:./parism.toml")
    assert [p.key for p in problems] == ["guard.secrets.output_patterns"]
    assert widening({"guard.secrets.output_patterns": ["x-[0-9]+"]}, {}, "project:./parism.toml") == []


def test_exec_failure_message_carries_the_commands_stderr(engine: object, tmp_path: Path) -> None:
    env = engine.run("sh", ["-c", "echo 'disk on fire' >&2; exit 3"], str(tmp_path))  # type: ignore[attr-defined]
    assert env.exitCode == 3 and env.failure.reason == "non_zero_exit"
    assert env.failure.message == "'sh' exited with code 3: disk on fire"
    long = engine.run("sh", ["-c", "head -c 100000 /dev/zero | tr '\\0' e >&2; exit 1"], str(tmp_path))  # type: ignore[attr-defined]
    assert len(long.stderr.raw) == 100_000  # the whole stderr stays where it belongs
    assert len(long.failure.message) < 400 and "…[+" in long.failure.message


def test_describe_a_known_command_that_is_not_allowed(make_engine: MakeEngine) -> None:
    engine = make_engine(guard={"allowed_commands": ["echo"]})
    d = engine.describe("ls")
    assert d.failure is not None and d.failure.reason == "command_not_allowed"
    assert d.policy is not None and d.policy["origin"] != "none" and "-l" in d.policy["flags"].split()
    assert d.parser is not None and d.parser["rows_key"] == registry.get_parser("ls").rows_key
    assert d.examples and all(e in [list(x) for x in registry.get_parser("ls").examples] for e in d.examples)
    unknown = engine.describe("no-such-tool-anywhere")
    assert unknown.failure is not None and unknown.policy is None and unknown.parser is None


def test_telemetry_adds_per_command_statistics_to_describe(make_engine: MakeEngine, tmp_path: Path) -> None:
    plain = make_engine()
    assert plain.describe("echo").stats is None and plain.describe().stats is None  # control
    engine = make_engine(telemetry={"enabled": True})
    engine.run("echo", ["a"], str(tmp_path))
    engine.run("sh", ["-c", "exit 4"], str(tmp_path))
    engine.run("echo", ["b"], str(tmp_path))
    engine.run("rm", ["-rf", "/nothing"], str(tmp_path))
    echo = engine.describe("echo").stats
    assert echo is not None and echo["calls"] == 2 and echo["failed"] == 0 and echo["blocked"] == 0
    assert echo["max_ms"] >= echo["mean_ms"] >= 0
    whole = engine.describe().stats
    assert whole is not None and whole["sh"]["failed"] == 1
    assert whole["(not allowed)"] == {"calls": 1, "blocked": 1, "failed": 0, "max_ms": 0, "mean_ms": 0.0}


def test_a_refused_10_mb_command_comes_back_bounded(engine: object) -> None:
    huge = "x" * 10_000_000
    env = engine.run(huge, ["a" * 5_000_000])  # type: ignore[attr-defined]
    wire = env.to_json()
    assert env.failure.reason == "arg_not_allowed"  # oversize is refused before the allowlist (issue 9)
    assert len(wire) < 8_000  # was 8 echoes of the 10 MB name
    assert env.cmd.startswith("x" * 256) and env.cmd.endswith(f"…[+{10_000_000 - 256} chars]")
    assert env.args == ["a" * 256 + f"…[+{5_000_000 - 256} chars]"]
    checked = engine.dry_run(huge)  # type: ignore[attr-defined]
    assert checked.would_pass is False and len(checked.to_json()) < 4_000


def test_short_echoes_are_untouched(engine: object) -> None:
    env = engine.run("rm", ["-rf", "/"])  # type: ignore[attr-defined]
    assert env.cmd == "rm" and env.args == ["-rf", "/"] and "…[+" not in env.to_json()
