"""Run a real tool the way the executor does (C.UTF-8, UTC, no stdin) and parse its stdout.

Shared by the text, env and git parser tests so that expected values are always compared with
what the real program printed for inputs the test itself constructed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from parism.parsers import registry
from parism.parsers.registry import ParseOutcome

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
ENV = {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "TZ": "UTC", "PATH": "/usr/bin:/bin",
       "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": "/nonexistent",
       "GIT_PAGER": "cat", "PAGER": "cat", "NO_COLOR": "1", "TERM": "dumb"}


def run(cmd: str, args: list[str], cwd: str | os.PathLike[str], env: dict[str, str] | None = None) -> str:
    proc = subprocess.run([cmd, *args], cwd=cwd, env=env or ENV, stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=30)
    return proc.stdout.decode("utf-8", errors="replace")


def parse(cmd: str, args: list[str], text: str, os_name: str = "linux", **kw: Any) -> ParseOutcome:
    return registry.parse(cmd, args, text, os_name, strict_schemas=True, **kw)


def parsed(cmd: str, args: list[str], text: str, os_name: str = "linux", **kw: Any) -> Any:
    """Parse and insist on success."""
    out = parse(cmd, args, text, os_name, **kw)
    assert out.parse_error is None, out.parse_error
    return out.parsed


def run_parsed(cmd: str, args: list[str], cwd: str | os.PathLike[str]) -> Any:
    return parsed(cmd, args, run(cmd, args, cwd))


def fixture_cases(os_name: str, cmd: str) -> list[tuple[str, str, dict]]:
    """(name, raw text, expectation) for every ``<name>.out`` + ``<name>.json`` pair."""
    d = FIXTURES / os_name / cmd
    cases = []
    for out in sorted(d.glob("*.out")):
        spec = json.loads(out.with_suffix(".json").read_text())
        cases.append((out.stem, out.read_bytes().decode("utf-8", errors="replace"), spec))
    return cases
