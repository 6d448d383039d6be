"""Engines built from a real config file and the test profile next to this file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from parism.engine import Engine, create_engine

PROFILE = Path(__file__).parent / "profile.toml"
MakeEngine = Callable[..., Engine]


@pytest.fixture
def make_engine(tmp_path: Path) -> MakeEngine:
    """``make_engine(guard={...}, audit={...}, ...)`` → an engine whose allowed path is tmp_path."""

    def build(**tables: Any) -> Engine:
        doc: dict[str, Any] = {k: dict(v) for k, v in tables.items()}
        guard = doc.setdefault("guard", {})
        guard.setdefault("profile", str(PROFILE))
        guard.setdefault("allowed_paths", [str(tmp_path)])
        path = tmp_path / "parism-test.toml"
        path.write_text(tomli_w.dumps(doc))
        engine = create_engine(str(path))
        return engine

    return build


@pytest.fixture
def engine(make_engine: MakeEngine) -> Engine:
    e = make_engine()
    assert e.errors == []
    return e
