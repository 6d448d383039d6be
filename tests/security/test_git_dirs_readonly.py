"""In ``build`` every ``.git`` under the cwd stays read-only — nested repositories, embedded
gitlinks, and a ``gitdir:`` file's target inside the project (issue 9, item 6).

Through the real engine (build profile, ``sandbox.mode = "required"``, a trusted ``sh`` policy
so the call can try to write): the project itself is writable (the write to ``x.txt`` lands),
no git directory gets a new file.  Control: the sandbox with the old rule (only ``<cwd>/.git``,
what a decision without ``git_dirs`` gets) lets the same script write into the nested ones.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

from parism.engine import create_engine
from parism.guard.git.dirs import git_dirs_below
from tests.security.sandbox.helpers import SH, run, sandbox_factory

__all__ = ["sandbox_factory"]

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
OWNER = 4242
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
           "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com"}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, timeout=30)


@pytest.fixture
def project() -> Iterator[tuple[Path, list[Path]]]:
    """(project, its git data directories): top, nested, embedded gitlink, separate git dir."""
    root = Path(tempfile.mkdtemp(prefix="parism-gitdirs-", dir="/tmp"))
    root.chmod(0o755)
    top = root / "top"
    top.mkdir()
    _git(top, "init", "-q")
    (top / "nested" / "deeper").mkdir(parents=True)
    _git(top / "nested" / "deeper", "init", "-q")
    (top / "emb").mkdir()
    _git(top / "emb", "init", "-q")
    (top / "emb" / "f").write_text("f\n")
    _git(top / "emb", "add", "f")
    _git(top / "emb", "commit", "-q", "-m", "e")
    _git(top, "add", "emb")
    _git(top, "init", "-q", f"--separate-git-dir={top / 'store.git'}", "sep")
    if os.geteuid() == 0:  # a root server runs the commands as the owner; another server as itself
        for dirpath, dirnames, filenames in os.walk(root):
            for name in (*dirnames, *filenames):
                os.lchown(os.path.join(dirpath, name), OWNER, OWNER)
        os.chown(root, OWNER, OWNER)
    dirs = [top / ".git", top / "nested" / "deeper" / ".git", top / "emb" / ".git", top / "store.git"]
    yield top, dirs
    shutil.rmtree(root, ignore_errors=True)


def _script(dirs: list[Path]) -> str:
    lines = ["echo x > x.txt"] + [f"touch '{d}/planted' 2>/dev/null" for d in dirs]
    lines += ["echo '#!/bin/sh' > sep/.git 2>/dev/null", "true"]
    return "\n".join(lines)


def test_guard_lists_every_git_dir(project: tuple[Path, list[Path]]) -> None:
    top, dirs = project
    found = git_dirs_below(str(top))
    assert found is not None
    assert set(map(str, dirs)) | {str(top / "sep" / ".git")} == set(found)
    assert git_dirs_below(str(top), max_dirs=2) is None


def test_build_keeps_every_git_dir_read_only(project: tuple[Path, list[Path]]) -> None:
    top, dirs = project
    doc = {"guard": {"profile": "build", "allowed_paths": [str(top)],
                     "allowed_commands": ["sh", "git", "ls"],
                     "command_policies": {"sh": {"flags": {"-c": "data"}, "positionals": "any"}}},
           "sandbox": {"mode": "required"}}
    cfg = top.parent / "parism.toml"
    cfg.write_text(tomli_w.dumps(doc))
    engine = create_engine(str(cfg))
    assert engine.errors == []
    sep_before = (top / "sep" / ".git").read_text()
    env = engine.run("sh", ["-c", _script(dirs)], cwd=str(top))
    assert env.exitCode == 0, env.failure
    assert (top / "x.txt").read_text() == "x\n"  # the project is writable: the script ran
    assert [d for d in dirs if (d / "planted").exists()] == []
    assert (top / "sep" / ".git").read_text() == sep_before


def test_control_the_old_rule_leaves_nested_git_dirs_writable(sandbox_factory, project: tuple[Path, list[Path]]) -> None:
    top, dirs = project
    sb = sandbox_factory([str(top)], writable=True)
    r = run(sb, [SH, "-c", _script(dirs)], str(top))  # a decision without git_dirs: <cwd>/.git only
    assert r.cap.exit_code == 0, r.err
    planted = {d for d in dirs if (d / "planted").exists()}
    assert top / ".git" not in planted
    assert {top / "nested" / "deeper" / ".git", top / "emb" / ".git", top / "store.git"} <= planted
