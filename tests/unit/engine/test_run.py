"""``Engine.run`` end to end with real processes: ok semantics, failures, formats, shaping."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from parism.engine import Engine
from tests.unit.engine.conftest import MakeEngine


def test_non_zero_exit_is_an_exec_failure_and_stdout_is_not_parsed(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "a").write_text("")
    env = engine.run("ls", ["-1", "a", "missing"], cwd=str(tmp_path))
    assert env.ok is False and env.exitCode == 2  # GNU ls: 2 = serious trouble (missing operand)
    assert env.failure is not None and (env.failure.kind, env.failure.reason) == ("exec", "non_zero_exit")
    assert env.stdout.raw == "a\n" and env.stdout.parsed is None and env.stdout.parse_error is None
    assert "missing" in env.stderr.raw


def test_grep_no_match_is_parsed_as_empty_with_ok_false(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("alpha\nbeta\n")
    env = engine.run("grep", ["zzz", "f.txt"], cwd=str(tmp_path))
    assert env.ok is False and env.exitCode == 1
    assert env.failure is not None and env.failure.reason == "non_zero_exit"
    assert env.stdout.parsed == {"matches": []}
    hit = engine.run("grep", ["-n", "beta", "f.txt"], cwd=str(tmp_path))
    assert hit.ok and hit.stdout.parsed == {"matches": [{"line": 2, "text": "beta"}]}


def test_parser_not_found_keeps_ok_true(engine: Engine, tmp_path: Path) -> None:
    env = engine.run("echo", ["hello"], cwd=str(tmp_path))
    assert env.ok is True and env.exitCode == 0 and env.stdout.raw == "hello\n"
    # issue #26: ok: true came with a failure object; nothing failed, raw is the answer
    assert env.failure is None
    assert env.stdout.parse_error is not None and env.stdout.parse_error.reason == "parser_not_found"
    assert env.stdout.parsed is None


def test_json_no_raw_drops_raw_only_when_parsed(engine: Engine, tmp_path: Path) -> None:
    for name in ("x", "y"):
        (tmp_path / name).write_text("")
    env = engine.run("ls", ["-1"], cwd=str(tmp_path), format="json-no-raw")
    assert env.stdout.raw == ""
    names = [e["name"] for e in env.stdout.parsed["entries"]]
    assert sorted(names) == sorted(os.listdir(tmp_path))
    kept = engine.run("echo", ["hi"], cwd=str(tmp_path), format="json-no-raw")
    assert kept.stdout.raw == "hi\n"  # no parsed value: raw is the only answer, never dropped


def test_compact_folds_rows_losslessly(engine: Engine, tmp_path: Path) -> None:
    for name in ("one", "two", "three"):
        (tmp_path / name).write_text(name)
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), format="compact")
    table = env.stdout.parsed["entries"]
    assert set(table) == {"schema", "rows"}
    names = [row[table["schema"].index("name")] for row in table["rows"]]
    assert sorted(names) == sorted([".", "..", *os.listdir(tmp_path)])
    sizes = {n: row[table["schema"].index("size_bytes")] for n, row in zip(names, table["rows"], strict=True)}
    assert sizes["three"] == 5 and sizes["one"] == 3


def test_max_items_cuts_with_summary_and_omission(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"max_items": 5})
    for i in range(12):
        (tmp_path / f"f{i:02d}").write_text("")
    env = engine.run("ls", ["-1"], cwd=str(tmp_path), format="json")
    total = len(os.listdir(tmp_path))
    assert len(env.stdout.parsed["entries"]) == 5
    assert env.stdout.parsed["_summary"] == {"total": total, "shown": 5, "truncated": True}
    assert env.omission is not None
    om = [o for o in env.omission if o.reason == "max_items"][0]
    assert (om.rows_total, om.rows_returned, om.rows_omitted) == (total, 5, total - 5)


def test_adaptive_format_only_when_not_chosen(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(parsers={"adaptive_format_threshold": {"compact": 10, "json_no_raw": 20}})
    for i in range(25):
        (tmp_path / f"f{i:02d}").write_text("")
    auto = engine.run("ls", ["-1"], cwd=str(tmp_path))
    assert set(auto.stdout.parsed["entries"]) == {"schema", "rows"} and auto.stdout.raw == ""
    chosen = engine.run("ls", ["-1"], cwd=str(tmp_path), format="json")
    assert isinstance(chosen.stdout.parsed["entries"], list) and chosen.stdout.raw != ""


def test_missing_binary_reports_availability(engine: Engine, tmp_path: Path) -> None:
    env = engine.run("parism-missing-tool", [], cwd=str(tmp_path))
    assert env.ok is False and env.exitCode == -1
    f = env.failure
    assert f is not None and (f.kind, f.reason, f.errorCode) == ("exec", "spawn_failed", "ENOENT")
    assert f.availability is not None and f.availability.status == "missing"


def test_output_limit_stops_reading_and_parses_complete_lines(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"max_output_bytes": 1000})
    env = engine.run("seq", ["1", "1000000"], cwd=str(tmp_path))
    assert env.ok is False and env.truncated is True
    assert env.failure is not None and env.failure.reason == "output_limit"
    assert env.stdout.raw.endswith("\n") and len(env.stdout.raw.encode()) <= 1000
    lines = env.stdout.raw.splitlines()
    assert lines == [str(i) for i in range(1, len(lines) + 1)]
    assert env.omission is not None and env.omission[0].stage == "capture"


def test_invalid_utf8_is_replaced_and_warned_in_review(engine: Engine, tmp_path: Path) -> None:
    env = engine.run("printf", ["a\\377b"], cwd=str(tmp_path), contract_version="next")
    assert env.stdout.raw == "a\ufffdb"
    assert env.review is not None and "stdout_not_utf8" in env.review.warnings
    stable = engine.run("printf", ["a\\377b"], cwd=str(tmp_path))
    assert stable.review is None


def test_include_diff_reports_created_files(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "old").write_text("")
    env = engine.run("sh", ["-c", "echo x > new; rm old"], cwd=str(tmp_path), includeDiff=True)
    assert env.diff is not None
    assert str(tmp_path / "new") in env.diff.created and str(tmp_path / "old") in env.diff.deleted
    assert engine.run("echo", ["x"], cwd=str(tmp_path)).diff is None


def test_bad_request_is_an_envelope_not_an_exception(engine: Engine, tmp_path: Path) -> None:
    env = engine.run("echo", ["x"], cwd=str(tmp_path), format="yaml")
    assert env.ok is False and env.failure is not None and env.failure.reason == "invalid_request"
    env = engine.run("echo", [1, 2], cwd=str(tmp_path))  # type: ignore[list-item]
    assert env.ok is False and env.failure is not None and env.failure.kind == "config"


def test_timeout_is_an_exec_failure_with_the_signal(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"timeout_ms": 500}, telemetry={"enabled": True})
    env = engine.run("sh", ["-c", "sleep 30"], cwd=str(tmp_path))
    assert env.ok is False and env.failure is not None and env.failure.reason == "timeout"
    assert env.signal == "SIGTERM" and env.exitCode == 128 + 15
    assert 400 <= env.duration_ms < 5000
    assert env.telemetry is not None and env.telemetry.exec_ms == float(env.duration_ms)


def test_diff_walk_is_bounded_and_does_not_follow_symlinks(tmp_path: Path) -> None:
    from parism.run.fsdiff import snapshot

    (tmp_path / "link").symlink_to("/etc")
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "too-deep").write_text("")
    snap = snapshot(str(tmp_path))
    assert set(snap.mtimes) == {str(tmp_path / p) for p in ("link", "a", "a/b", "a/b/c")}
    assert not snap.truncated
    assert snapshot(str(tmp_path), max_entries=2).truncated


def test_availability_alternatives_pass_the_live_guard_and_exist(
        make_engine: MakeEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a PATH where `tree` and `find` are absent but `ls` exists; `find` is also not allowed
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ls").symlink_to(shutil.which("ls") or "/bin/ls")
    monkeypatch.setenv("PATH", str(bin_dir))
    engine = make_engine()
    env = engine.run("tree", [], cwd=str(tmp_path))
    f = env.failure
    assert f is not None and f.reason == "spawn_failed" and f.availability is not None
    assert [(a.cmd, a.args) for a in f.availability.alternatives] == [("ls", ["-R"])]
    assert f.availability.install is not None and f.availability.install.package == "tree"
