"""Fixture files: ``<name>.out`` (real or documented output) + ``<name>.json`` (argv, os,
now_year, source, and the hand-checked ``parsed`` subset the parser must produce)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from parism.parsers import registry

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def fixtures(command: str) -> list[Path]:
    """Every ``<os>/<command>/*.json`` fixture."""
    return sorted(FIXTURES.glob(f"*/{command}/*.json"))


def parse_fixture(spec_path: Path) -> tuple[Any, dict[str, Any]]:
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    raw = spec_path.with_suffix(".out").read_bytes().decode("utf-8", "replace")
    argv = spec["argv"]
    cmd = spec.get("cmd", spec_path.parent.name)
    outcome = registry.parse(cmd, argv[1:] if argv and argv[0] == cmd else argv, raw, spec["os"],
                             strict_schemas=True, now_year=spec.get("now_year"))
    assert outcome.parse_error is None, f"{spec_path.name}: {outcome.parse_error}"
    return outcome.parsed, spec


def assert_subset(got: Any, want: Any, where: str = "") -> None:
    """Every key of ``want`` is in ``got`` with an equal value; lists match element-wise and in
    length. Keys absent from ``want`` are not compared (the fixture lists what was checked)."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: expected an object, got {got!r}"
        for key, value in want.items():
            assert key in got, f"{where}.{key} missing (got keys {sorted(got)})"
            assert_subset(got[key], value, f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {len(got) if isinstance(got, list) else got!r} items, want {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_subset(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"
