"""Programs named by a repository's own configuration never run (issue 9, classes 2 and 6).

Each attack builds a hostile repository whose configuration — in one of the spellings a hand-made
reader of git's format misses — names a trap program that writes a marker file into the project
(and ``TRAPFIRED`` to stderr).  Three runs per attack:

* **control** — plain git, outside Parism: the trap fires (the marker appears), so the attack is
  real and the test can fail;
* **guard** — plain git with the guard's ``exec_args`` (no sandbox): nothing fires, so the
  guard's own neutralisation holds, whatever the sandbox does;
* **engine** — the real engine, build profile (the project is writable, so a trap *could* write
  its marker), ``sandbox.mode = "required"``: nothing fires and the query still succeeds.

The project is owned by an unprivileged uid, so sandboxed commands run as that uid (identity
rule: the workspace owner) and can write the marker if the trap ever runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from parism.config import load_config
from parism.guard import check
from parism.guard.git.repo import GIT_FORCED_SETTINGS, config_flags
from tests.security.sandbox.gitrepos import (GIT_ENV, Trap, append, dirty, fired, git, make_engine, make_repo, own,
                                             signed_head, workspace)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
__all__ = ["workspace"]  # the fixture, used by name


# ------------------------------------------------------------------ the attacks
def _spelled(filt: str, config: Callable[[Trap], str], **files: Callable[[Trap], str]) -> Callable[[Path, Trap], Path]:
    """An attack: data.txt uses filter ``filt``; ``config`` (appended to .git/config) and
    ``files`` (more files in .git, e.g. included ones) define it in some spelling."""
    def build(ws: Path, trap: Trap) -> Path:
        repo = make_repo(ws / "repo", f"data.txt filter={filt}\n")
        append(repo / ".git/config", config(trap).replace("{repo}", str(repo)))
        for name, text in files.items():
            (repo / ".git" / name.replace("_", ".")).write_text(text(trap))
        dirty(repo)
        return repo
    return build


escaped_section = _spelled("evil", lambda t: f'[filter "e\\vil"]\n\tclean = {t("escape")}\n')
legacy_upper_case = _spelled("evil", lambda t: f"[FILTER.EvIl]\n\tCLEAN = {t('legacy')}\n")
continued_line = _spelled("cont", lambda t: f'[filter "cont"]\n\tclean = {t("continued")} \\\n\t\n')
name_with_equals = _spelled("x=y", lambda t: f'[filter "x=y"]\n\tclean = {t("equals")}\n')
include_with_comment = _spelled(
    "inc", lambda t: "[include]\n\tpath = inc.cfg ; a trailing comment\n",
    inc_cfg=lambda t: "[include]\n\tpath = deeper.cfg\n",
    deeper_cfg=lambda t: f'[filter "inc"]\n\tclean = {t("include")}\n')
include_if_gitdir = _spelled(
    "cond", lambda t: '[includeIf "gitdir:{repo}/"]\n\tpath = cond.cfg\n',
    cond_cfg=lambda t: f'[filter "cond"]\n\tsmudge = cat\n\tclean = {t("includeif")}\n')
include_if_onbranch = _spelled(
    "br", lambda t: '[includeIf "onbranch:main"]\n\tpath = br.cfg\n',
    br_cfg=lambda t: f'[filter "br"]\n\tprocess = {t("onbranch")}\n')


def _embedded(ws: Path, setup: Callable[[Path], None]) -> Path:
    top = make_repo(ws / "repo")
    emb = make_repo(top / "emb", "data.txt filter=deep\n")
    setup(emb)
    git(top, "add", "emb")  # a gitlink to an embedded repository: no .gitmodules, own .git
    git(top, "commit", "-q", "-m", "embed")
    dirty(emb)
    return top


def embedded_filter(ws: Path, trap: Trap) -> Path:
    return _embedded(ws, lambda emb: append(emb / ".git/config", f'[filter "deep"]\n\tclean = {trap("embedded")}\n'))


def embedded_fsmonitor(ws: Path, trap: Trap) -> Path:
    return _embedded(ws, lambda emb: git(emb, "config", "core.fsmonitor", trap("embedded-fsmonitor", False)))


def nested_submodule_filter(ws: Path, trap: Trap) -> Path:
    top = make_repo(ws / "repo")
    mid = make_repo(top / "mid")
    low = make_repo(mid / "low", "data.txt filter=low\n")
    append(low / ".git/config", f'[filter "low"]\n\tclean = {trap("nested")}\n')
    git(mid, "add", "low")
    git(mid, "commit", "-q", "-m", "low")
    git(top, "add", "mid")
    git(top, "commit", "-q", "-m", "mid")
    dirty(low)
    return top


def submodule_summary(ws: Path, trap: Trap) -> Path:
    top = make_repo(ws / "repo")
    emb = make_repo(top / "emb")
    git(top, "add", "emb")
    git(top, "commit", "-q", "-m", "embed")
    (emb / "data.txt").write_text("newer\n")
    git(emb, "commit", "-q", "-am", "newer")
    signed_head(emb)
    git(emb, "config", "log.showSignature", "true")
    git(emb, "config", "gpg.program", trap("summary-gpg", False))
    git(top, "config", "status.submoduleSummary", "true")
    return top


def status_verbose_textconv(ws: Path, trap: Trap) -> Path:
    repo = make_repo(ws / "repo", "data.txt diff=tc\n")
    git(repo, "config", "diff.tc.textconv", trap("textconv"))
    (repo / "data.txt").write_text("one\nstaged\n")
    git(repo, "add", "data.txt")
    return repo


def worktree_filter(ws: Path, trap: Trap) -> Path:
    main = make_repo(ws / "main", "data.txt filter=wt\n")
    git(main, "config", "filter.wt.clean", trap("worktree"))
    git(main, "worktree", "add", "-q", str(ws / "wt"))
    dirty(ws / "wt")
    return ws / "wt"


def worktree_config(ws: Path, trap: Trap) -> Path:
    main = make_repo(ws / "main", "data.txt filter=wtc\n")
    git(main, "worktree", "add", "-q", str(ws / "wt"))
    git(main, "config", "extensions.worktreeConfig", "true")
    git(ws / "wt", "config", "--worktree", "filter.wtc.clean", trap("worktree-config"))
    dirty(ws / "wt")
    return ws / "wt"


@dataclass(frozen=True)
class Attack:
    build: Callable[[Path, Trap], Path]
    query: tuple[str, ...]
    fires: str  # the marker the control run must produce
    refused: bool = False  # Parism refuses the call (nothing it could say to git disarms it)


ATTACKS = {
    "escaped section name": Attack(escaped_section, ("status",), "escape"),
    "legacy upper-case section": Attack(legacy_upper_case, ("status",), "legacy"),
    "continued value line": Attack(continued_line, ("diff",), "continued"),
    "filter name with '='": Attack(name_with_equals, ("status",), "equals", refused=True),
    "include with trailing comment": Attack(include_with_comment, ("status",), "include"),
    "includeIf gitdir": Attack(include_if_gitdir, ("diff", "--stat"), "includeif"),
    "includeIf onbranch (process filter)": Attack(include_if_onbranch, ("status",), "onbranch"),
    "embedded repository filter": Attack(embedded_filter, ("status",), "embedded"),
    "embedded repository fsmonitor": Attack(embedded_fsmonitor, ("status",), "embedded-fsmonitor"),
    "nested submodule filter": Attack(nested_submodule_filter, ("status",), "nested"),
    "status.submoduleSummary": Attack(submodule_summary, ("status",), "summary-gpg"),
    "status -v textconv": Attack(status_verbose_textconv, ("status", "-v"), "textconv"),
    "worktree (common config)": Attack(worktree_filter, ("status",), "worktree"),
    "worktree config.worktree": Attack(worktree_config, ("status",), "worktree-config"),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_control_plain_git_fires_the_trap(workspace: tuple[Path, Path, Trap], name: str) -> None:
    ws, markers, trap = workspace
    attack = ATTACKS[name]
    repo = attack.build(ws, trap)
    git(repo, *attack.query, check_rc=False)
    assert attack.fires in fired(markers), f"{name}: the trap is not armed"


@pytest.mark.parametrize("name", list(ATTACKS))
def test_guard_exec_args_disarm_plain_git(workspace: tuple[Path, Path, Trap], name: str) -> None:
    ws, markers, trap = workspace
    attack = ATTACKS[name]
    repo = attack.build(ws, trap)
    cfg = load_config(cwd=str(repo), environ={"HOME": str(ws.parent), "PARISM_ALLOWED_PATHS": str(ws)})
    decision = check("git", list(attack.query), str(repo), cfg)
    if attack.refused:
        assert decision.failure is not None and decision.failure.reason == "arg_not_allowed", decision.failure
        return
    assert decision.allowed, decision.failure
    result = subprocess.run(["git", *decision.exec_args], cwd=repo, env={**os.environ, **GIT_ENV},
                            capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert fired(markers) == [], result.stderr[-400:]
    assert result.returncode == 0, result.stderr[-400:]


@pytest.mark.parametrize("name", list(ATTACKS))
def test_engine_in_the_sandbox_fires_nothing(workspace: tuple[Path, Path, Trap], name: str) -> None:
    ws, markers, trap = workspace
    attack = ATTACKS[name]
    repo = attack.build(ws, trap)
    own(ws)
    env = make_engine(ws).run("git", list(attack.query), cwd=str(repo))
    text = f"{env.stdout.raw if env.stdout else ''}{env.stderr.raw if env.stderr else ''}"
    assert fired(markers) == [] and "TRAPFIRED" not in text, text[-400:]
    if attack.refused:
        assert env.failure is not None and env.failure.reason == "arg_not_allowed", env.failure
        return
    assert env.failure is None and env.exitCode == 0, (env.failure, text[-400:])


def test_engine_control_a_trap_run_in_the_sandbox_leaves_its_marker(workspace: tuple[Path, Path, Trap]) -> None:
    """The engine runs above can see a trap fire: one run directly in the same sandbox (build
    profile, project owned by OWNER) writes its marker and prints TRAPFIRED."""
    ws, markers, trap = workspace
    script = trap("channel", False)
    own(ws)
    env = make_engine(ws, with_sh=True).run("sh", [script], cwd=str(ws))
    assert fired(markers) == ["channel"], env
    assert env.stderr is not None and "TRAPFIRED-channel" in (env.stderr.raw or "")


def test_alias_and_ssh_command_are_unreachable(workspace: tuple[Path, Path, Trap]) -> None:
    """alias.* and core.sshCommand: plain git runs them; Parism refuses the alias and the
    remote-contacting subcommand, and the forced settings disarm core.sshCommand even where git
    would use it (ls-remote over ssh, run with the forced -c settings)."""
    ws, markers, trap = workspace
    repo = make_repo(ws / "repo")
    git(repo, "config", "alias.st", f"!{trap('alias', False)}")
    git(repo, "config", "core.sshCommand", trap("ssh", False))
    git(repo, "st", check_rc=False)
    git(repo, "ls-remote", "ssh://example.invalid/x", check_rc=False)
    assert fired(markers) == ["alias", "ssh"]  # control: both armed
    for path in markers.iterdir():
        path.unlink()
    cfg = load_config(cwd=str(repo), environ={"HOME": str(ws.parent), "PARISM_ALLOWED_PATHS": str(ws)})
    for query in (["st"], ["ls-remote", "ssh://example.invalid/x"], ["-c", "alias.x=!id", "status"]):
        decision = check("git", query, str(repo), cfg)
        assert decision.failure is not None and decision.failure.reason == "arg_not_allowed", query
    subprocess.run(["git", "--no-pager", *config_flags(GIT_FORCED_SETTINGS), "ls-remote", "ssh://example.invalid/x"],
                   cwd=repo, env={**os.environ, **GIT_ENV}, capture_output=True, timeout=60)
    assert fired(markers) == []
    decision = check("git", ["status"], str(repo), cfg)
    assert ("alias.st=" in " ".join(decision.exec_args)) and decision.allowed
