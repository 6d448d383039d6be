"""Engines on the shipped readonly profile (real sandbox, real binaries) for the result tools."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from parism.engine import Engine, create_engine

MakeEngine = Callable[..., Engine]


@pytest.fixture
def make_engine(tmp_path: Path) -> Iterator[MakeEngine]:
    """``make_engine(guard={...}, store={...})``: readonly profile, allowed paths tmp_path (+ any
    given), every engine closed at the end."""
    made: list[Engine] = []

    def build(**tables: Any) -> Engine:
        doc: dict[str, Any] = {k: dict(v) for k, v in tables.items()}
        guard = doc.setdefault("guard", {})
        guard["allowed_paths"] = [str(tmp_path), *guard.get("allowed_paths", [])]
        path = tmp_path / "parism-test.toml"
        path.write_text(tomli_w.dumps(doc))
        engine = create_engine(str(path))
        assert engine.errors == [], engine.errors
        made.append(engine)
        return engine

    yield build
    for e in made:
        e.close()
