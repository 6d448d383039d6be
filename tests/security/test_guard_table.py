"""The guard decision table: every row of guard_table.toml through ``parism.guard.check``.

The project directory is real (files, a symlink to /etc, a dangling symlink), and the config is
loaded through ``load_config`` with an isolated HOME, so the test exercises exactly what the
engine calls.  A row that expects a refusal must say what the technique would have done.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

from parism.config import LoadedConfig, load_config
from parism.guard import check

TABLE = Path(__file__).with_name("guard_table.toml")
ROWS: list[dict[str, Any]] = tomllib.loads(TABLE.read_text())["rows"]
ConfigKey = tuple[str, tuple[str, ...]]  # (profile, extra allowed commands)
REASONS = {"pass", "command_not_allowed", "path_not_allowed", "injection_pattern", "arg_not_allowed"}


def _row_id(row: dict[str, Any]) -> str:
    return f"{row['cmd']} {' '.join(row['args'])}"[:60]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "src").mkdir()
    (root / "sub").mkdir()
    (root / "README.md").write_text("# readme\n")
    (root / "notes.txt").write_text("notes\n")
    (root / "src" / "a.py").write_text("import os\n")
    (root / "x.js").write_text("console.log(1)\n")
    (root / "docker-compose.yml").write_text("services: {}\n")
    os.symlink(root / "src", root / "link_in")
    os.symlink("/etc", root / "link_out")
    os.symlink("/nonexistent/dir", root / "link_gone")
    return root


@pytest.fixture(scope="module")
def configs(project: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[ConfigKey, LoadedConfig]:
    home = tmp_path_factory.mktemp("home")
    cache: dict[ConfigKey, LoadedConfig] = {}
    for row in ROWS:
        key = (row.get("profile", "readonly"), tuple(row.get("allow", [])))
        if key in cache:
            continue
        env = {"HOME": str(home), "PARISM_PROFILE": key[0]}
        base = load_config(cwd=str(project), environ=env)
        if key[1]:
            env["PARISM_ALLOWED_COMMANDS"] = ",".join(base.settings.guard.allowed_commands + list(key[1]))
        cfg = load_config(cwd=str(project), environ=env)
        assert cfg.errors == [], cfg.errors
        cache[key] = cfg
    return cache


def test_table_is_large_and_well_formed() -> None:
    passing = [r for r in ROWS if r["expect"] == "pass"]
    assert len(ROWS) >= 150
    assert len(passing) >= 40
    for row in ROWS:
        assert row["expect"] in REASONS, row
        if row["expect"] != "pass":
            assert row.get("why"), f"blocked row must say what it would have done: {row}"
    keys = [(r["cmd"], tuple(r["args"]), r.get("profile"), tuple(r.get("allow", [])), r.get("cwd")) for r in ROWS]
    assert len(keys) == len(set(keys)), "duplicate rows"


@pytest.mark.parametrize("row", ROWS, ids=[_row_id(r) for r in ROWS])
def test_guard_row(row: dict[str, Any], project: Path, configs: dict[ConfigKey, LoadedConfig]) -> None:
    cfg = configs[(row.get("profile", "readonly"), tuple(row.get("allow", [])))]
    cwd = row.get("cwd")
    if cwd is not None and not cwd.startswith("/"):
        cwd = str(project / cwd)
    decision = check(row["cmd"], row["args"], cwd, cfg)
    if row["expect"] == "pass":
        assert decision.allowed, decision.failure
        assert decision.failure is None
        assert decision.cwd == os.path.realpath(cwd or project)
        return
    assert not decision.allowed
    assert decision.failure is not None
    assert decision.failure.kind == "guard"
    assert (decision.failure.reason, row["cmd"]) == (row["expect"], row["cmd"]), decision.failure.message
    assert decision.exec_args == []
    if "hint" in row:
        assert row["hint"] in (decision.failure.hint or ""), decision.failure
