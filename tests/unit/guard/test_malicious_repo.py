"""A hostile repository's own configuration must not run anything during allowed git queries.

The repository sets every program-running knob we know of (fsmonitor, pager, aliases, external
diff, signature program, textconv and clean/smudge filters, hooks).  Each would ``touch`` a
marker file.  Every allowed git query runs through the guard's ``exec_args`` with the
executor's git environment, via subprocess (no engine needed); the marker must never appear.
A control run with plain ``git`` shows the traps are real, so the test can fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from parism.config import LoadedConfig, load_config
from parism.guard import check

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0",
           "PAGER": "cat", "GIT_PAGER": "cat", "LC_ALL": "C.UTF-8", "TZ": "UTC"}

QUERIES = [
    ["status"], ["status", "--porcelain"], ["status", "-s", "-b"],
    ["log"], ["log", "-p"], ["log", "--stat"], ["log", "--format=%h %G? %GS %GK"], ["log", "--oneline", "-n", "3"],
    ["diff"], ["diff", "HEAD"], ["diff", "--cached"], ["diff", "--stat"],
    ["show"], ["show", "HEAD", "--format=%G?"], ["show", "--stat"],
    ["branch", "-v"], ["branch", "-a", "-vv"], ["tag", "-l"], ["tag", "-n"],
    ["rev-parse", "HEAD"], ["rev-parse", "--show-toplevel"],
    ["ls-files"], ["blame", "data.txt"], ["describe", "--always", "--tags"],
    ["shortlog", "-sn", "HEAD"], ["remote", "-v"], ["--no-pager", "log", "-1"],
]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True,
                   capture_output=True, timeout=30)


def _signed_head(repo: Path) -> None:
    """Replace HEAD by a commit carrying a (bogus) PGP signature, so %G? and showSignature
    call gpg.program."""
    env = {**os.environ, **GIT_ENV}
    raw = subprocess.run(["git", "cat-file", "commit", "HEAD"], cwd=repo, env=env, check=True,
                         capture_output=True).stdout.decode()
    headers, _, message = raw.partition("\n\n")
    signature = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
    body = f"{headers}\n{signature}\n\n{message}"
    oid = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=repo, env=env,
                         input=body.encode(), check=True, capture_output=True).stdout.decode().strip()
    _git(repo, "update-ref", "HEAD", oid)


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    marker_dir = tmp_path / "markers"
    repo.mkdir()
    marker_dir.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "a@example.com")
    _git(repo, "config", "user.name", "A")
    (repo / "data.txt").write_text("one\n")
    (repo / "plain.txt").write_text("two\n")
    (repo / ".gitattributes").write_text("data.txt diff=evil filter=evilf\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "first")
    _git(repo, "tag", "-a", "v1", "-m", "tag")
    (repo / "data.txt").write_text("one\nmore\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "second")
    _signed_head(repo)
    (repo / "data.txt").write_text("one\nchanged\n")
    (repo / "plain.txt").write_text("two\nchanged\n")

    def trap(name: str) -> str:
        script = tmp_path / f"trap-{name}.sh"
        script.write_text(f"#!/bin/sh\ntouch '{marker_dir}/{name}'\ncat\n")
        script.chmod(0o755)
        return str(script)

    config = {
        "core.fsmonitor": trap("fsmonitor"),
        "core.pager": trap("pager"),
        "pager.log": trap("pager-log"),
        "alias.st": f"!{trap('alias')}",
        "diff.external": trap("diff-external"),
        "diff.evil.command": trap("diff-driver"),
        "diff.evil.textconv": trap("textconv"),
        "filter.evilf.clean": trap("filter-clean"),
        "filter.evilf.smudge": trap("filter-smudge"),
        "log.showSignature": "true",
        "gpg.program": trap("gpg"),
        "gpg.ssh.program": trap("gpg-ssh"),
        "core.sshCommand": trap("ssh"),
    }
    for key, value in config.items():
        _git(repo, "config", key, value)
    hooks = repo / ".git" / "hooks"
    for hook in ("post-index-change", "post-checkout", "pre-commit", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch '{marker_dir}/hook-{hook}'\n")
        (hooks / hook).chmod(0o755)
    # racy index: make git re-read (and filter) the worktree file on the next status
    os.utime(repo / "data.txt", None)
    return repo, marker_dir


@pytest.fixture
def cfg(hostile: tuple[Path, Path]) -> LoadedConfig:
    repo, _ = hostile
    loaded = load_config(cwd=str(repo), environ={"HOME": str(repo.parent / "home")})
    assert loaded.errors == []
    return loaded


def _run(repo: Path, argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, cwd=repo, env={**os.environ, **GIT_ENV}, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=30)


def test_control_plain_git_runs_the_traps(hostile: tuple[Path, Path]) -> None:
    repo, markers = hostile
    _run(repo, ["git", "status"])
    _run(repo, ["git", "diff"])
    _run(repo, ["git", "log", "-p", "-1"])
    _run(repo, ["git", "log", "-1", "--format=%G?"])
    fired = {p.name for p in markers.iterdir()}
    expected = {"fsmonitor", "hook-post-index-change", "filter-clean", "diff-external", "diff-driver",
                "textconv", "gpg"}
    assert expected <= fired, expected - fired


@pytest.mark.parametrize("args", QUERIES, ids=[" ".join(q) for q in QUERIES])
def test_allowed_git_query_runs_nothing(hostile: tuple[Path, Path], cfg: LoadedConfig, args: list[str]) -> None:
    repo, markers = hostile
    decision = check("git", args, str(repo), cfg)
    assert decision.allowed, decision.failure
    result = _run(repo, ["git", *decision.exec_args])
    fired = sorted(p.name for p in markers.iterdir())
    assert fired == [], f"{args} ran {fired}; stderr={result.stderr[-300:]!r}"
    assert result.returncode == 0, result.stderr


def test_alias_is_not_reachable(hostile: tuple[Path, Path], cfg: LoadedConfig) -> None:
    repo, _ = hostile
    decision = check("git", ["st"], str(repo), cfg)
    assert decision.failure is not None and decision.failure.reason == "arg_not_allowed"
