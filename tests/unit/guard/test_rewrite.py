"""Forced argument rewrites (parism/guard/rewrite.py) and their placement in ``Decision.exec_args``;
what git's own reading of a repository's configuration (parism/guard/git/repo.py) makes of it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from parism.run.childenv import build_child_env
from parism.config import LoadedConfig, load_config
from parism.guard import check
from parism.guard.git.ask import direct_asker
from parism.guard.git.repo import FORCED_FLAGS, GIT_FORCED_SETTINGS, Repo, RepoProblem, config_flags, read_repo

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
# These tests are about the rewrites and git's reading on the host: the configurations run
# their calls unsandboxed, where the guard asks git as this process (guard/git/ask.py).  The
# reading in the call's own sandbox (identity and view) is tested in tests/security.
UNSANDBOXED = {"PARISM_SANDBOX": "off"}
FORCED = ["--no-pager", *config_flags(GIT_FORCED_SETTINGS)]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True,
                          timeout=30, check=False)


def _read(path: Path, cfg: LoadedConfig, *, enter: bool = False) -> Repo | RepoProblem | None:
    return read_repo(str(path), direct_asker(build_child_env(cfg, os.environ).env, FORCED_FLAGS),
                     enter_submodules=enter)


def _overridden(repo: Repo | RepoProblem | None) -> set[str]:
    assert isinstance(repo, Repo), repo
    return {key for key, _ in repo.overrides}


@pytest.fixture
def cfg(tmp_path: Path) -> LoadedConfig:
    (tmp_path / "proj").mkdir()
    return load_config(cwd=str(tmp_path / "proj"),
                       environ={**UNSANDBOXED, "HOME": str(tmp_path), "PARISM_PROFILE": "build",
                                "PARISM_ALLOWED_COMMANDS": "git,npx,curl,dig,ls"})


def test_git_forced_settings_come_first_and_no_ext_diff_after_the_subcommand(cfg: LoadedConfig) -> None:
    d = check("git", ["--no-pager", "log", "-n", "3"], None, cfg)
    assert d.exec_args[: len(FORCED)] == FORCED
    rest = d.exec_args[len(FORCED):]
    assert rest == ["--no-pager", "log", "--no-ext-diff", "--no-textconv", "-n", "3"]
    for setting in ("core.fsmonitor=false", "core.pager=cat", "core.hooksPath=/dev/null", "core.editor=false",
                    "log.showSignature=false", "diff.external=", "safe.directory=*",
                    "status.submoduleSummary=false", "submodule.recurse=false"):
        assert setting in FORCED


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
    assert d.exec_args[len(FORCED):] == after


def test_prefixes_for_npx_curl_dig(cfg: LoadedConfig) -> None:
    assert check("npx", ["jest"], None, cfg).exec_args == ["--no", "jest"]
    assert check("curl", ["-s", "https://example.com/"], None, cfg).exec_args[:1] == ["--disable"]
    assert "=http,https" in check("curl", ["https://example.com/"], None, cfg).exec_args
    assert check("dig", ["+short", "example.invalid"], None, cfg).exec_args == ["-r", "+short", "example.invalid"]
    assert check("ls", ["-la"], None, cfg).exec_args == ["-la"]


@needs_git
def test_drivers_in_gits_own_reading(tmp_path: Path, cfg: LoadedConfig) -> None:
    """Escapes, case, includes (trailing comment, nested), conditions: git decides, not us.
    The includeIf whose condition is false is *not* read — by git, and so not by the guard."""
    repo = tmp_path / "repo"
    (repo / "deep" / "er").mkdir(parents=True)
    _git(repo, "init", "-q")
    with (repo / ".git" / "config").open("a") as fh:
        fh.write('[filter "lfs"]\n\tclean = git-lfs clean\n[filter "e\\vil"]\n\tsmudge = evil\n'
                 '[include]\n\tpath = extra.cfg ; comment\n[includeIf "gitdir:/nowhere/"]\n\tpath = "cond.cfg"\n'
                 '[diff "pic"]\n\ttextconv = exiftool\n[merge "m"]\n\tdriver = evil\n[alias]\n\tst = !evil\n'
                 '[pager]\n\tlog = evil\n[core]\n\tgitProxy = evil\n')
    (repo / ".git" / "extra.cfg").write_text('[FILTER "hidden name"]\n\tclean = evil\n[Filter.Dotted]\n\tx = 1\n')
    (repo / ".git" / "cond.cfg").write_text("[filter.never]\n\tsmudge = evil\n")
    found = _overridden(_read(repo / "deep" / "er", cfg))
    for part in ("clean", "smudge", "process", "required"):
        for name in ("lfs", "evil", "hidden name", "dotted"):
            assert f"filter.{name}.{part}" in found
    assert {"diff.pic.textconv", "merge.m.driver", "alias.st", "pager.log", "core.gitproxy"} <= found
    assert not any("never" in key for key in found)
    assert _read(tmp_path, cfg) is None


@needs_git
def test_separate_git_dir_is_read(tmp_path: Path, cfg: LoadedConfig) -> None:
    store = tmp_path / "store" / "wt.git"
    store.parent.mkdir()
    _git(tmp_path, "init", "-q", f"--separate-git-dir={store}", "wt")
    _git(tmp_path / "wt", "config", "filter.x.clean", "evil")
    repo = _read(tmp_path / "wt", cfg)
    assert isinstance(repo, Repo) and repo.git_dir == str(store) and repo.work_dir == str(tmp_path / "wt")
    assert "filter.x.clean" in _overridden(repo)


@needs_git
def test_section_header_and_key_on_one_line(tmp_path: Path, cfg: LoadedConfig) -> None:
    _git(tmp_path, "init", "-q")
    with (tmp_path / ".git" / "config").open("a") as fh:
        fh.write('[filter "a"] clean = evil\n[core] worktree = /\n')
    repo = _read(tmp_path, cfg)
    assert isinstance(repo, Repo) and "filter.a.clean" in _overridden(repo) and repo.moves_worktree


@needs_git
def test_a_name_git_cannot_be_told_is_refused(tmp_path: Path, cfg: LoadedConfig) -> None:
    """-c splits at the first '=': ``-c filter.x=y.clean=`` would set ``filter.x`` (checked)."""
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "filter.x=y.clean", "evil")
    got = _git(tmp_path, "-c", "filter.x=y.clean=", "config", "--get", "filter.x=y.clean")
    assert got.stdout.strip() == b"evil"  # reality: the -c did not reach the driver
    assert isinstance(_read(tmp_path, cfg), RepoProblem)


@needs_git
def test_git_accepts_every_forced_setting(tmp_path: Path, cfg: LoadedConfig) -> None:
    repo = Path(cfg.cwd)
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q"], cwd=repo, env=env, check=True)
    d = check("git", ["status", "--porcelain"], None, cfg)
    result = subprocess.run(["git", *d.exec_args], cwd=repo, env=env, capture_output=True, timeout=30)
    assert result.returncode == 0, result.stderr


@needs_git
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
    cfg = load_config(cwd=str(proj), environ={**UNSANDBOXED, "HOME": str(tmp_path)})
    d = check("git", ["diff"], None, cfg)
    assert d.allowed, d.failure
    assert f"--work-tree={proj}" in d.exec_args
    out = _git(proj, *d.exec_args)
    assert b"OUTSIDE-CONTENT" not in out.stdout + out.stderr


@needs_git
def test_repository_data_outside_the_allowed_paths_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store.git"
    _git(tmp_path, "init", "-q", f"--separate-git-dir={store}", "proj")
    cfg = load_config(cwd=str(tmp_path / "proj"), environ={**UNSANDBOXED, "HOME": str(tmp_path)})
    d = check("git", ["log"], None, cfg)
    assert d.failure is not None and d.failure.reason == "path_not_allowed"
    assert str(store) in d.failure.message


@needs_git
def test_an_empty_dot_git_is_skipped_like_git_skips_it(tmp_path: Path) -> None:
    """git passes over a ``.git`` that is no repository and uses the one above: so does the
    guard's containment check (the old reader stopped at the empty directory)."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    cfg = load_config(cwd=str(tmp_path / "proj"), environ={**UNSANDBOXED, "HOME": str(tmp_path / "proj"),
                                                           "PARISM_ALLOWED_PATHS": str(tmp_path / "proj")})
    d = check("git", ["status"], None, cfg)
    assert d.failure is not None and d.failure.reason == "path_not_allowed", d.failure
