"""Every fs fixture (real captures and documented-format excerpts) parses to its hand-checked values."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers.fs.fixture_util import assert_subset, fixtures, parse_fixture

ALL = [p for cmd in ("ls", "find", "stat", "du", "df", "tree") for p in fixtures(cmd)]


def test_fixtures_exist() -> None:
    assert len(ALL) >= 20


@pytest.mark.parametrize("spec", ALL, ids=[f"{p.parent.parent.name}/{p.parent.name}/{p.stem}" for p in ALL])
def test_fixture(spec: Path) -> None:
    parsed, expected = parse_fixture(spec)
    assert_subset(parsed, expected["parsed"], spec.stem)
