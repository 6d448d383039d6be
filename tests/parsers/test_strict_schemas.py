"""The strict schema check (``parsers.strict_schemas``, ``parism/parsers/strict.py``) on a
built-in parser: real ``wc`` output fits ``WcResult`` exactly; a value with a string for an
integer, or with a key the schema does not declare, is refused naming the place — and the lax
check the registry used before (``model_validate``) accepted both (the control: this is what
made the setting have no effect)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path

from parism.parsers import registry
from parism.parsers.strict import violation
from parism.parsers.text.wc import WcResult


def counted(tmp_path: Path) -> dict:
    (tmp_path / "a.txt").write_text("one two\nthree\n")
    (tmp_path / "b.txt").write_text("x\n")
    text = subprocess.run(["wc", "a.txt", "b.txt"], capture_output=True, text=True, check=True, cwd=tmp_path,
                          env={"LC_ALL": "C.UTF-8", "PATH": os.environ["PATH"]}).stdout
    out = registry.parse("wc", ["a.txt", "b.txt"], text, "linux", strict_schemas=True)
    assert out.parse_error is None, out.parse_error
    return out.parsed


def test_real_output_fits(tmp_path: Path) -> None:
    value = counted(tmp_path)
    assert violation(WcResult, value) is None
    lines = {e["file"]: e["lines"] for e in value["entries"]}
    assert lines == {"a.txt": 2, "b.txt": 1}  # the files' real line counts


def test_a_string_for_an_integer_is_refused(tmp_path: Path) -> None:
    value = copy.deepcopy(counted(tmp_path))
    value["entries"][0]["lines"] = "2"
    WcResult.model_validate(value)  # the lax check coerces it
    problem = violation(WcResult, value)
    assert problem is not None and "entries.0.lines" in problem, problem


def test_an_undeclared_key_is_refused(tmp_path: Path) -> None:
    value = copy.deepcopy(counted(tmp_path))
    value["colour"] = "blue"
    WcResult.model_validate(value)  # the lax check drops it
    assert violation(WcResult, value) == "/colour: a key the schema does not declare"


def test_netstat_groups_are_declared() -> None:
    """The gap the strict check found in a built-in schema: ``netstat -g`` rows (real output)."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "linux" / "netstat"
    out = registry.parse("netstat", ["-g"], (fixtures / "g.out").read_text(), "linux", strict_schemas=True)
    assert out.parse_error is None, out.parse_error
    pairs = {(g["iface"], g["group"]) for g in out.parsed["groups"]}
    proc = json.loads((fixtures / "g.json").read_text())["expected"]["ipv6_groups"]  # /proc/net/igmp6
    assert {tuple(p) for p in proc} <= pairs
