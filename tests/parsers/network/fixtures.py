"""Loading the project's own fixtures (``tests/fixtures/<os>/<cmd>/<name>.out`` + ``.json``) and
corpus outputs for the process and network parser tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from parism.parsers import registry
from tests.parsers.corpus.test_corpus import CORPUS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def fixture(os: str, cmd: str, name: str) -> tuple[str, dict[str, Any]]:
    """(raw text, metadata with ``argv`` and hand-checked ``expected``)."""
    base = FIXTURES / os / cmd / name
    return base.with_suffix(".out").read_text(), json.loads(base.with_suffix(".json").read_text())


def parse_fixture(os: str, cmd: str, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parse a fixture with its own argv; fail loudly on any parse error."""
    text, meta = fixture(os, cmd, name)
    argv = meta["argv"]
    if argv[0] == "busybox":
        argv = argv[1:]
    out = registry.parse(argv[0], argv[1:], text, os)
    assert out.parse_error is None, out.parse_error
    return out.parsed, meta["expected"]


def corpus_text(case_id: str) -> str:
    """Raw output of a corpus case (``ps/osx-10.14.6__ps-axu``); the corpus must be present."""
    path = CORPUS / f"{case_id}.out"
    assert path.exists(), f"corpus missing: {path}"
    return path.read_bytes().decode("utf-8", errors="replace")


def parse(cmd: str, args: list[str], text: str, os: str = "linux") -> registry.ParseOutcome:
    return registry.parse(cmd, args, text, os)
