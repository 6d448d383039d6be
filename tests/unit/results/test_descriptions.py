"""Every claim of the tool descriptions, the input schema texts and the server instructions
checked against what the server does (issue #26: "Unset: json" was not so, compact was
recommended "to save tokens" at 2.6-5.8x the default, globs were said to be blocked yet ``wc -l
*`` ran with a literal ``*``, no description said results expire).  The default's cost against
every format is in ``tests/unit/shape/test_token_golden.py``; the table reading in
``test_naive_reader.py``; the idle TTL in ``test_store.py``."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from parism.config.model import Settings
from parism.server.app import INSTRUCTIONS
from parism.server.tools import KEPT, input_schema, tool_rows
from parism.wire.options import Budget, RunOptions
from mcp.types import ToolAnnotations

ROWS = {r.name: r for r in tool_rows(ToolAnnotations())}


def texts() -> str:
    """Every description the server publishes: instructions, tools, input schemas."""
    parts = [INSTRUCTIONS] + [r.description for r in ROWS.values()]
    parts += [json.dumps(input_schema(r.options)) for r in ROWS.values()]
    return "\n".join(parts)


def test_no_claim_left_from_before() -> None:
    every = texts()
    assert "Unset: json" not in every
    assert "to save tokens" not in every and "compact\" to save" not in every
    assert "globs or ';' (the guard blocks them)" not in every
    assert "{schema, default, rows}" not in every


def test_the_default_format_is_what_the_description_says(make_engine, tmp_path: Path) -> None:
    """``format`` unset: tables of parsed rows, raw left out when restated, cat raw alone."""
    desc = RunOptions.model_fields["format"].description or ""
    assert desc.startswith("Unset (the default, the fewest tokens)") and "{schema, same, rows}" in desc
    for i in range(3):
        (tmp_path / f"f{i}.txt").write_text("x\n" * i)
    engine = make_engine()
    env = engine.run("ls", ["-la"], cwd=str(tmp_path))
    table = env.stdout.parsed["entries"]
    assert env.stdout.raw == "" and set(table) <= {"schema", "same", "rows"} and len(table["rows"]) == 6  # ., .., three files, the config
    cat = engine.run("cat", ["f2.txt"], cwd=str(tmp_path))
    assert cat.ok and cat.stdout.raw == "x\nx\n" and cat.stdout.parsed is None and cat.failure is None
    explicit = engine.run("ls", ["-la"], cwd=str(tmp_path), format="json")
    assert explicit.stdout.raw and isinstance(explicit.stdout.parsed["entries"], list)


def test_globs_are_not_expanded_and_shell_syntax_is_refused(make_engine, tmp_path: Path) -> None:
    assert "a glob such as * is not expanded (the program gets a literal *)" in " ".join(INSTRUCTIONS.split())
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("1\n2\n")
    # armed trap: a shell does expand it
    shell = subprocess.run(["sh", "-c", "wc -l *"], cwd=tmp_path, capture_output=True, text=True)
    assert "a.txt" in shell.stdout and "b.txt" in shell.stdout
    engine = make_engine()
    env = engine.run("wc", ["-l", "*"], cwd=str(tmp_path))
    assert not env.ok and env.failure is not None and env.failure.reason == "non_zero_exit"
    assert "'*'" in env.stderr.raw or "*:" in env.stderr.raw  # wc was asked for a file named *
    assert "a.txt" not in env.stdout.raw
    for args in (["a.txt", "|", "wc"], ["a.txt;", "id"], ["a.txt", "&&", "id"], ["$(id)"]):
        got = engine.run("wc", ["-l", *args], cwd=str(tmp_path))
        assert got.failure is not None and (got.failure.kind, got.failure.reason) == ("guard", "injection_pattern"), args
    # '>' is a character of a file name, never a redirect (no shell runs); the armed trap: a shell redirects
    subprocess.run(["sh", "-c", "wc -l a.txt > shell-out"], cwd=tmp_path, check=True)
    assert (tmp_path / "shell-out").exists()
    got = engine.run("wc", ["-l", "a.txt", ">", "out"], cwd=str(tmp_path))
    assert got.failure is not None and got.failure.reason == "non_zero_exit" and "'>'" in got.stderr.raw
    assert "never a redirect" in " ".join(INSTRUCTIONS.split())
    assert not (tmp_path / "out").exists()


def test_the_ttl_stated_everywhere_is_the_one_kept(make_engine, tmp_path: Path) -> None:
    """15 minutes after the last read in every result tool, ``retain`` and the instructions; the
    configured default is that; describe states the rule with the configured value; and a
    result read within the TTL again and again outlives one TTL from its creation."""
    assert Settings().store.ttl_ms == 15 * 60 * 1000
    for name in ("fetch_result", "explain_result", "compare_results"):
        assert KEPT in ROWS[name].description, name
    assert "15 minutes after its last read" in (RunOptions.model_fields["retain"].description or "")
    assert "15 minutes after its last read" in INSTRUCTIONS
    engine = make_engine(store={"ttl_ms": 600})
    described = engine.describe()
    assert described.result_store is not None and "600 ms after its last read" in str(described.result_store["ttl"])
    for i in range(30):
        (tmp_path / f"f{i:02d}").write_text("x")
    first = engine.run("ls", ["-la"], cwd=str(tmp_path), retain=True, budget={"max_tokens": 800})
    assert first.continuation is not None and first.continuation.cursor, first.failure
    rid, cursor = first.continuation.result_id, first.continuation.cursor
    for _ in range(4):  # 1.6 s in all, each read within 0.6 s of the one before
        time.sleep(0.4)
        page = engine.fetch_result(rid, cursor)
        assert page.ok, page.failure
    time.sleep(0.9)
    gone = engine.fetch_result(rid, cursor)
    assert gone.failure is not None and gone.failure.reason == "expired"


def test_the_budget_texts_are_true(make_engine, tmp_path: Path) -> None:
    """"No fixed minimum" (the schema's ``minimum: 1`` is the one that holds) and the estimate
    within 15 % (measured on the corpus in tests/unit/shape/test_approx.py)."""
    props = input_schema(RunOptions)["$defs"]["Budget"]["properties"]
    assert props["max_tokens"]["minimum"] == 1 and "No fixed minimum" in props["max_tokens"]["description"]
    assert "within 15 %" in props["tokenizer"]["description"]
    (tmp_path / "a").write_text("x")
    env = make_engine().run("ls", ["-la"], cwd=str(tmp_path), budget={"max_tokens": 500})
    assert env.ok and env.budget is not None and env.budget.budget_met, env.failure
    assert Budget.model_fields["max_tokens"].metadata  # ge=1 is declared, nothing above it
