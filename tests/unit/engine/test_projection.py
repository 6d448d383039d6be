"""Projection through ``Engine.run`` on a real directory: answers checked against ``os.lstat``,
refusals before the command runs when the parser's row fields already tell."""

from __future__ import annotations

import os
from pathlib import Path

from parism.engine import Engine


def _tree(root: Path) -> None:
    for i, size in enumerate((0, 10, 300, 7000, 10, 55)):
        (root / f"f{i}.txt").write_bytes(b"x" * size)
    (root / "sub").mkdir()
    (root / "link").symlink_to("f1.txt")


def test_where_sort_limit_select_match_lstat(engine: Engine, tmp_path: Path) -> None:
    _tree(tmp_path)
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), where=[{"field": "type", "op": "eq", "value": "file"},
                                                             {"field": "name", "op": "prefix", "value": "f"}],
                     sort_by={"field": "size_bytes", "order": "desc"}, limit=3, select=["size_bytes", "name"])
    assert env.ok and env.failure is None, env.failure
    files = [p for p in tmp_path.iterdir() if p.name.startswith("f") and p.is_file() and not p.is_symlink()]
    want = sorted(((os.lstat(p).st_size, p.name) for p in files), key=lambda t: -t[0])  # stable: equal sizes by ls order
    parsed = env.stdout.parsed
    assert [list(r) for r in parsed["entries"]] == [["size_bytes", "name"]] * 3
    assert [r["size_bytes"] for r in parsed["entries"]] == [s for s, _ in want[:3]]
    assert parsed["_summary"] == {"total": len(list(tmp_path.iterdir())) + 2, "matched": len(files), "shown": 3}
    assert env.stdout.raw == ""  # projection replaces raw (§11)
    assert env.omission is not None and env.omission[0].stage == "projection"
    assert env.omission[0].rows_returned == 3 and env.omission[0].rows_selected == len(files)


def test_unknown_field_is_refused_before_running(engine: Engine, tmp_path: Path) -> None:
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), select=["name", "sise_bytes"])
    assert env.ok is False and env.exitCode == -1 and env.duration_ms == 0  # nothing ran
    assert env.failure is not None and (env.failure.kind, env.failure.reason) == ("config", "unknown_field")
    assert "'sise_bytes'" in env.failure.message and "size_bytes" in env.failure.message


def test_unknown_required_field_is_refused_before_running(engine: Engine, tmp_path: Path) -> None:
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), budget={"max_tokens": 5000, "required_fields": ["name", "nosuch"]})
    assert env.ok is False and env.exitCode == -1 and env.duration_ms == 0  # nothing ran
    assert env.failure is not None and (env.failure.kind, env.failure.reason) == ("config", "unknown_field")
    assert "'nosuch' in budget.required_fields.1" in env.failure.message and "size_bytes" in env.failure.message


def test_a_declared_required_field_these_rows_lack_fails_after_running(engine: Engine, tmp_path: Path) -> None:
    # `size` is a declared ls field (the -h form) that `ls -la` rows do not carry: known to the
    # schema, so the command runs; missing from the rows, so the budget refuses a partial answer
    _tree(tmp_path)
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), budget={"max_tokens": 5000, "required_fields": ["size"]})
    assert env.ok is False and env.exitCode == 0 and env.duration_ms >= 0  # it ran: the exit status is the command's
    assert env.failure is not None and env.failure.reason == "required_field_missing"


def test_type_mismatch_after_running_keeps_raw(engine: Engine, tmp_path: Path) -> None:
    _tree(tmp_path)
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), where=[{"field": "size_bytes", "op": "eq", "value": "10"}])
    assert env.ok is False and env.exitCode == 0
    assert env.failure is not None and env.failure.reason == "type_mismatch" and "'size_bytes'" in env.failure.message
    assert "f1.txt" in env.stdout.raw and env.stdout.parsed is None


def test_limit_zero_leaves_the_summary(engine: Engine, tmp_path: Path) -> None:
    _tree(tmp_path)
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), limit=0)
    assert env.stdout.parsed["entries"] == [] and env.stdout.parsed["_summary"]["shown"] == 0


def test_budget_cuts_rows_says_so_and_points_to_the_rest(engine: Engine, tmp_path: Path) -> None:
    from pydantic_core import to_json

    from parism.output.shape.tokens import approx

    for i in range(300):
        (tmp_path / f"file-{i:03d}.txt").write_text("x" * i)
    full = engine.run("ls", ["-la"], cwd=str(tmp_path), format="json", select=["name", "size_bytes"], limit=1000)
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), select=["name", "size_bytes"], budget={"max_tokens": 1500})
    wire = env.to_wire()
    assert env.budget is not None and env.budget.budget_met
    assert env.budget.measured_tokens == approx(to_json(wire).decode()) <= 1500
    shown, total = env.stdout.parsed["entries"], len(os.listdir(tmp_path)) + 2  # . and ..
    assert 0 < len(shown) < total and shown == full.stdout.parsed["entries"][:len(shown)]
    assert env.stdout.parsed["_summary"] == {"total": total, "matched": total, "shown": len(shown)}
    cont = env.continuation
    assert cont is not None and cont.retained is False and cont.rows_left == total - len(shown) and cont.total == total
    assert cont.hint is not None and "run_paged" in cont.hint and "retain" in cont.hint
    budget_cut = [o for o in env.omission or [] if o.stage == "budget"]
    assert budget_cut and budget_cut[0].rows_omitted == cont.rows_left


def test_a_budget_has_no_fixed_minimum(engine: Engine, tmp_path: Path) -> None:
    """Issue #26: budgets under 1,200 tokens were refused before running although a whole
    ``ls -la`` answer is a few hundred; now the answer's own size decides."""
    _tree(tmp_path)
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), budget={"max_tokens": 600})
    assert env.ok, env.failure
    assert env.budget is not None and env.budget.budget_met and env.budget.measured_tokens <= 600
    tiny = engine.run("ls", ["-la"], cwd=str(tmp_path), budget={"max_tokens": 20})
    assert tiny.ok is False and tiny.exitCode == 0 and tiny.failure is not None  # it ran, then nothing fitted
    assert tiny.failure.reason == "budget_too_small" and "give at least" in tiny.failure.message
    need = int(tiny.failure.message.rsplit("give at least ", 1)[1])
    again = engine.run("ls", ["-la"], cwd=str(tmp_path), budget={"max_tokens": need})
    assert again.ok and again.budget is not None and again.budget.measured_tokens <= need
