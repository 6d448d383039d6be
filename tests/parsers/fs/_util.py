"""Parse through the registry (contract check included), the way the engine does."""

from __future__ import annotations

from typing import Any

from parism.parsers import registry


def ok(argv: list[str], text: str, os: str = "linux", now_year: int | None = 2026) -> dict[str, Any]:
    """Parsed value of a successful parse (strict schema validation on)."""
    out = registry.parse(argv[0], argv[1:], text, os, strict_schemas=True, now_year=now_year)
    assert out.parse_error is None, out.parse_error
    assert isinstance(out.parsed, dict)
    return out.parsed


def err(argv: list[str], text: str, os: str = "linux") -> Any:
    """The ParseError of a failing parse."""
    out = registry.parse(argv[0], argv[1:], text, os)
    assert out.parse_error is not None, out.parsed
    return out.parse_error
