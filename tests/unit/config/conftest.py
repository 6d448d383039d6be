"""A fresh HOME and project directory per test, so no real user configuration leaks in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from parism.config import LoadedConfig, load_config


@dataclass
class Dirs:
    home: Path
    project: Path

    @property
    def global_toml(self) -> Path:
        return self.home / ".parism" / "config.toml"

    @property
    def global_json(self) -> Path:
        return self.home / ".parism" / "prism.config.json"

    @property
    def project_toml(self) -> Path:
        return self.project / "parism.toml"

    @property
    def project_json(self) -> Path:
        return self.project / "prism.config.json"

    def write(self, path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path


@pytest.fixture
def dirs(tmp_path: Path) -> Dirs:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return Dirs(home, project)


@pytest.fixture
def load(dirs: Dirs) -> Callable[..., LoadedConfig]:
    def _load(config_path: str | None = None, **env: str) -> LoadedConfig:
        return load_config(config_path, cwd=str(dirs.project), environ={"HOME": str(dirs.home), **env})
    return _load
