"""describe (≤ 2 KB per command, for every allowed command of both shipped profiles), dry_run,
the bad-configuration path (decision 12) and the audit log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parism.engine import Engine, create_engine
from parism.parsers import registry
from tests.unit.engine.conftest import MakeEngine

TOKEN = "ghp_" + "A1b2C3d4E5" * 4  # GitHub token shape (a default output pattern)


@pytest.mark.parametrize("profile", ["readonly", "build"])
def test_describe_every_allowed_command_fits_2kb(tmp_path: Path, profile: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[guard]\nprofile = "{profile}"\nallowed_paths = ["{tmp_path}"]\n')
    engine = create_engine(str(cfg))
    assert engine.errors == []
    commands = engine.cfg.settings.guard.allowed_commands
    assert commands
    # the server runs from the repository, outside allowed_paths: examples must still be shown
    assert engine.describe("ls").examples
    for cmd in commands:
        text = engine.describe(cmd).to_json()
        assert len(text.encode()) <= 2048, f"{cmd}: {len(text.encode())} bytes"
        answer = json.loads(text)
        assert answer["cmd"] == cmd and "failure" not in answer
        for example in answer.get("examples", []):
            assert engine.dry_run(cmd, example, str(tmp_path)).would_pass, (cmd, example)


def test_describe_environment(engine: Engine) -> None:
    d = engine.describe()
    assert d.profile == "profile" and "ls" in (d.allowed_commands or [])
    assert d.available_parsers == registry.available() and "ls" in d.available_parsers
    assert d.sandbox is not None and d.sandbox["mode"] == "off"
    assert d.env is not None and "PATH" in d.env["passed"]
    assert d.config == {"errors": [], "warnings": [], "files": [d.config["files"][0]]}


def test_describe_command_not_allowed(engine: Engine) -> None:
    d = engine.describe("rm")
    assert d.failure is not None and d.failure.reason == "command_not_allowed"


def test_dry_run_passes_and_refuses_without_running(engine: Engine, tmp_path: Path) -> None:
    ok = engine.dry_run("ls", ["-l"], str(tmp_path))
    assert ok.to_wire() == {"would_pass": True, "reason": None, "message": None}
    no = engine.dry_run("rm", ["-rf", str(tmp_path)], str(tmp_path))
    assert no.would_pass is False and no.reason == "command_not_allowed"
    assert tmp_path.exists()


def test_bad_config_answers_describe_and_refuses_everything_else(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[guard]\ntimeout_ms = -5\nno_such_key = 1\n")
    engine = create_engine(str(cfg))
    d = engine.describe()
    assert d.config is not None and d.config["errors"]
    assert any("guard.no_such_key" in e for e in d.config["errors"])
    env = engine.run("ls", [], cwd=str(tmp_path))
    assert env.ok is False and env.exitCode == -1
    assert env.failure is not None and (env.failure.kind, env.failure.reason) == ("config", "invalid_config")
    assert str(cfg) in env.failure.message and "guard.timeout_ms" in env.failure.message
    paged = engine.run_paged("ls", [], cwd=str(tmp_path))
    assert paged.failure is not None and paged.failure.reason == "invalid_config"
    assert engine.dry_run("ls", []).reason == "invalid_config"
    assert engine.parse_output("ls", [], "a\n").failure.reason == "invalid_config"  # type: ignore[union-attr]


def test_audit_log_one_masked_line_per_call(make_engine: MakeEngine, tmp_path: Path,
                                            capfd: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "audit" / "log.jsonl"
    engine = make_engine(audit={"enabled": True, "path": str(log)},
                         guard={"secrets": {"output_redaction_enabled": True}})
    env = engine.run("echo", [TOKEN], cwd=str(tmp_path))
    assert env.stdout.raw == "[REDACTED]\n" and env.args == ["[REDACTED]"]
    engine.run("rm", ["-rf", "/"], cwd=str(tmp_path))
    engine.dry_run("ls", [], str(tmp_path))
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [(x["tool"], x["cmd"], x["decision"], x["reason"]) for x in lines] == [
        ("run", "echo", "allowed", "parser_not_found"), ("run", "rm", "blocked", "command_not_allowed"),
        ("dry_run", "ls", "allowed", None)]
    assert lines[0]["exitCode"] == 0 and lines[1]["exitCode"] is None
    assert TOKEN not in log.read_text() and lines[0]["args"] == ["[REDACTED]"]
    assert set(lines[0]) == {"ts", "tool", "cmd", "args", "cwd", "decision", "reason", "exitCode", "duration_ms"}
    out, _ = capfd.readouterr()
    assert out == ""


def test_audit_to_stderr_never_stdout(make_engine: MakeEngine, tmp_path: Path,
                                      capfd: pytest.CaptureFixture[str]) -> None:
    engine = make_engine(audit={"enabled": True, "path": "-"})
    engine.run("echo", ["x"], cwd=str(tmp_path))
    out, err = capfd.readouterr()
    assert out == "" and json.loads(err.strip().splitlines()[-1])["cmd"] == "echo"


def test_parse_output_parses_saved_text(engine: Engine) -> None:
    env = engine.parse_output("grep", ["-n", "x", "f"], "3:xyz\n")
    assert env.ok and env.stdout.parsed == {"matches": [{"line": 3, "text": "xyz"}]}
    bad = engine.parse_output("grep", [], "x", os="plan9")
    assert bad.ok is False and bad.failure is not None and bad.failure.reason == "invalid_request"


def test_every_alternative_sample_still_yields_an_alternative() -> None:
    """A sample that a parser has learned to read gives no hint any more: it must be replaced,
    or describe silently loses its alternatives."""
    from parism.describe import ALTERNATIVE_SAMPLES, _alternatives

    for cmd, samples in ALTERNATIVE_SAMPLES.items():
        found = _alternatives(cmd, "linux", lambda c, a: True)
        assert len(found) == len(samples), f"{cmd}: {samples} → {found}"
