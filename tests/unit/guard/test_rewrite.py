"""Forced argument rewrites (parism/policy/rewrite.py) and their placement in ``Decision.exec_args``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from parism.config import LoadedConfig, load_config
from parism.guard import check
from parism.policy.gitrepo import find_repo
from parism.policy.rewrite import GIT_FORCED

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


def _filters(path: Path) -> list[str]:
    repo = find_repo(str(path))
    return repo.filters if repo else []


@pytest.fixture
def cfg(tmp_path: Path) -> LoadedConfig:
    (tmp_path / "proj").mkdir()
    return load_config(cwd=str(tmp_path / "proj"),
                       environ={"HOME": str(tmp_path), "PARISM_PROFILE": "build",
                                "PARISM_ALLOWED_COMMANDS": "git,npx,curl,dig,ls"})


def test_git_forced_settings_come_first_and_no_ext_diff_after_the_subcommand(cfg: LoadedConfig) -> None:
    d = check("git", ["--no-pager", "log", "-n", "3"], None, cfg)
    assert d.exec_args[: len(GIT_FORCED)] == GIT_FORCED
    rest = d.exec_args[len(GIT_FORCED):]
    assert rest == ["--no-pager", "log", "--no-ext-diff", "--no-textconv", "-n", "3"]
    for setting in ("core.fsmonitor=false", "core.pager=cat", "core.hooksPath=/dev/null",
                    "log.showSignature=false", "diff.external=", "safe.directory=*"):
        assert setting in GIT_FORCED


@pytest.mark.parametrize(("args", "after"), [
    (["blame", "f"], ["blame", "--no-textconv", "f"]),
    (["show", "HEAD"], ["show", "--no-ext-diff", "--no-textconv", "HEAD"]),
    (["diff"], ["diff", "--no-ext-diff", "--no-textconv"]),
    (["status"], ["status"]),
    (["-C", ".", "diff", "--stat"], ["-C", ".", "diff", "--no-ext-diff", "--no-textconv", "--stat"]),
])
def test_git_flags_after_subcommand(cfg: LoadedConfig, args: list[str], after: list[str]) -> None:
    d = check("git", args, None, cfg)
    assert d.allowed, d.failure
    assert d.exec_args[len(GIT_FORCED):] == after


def test_prefixes_for_npx_curl_dig(cfg: LoadedConfig) -> None:
    assert check("npx", ["jest"], None, cfg).exec_args == ["--no", "jest"]
    assert check("curl", ["-s", "https://example.com/"], None, cfg).exec_args[:1] == ["--disable"]
    assert "=http,https" in check("curl", ["https://example.com/"], None, cfg).exec_args
    assert check("dig", ["+short", "example.invalid"], None, cfg).exec_args == ["-r", "+short", "example.invalid"]
    assert check("ls", ["-la"], None, cfg).exec_args == ["-la"]


def test_filter_drivers_found_in_config_and_includes(tmp_path: Path) -> None:
    git_dir = tmp_path / "repo" / ".git"
    (git_dir / "modules" / "sub").mkdir(parents=True)
    (tmp_path / "repo" / "deep" / "er").mkdir(parents=True)
    (git_dir / "config").write_text(
        '[core]\n\tbare = false\n[filter "lfs"]\n\tclean = git-lfs clean\n'
        '[include]\n\tpath = extra.cfg\n[includeIf "gitdir:/nowhere/"]\n\tpath = "cond.cfg"\n'
    )
    (git_dir / "extra.cfg").write_text('[FILTER "hidden name"]\n\tclean = evil\n')
    (git_dir / "cond.cfg").write_text("[filter.dotted]\n\tsmudge = evil\n")
    (git_dir / "modules" / "sub" / "config").write_text('[filter "submod"]\n\tprocess = evil\n')
    found = _filters(tmp_path / "repo" / "deep" / "er")
    assert sorted(found) == ["dotted", "hidden name", "lfs", "submod"]
    assert find_repo(str(tmp_path)) is None


def test_gitdir_file_is_followed(tmp_path: Path) -> None:
    real_git = tmp_path / "store" / "wt.git"
    real_git.mkdir(parents=True)
    (real_git / "config").write_text('[filter "x"]\n\tclean = evil\n')
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text(f"gitdir: {real_git}\n")
    assert _filters(tmp_path / "wt") == ["x"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_accepts_every_forced_setting(tmp_path: Path, cfg: LoadedConfig) -> None:
    repo = Path(cfg.cwd)
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q"], cwd=repo, env=env, check=True)
    d = check("git", ["status", "--porcelain"], None, cfg)
    result = subprocess.run(["git", *d.exec_args], cwd=repo, env=env, capture_output=True, timeout=30)
    assert result.returncode == 0, result.stderr


def test_section_header_and_key_on_one_line(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text('[filter "a"] clean = evil\n[core] worktree = /\n')
    repo = find_repo(str(tmp_path))
    assert repo is not None and repo.filters == ["a"] and repo.moves_worktree


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True,
                          timeout=30, check=False)


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_repository_worktree_pointing_outside_is_pinned(tmp_path: Path) -> None:
    proj, outside = tmp_path / "proj", tmp_path / "outside"
    proj.mkdir()
    outside.mkdir()
    (outside / "leak.txt").write_text("first\n")
    _git(proj, "init", "-q")
    _git(proj, "config", "core.worktree", str(outside))
    _git(proj, "add", "leak.txt")
    (outside / "leak.txt").write_text("first\nOUTSIDE-CONTENT\n")
    assert b"OUTSIDE-CONTENT" in _git(proj, "diff").stdout  # control: plain git reads outside
    cfg = load_config(cwd=str(proj), environ={"HOME": str(tmp_path)})
    d = check("git", ["diff"], None, cfg)
    assert d.allowed, d.failure
    assert f"--work-tree={proj}" in d.exec_args
    out = _git(proj, *d.exec_args)
    assert b"OUTSIDE-CONTENT" not in out.stdout + out.stderr


def test_repository_data_outside_the_allowed_paths_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store.git"
    store.mkdir()
    (store / "config").write_text("[core]\n\tbare = false\n")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / ".git").write_text(f"gitdir: {store}\n")
    cfg = load_config(cwd=str(proj), environ={"HOME": str(tmp_path)})
    d = check("git", ["log"], None, cfg)
    assert d.failure is not None and d.failure.reason == "path_not_allowed"
    assert str(store) in d.failure.message
