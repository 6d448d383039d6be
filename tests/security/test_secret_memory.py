"""A secret masked once stays masked (issue 9): slices of it printed by later commands.

Real commands (the shipped readonly profile's cat, tail, head, grep) read a file holding a
secret through one engine. ``cat`` prints it whole and a rule masks it; ``tail -c +N``,
``head -c N`` and ``grep -o`` then print slices that no rule recognises (no key, no prefix).
Armed controls: the same argv run without Parism prints the slice, and a fresh engine — no
memory — returns it; the engine that masked the secret once never does.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

import parism
from parism.output.redact.memory import WINDOW

GH_TOKEN = "ghp_" + "R7tLp2mKw9sYb4HcJZq8vN3xQe5Fd1Ug6Vo0Ai"  # GitHub classic shape: ghp_ + 36
PASSWORD = "Zq8vN3xR7tLp2mKw9sYb4HcJ"  # masked only by its key (DB_PASSWORD=…)
FILES = {"token.txt": GH_TOKEN + "\n", "app.env": f"DB_PASSWORD={PASSWORD}\nDEBUG=1\n"}
# (argv, the secret it slices): each prints 12+ characters of the secret with neither its key
# nor its full shape
SLICES = [
    (["tail", "-c", "+3", "token.txt"], GH_TOKEN),
    (["head", "-c", "20", "token.txt"], GH_TOKEN),
    (["grep", "-o", "." * WINDOW, "token.txt"], GH_TOKEN),
    (["tail", "-c", "+14", "app.env"], PASSWORD),
    (["grep", "-o", "R7tLp2mKw9sYb4", "app.env"], PASSWORD),
]


def _engine(root: Path) -> parism.Engine:
    cfg = root / f"parism-{len(list(root.glob('parism-*.toml')))}.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"profile": "readonly", "allowed_paths": [str(root / "ws")]}}))
    engine = parism.create_engine(str(cfg))
    assert engine.errors == []
    return engine


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("secret-memory")
    ws = root / "ws"
    ws.mkdir()
    for name, text in FILES.items():
        (ws / name).write_text(text)
    root.chmod(0o755)
    ws.chmod(0o755)
    for path in ws.iterdir():
        path.chmod(0o644)
    return root


@pytest.fixture(scope="module")
def remembering(root: Path) -> Iterator[parism.Engine]:
    """An engine that has printed (and masked) both files once."""
    engine = _engine(root)
    for name in FILES:
        env = engine.run("cat", [name], cwd=str(root / "ws"))
        assert env.exitCode == 0, env.stderr.raw
        assert GH_TOKEN not in env.stdout.raw and PASSWORD not in env.stdout.raw
        assert "[REDACTED]" in env.stdout.raw
    yield engine
    engine.close()


def _pieces(secret: str, text: str) -> list[str]:
    """Every slice of ``secret`` of WINDOW characters that appears in ``text``."""
    return sorted({secret[i:i + WINDOW] for i in range(len(secret) - WINDOW + 1)} & {
        text[i:i + WINDOW] for i in range(len(text) - WINDOW + 1)})


@pytest.mark.parametrize(("argv", "secret"), SLICES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_a_slice_of_a_masked_secret_stays_masked(root: Path, remembering: parism.Engine,
                                                 argv: list[str], secret: str) -> None:
    ws = str(root / "ws")
    direct = subprocess.run(argv, cwd=ws, capture_output=True, text=True, check=True).stdout
    assert _pieces(secret, direct), direct  # armed: the command does print a slice of it
    fresh = _engine(root)
    try:
        forgotten = fresh.run(argv[0], argv[1:], cwd=ws)
    finally:
        fresh.close()
    assert _pieces(secret, forgotten.to_json()), forgotten.to_json()  # no rule catches the slice (raw or parsed)
    env = remembering.run(argv[0], argv[1:], cwd=ws)
    assert env.exitCode == 0, env.stderr.raw
    assert _pieces(secret, env.to_json()) == []
    assert "[REDACTED]" in env.to_json()  # masked, in raw or in the parsed rows that replace it


def test_text_around_a_slice_is_kept(root: Path, remembering: parism.Engine) -> None:
    """Only the slice is masked: ``tail -c +14`` of the env file keeps its other line."""
    env = remembering.run("tail", ["-c", "+14", "app.env"], cwd=str(root / "ws"))
    assert env.stdout.raw == "[REDACTED]\nDEBUG=1\n", env.stdout.raw  # PASSWORD[1:] is one slice
