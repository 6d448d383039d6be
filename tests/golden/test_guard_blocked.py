"""The §5.4 guard-blocked envelope, pinned byte for byte (spec decision 10).

``guard_blocked.json`` was written by hand from contract §5.4 (field order and values as the
contract prints them, compact separators), not captured from the implementation.
"""

from __future__ import annotations

from pathlib import Path

from parism.engine import create_engine

HERE = Path(__file__).parent
PROFILE = HERE.parent / "unit" / "engine" / "profile.toml"


def test_guard_blocked_envelope_is_byte_identical(tmp_path: Path) -> None:
    cfg = tmp_path / "parism.toml"
    cfg.write_text(f'[guard]\nprofile = "{PROFILE}"\nallowed_paths = ["/tmp"]\n')
    engine = create_engine(str(cfg))
    assert engine.errors == []
    env = engine.run("rm", ["-rf", "/"], cwd="/tmp")
    assert env.to_json() == (HERE / "guard_blocked.json").read_text()
