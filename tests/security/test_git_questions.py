"""The guard's questions to git are asked as the call, where the call runs (issue 23, 1 and 2).

A repository's configuration can include any file. Asked on the host as the server, git read
files the call's git never can — and failed where the call's git would not: with ``[include]
path = /var/lib/dpkg/status`` (no config syntax, outside the sandbox's view) the host-side
``rev-parse`` failed, the guard took that for "not a repository", forced nothing and bound no
copy, and the sandboxed git — which cannot see the include, so ignores it — ran the
repository's ``filter.*.clean`` / ``diff.*.textconv``. A root-only include was read as root
and its entries shown to a call running as another uid.

Each attack has an armed-trap control in the same test: plain git run by the test in the same
sandbox (the call's view and uid, no guard) fires the trap, or root's own git reads the secret,
or plain git blocks on the FIFO. Then the same attack through Parism — the engine (both
profiles), the CLI and the MCP server through the SDK's client — is refused as
``arg_not_allowed`` with a message naming the file, and nothing fires. Real git, real bwrap.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from parism.engine import Engine, create_engine
from parism.run.sandbox import Sandbox
from tests.security.sandbox.gitrepos import GIT_ENV, Trap, dirty, fired, git, make_repo, own, workspace
from tests.security.sandbox.helpers import run as sandboxed, settings

pytestmark = [pytest.mark.skipif(shutil.which("git") is None, reason="git not installed"),
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")]
__all__ = ["workspace"]  # the fixture, used by name

REPO_ROOT = Path(__file__).resolve().parents[2]
DPKG_STATUS = "/var/lib/dpkg/status"  # any file that is no git config and lies outside the view
QUERIES = {"diff": ("diff",), "status": ("status",), "status -v": ("status", "-v")}
PROFILES = ("readonly", "build")
GIT = shutil.which("git") or "git"


@dataclass
class Attack:
    ws: Path
    markers: Path
    repo: Path
    trap_name: str


def armed_repo(ws: Path, trap: Trap, name: str) -> Path:
    """A repository whose data.txt goes through ``filter.t.clean`` (status, diff: the file is
    dirty) and ``diff.t.textconv`` (status -v: a staged change), both the trap."""
    repo = make_repo(ws / "repo", "data.txt filter=t diff=t\n")
    (repo / "data.txt").write_text("two\n")
    git(repo, "add", "data.txt")
    dirty(repo)
    with (repo / ".git/config").open("a") as fh:
        fh.write(f'[filter "t"]\n\tclean = {trap(name)}\n[diff "t"]\n\ttextconv = {trap(name)}\n')
    return repo


def include(repo: Path, line: str) -> None:
    """Put an include *first* in .git/config (before the drivers, as in the red team's file)."""
    config = repo / ".git/config"
    config.write_text(line + config.read_text())


def engine_for(ws: Path, profile: str) -> Engine:
    cfg = ws.parent / f"parism-{profile}.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"profile": profile, "allowed_paths": [str(ws)]},
                                  "sandbox": {"mode": "required"}}))
    engine = create_engine(str(cfg))
    assert engine.errors == []
    return engine


def plain_git_in_the_sandbox(ws: Path, repo: Path, profile: str, *args: str) -> str:
    """The control: git run by the test in the call's sandbox (same view, same uid) without
    the guard — what the old code let run after its host-side question failed. Its stderr."""
    sandbox = Sandbox(settings(writable=profile == "build"), [str(ws)], str(ws), pool_size=0)
    env = {"PATH": "/usr/bin:/bin", **GIT_ENV}
    r = sandboxed(sandbox, [GIT, "-c", "safe.directory=*", *args], str(repo), env=env)
    return r.out + r.err


def refused_naming(envelope: dict[str, Any], name: str) -> None:
    failure = envelope.get("failure") or {}
    assert (failure.get("kind"), failure.get("reason")) == ("guard", "arg_not_allowed"), envelope
    assert name in failure.get("message", ""), failure


def nothing_fired(markers: Path, *texts: str) -> None:
    assert fired(markers) == []
    assert not any("TRAPFIRED" in t for t in texts)


@pytest.fixture
def dpkg_attack(workspace: tuple[Path, Path, Trap]) -> Attack:
    if not os.path.isfile(DPKG_STATUS):
        pytest.skip(f"{DPKG_STATUS} does not exist here")
    ws, markers, trap = workspace
    repo = armed_repo(ws, trap, "dpkg")
    include(repo, f"[include]\n\tpath = {DPKG_STATUS}\n")
    own(ws)
    return Attack(ws, markers, repo, "dpkg")


def host_question_fails(repo: Path) -> None:
    """What made the old guard conclude "not a repository": git asked on the host fails."""
    asked = subprocess.run([GIT, "-c", "safe.directory=*", "rev-parse", "--absolute-git-dir"], cwd=repo,
                           env={**os.environ, **GIT_ENV}, capture_output=True, timeout=30)
    assert asked.returncode == 128 and DPKG_STATUS.encode() in asked.stderr, asked


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("query", QUERIES)
def test_an_include_outside_the_view_refuses_through_the_engine(dpkg_attack: Attack, profile: str,
                                                                query: str) -> None:
    a = dpkg_attack
    host_question_fails(a.repo)
    control = plain_git_in_the_sandbox(a.ws, a.repo, profile, *QUERIES[query])
    assert f"TRAPFIRED-{a.trap_name}" in control, f"the trap did not fire without the guard: {control}"
    for marker in a.markers.iterdir():
        marker.unlink()
    engine = engine_for(a.ws, profile)
    try:
        env = engine.run("git", list(QUERIES[query]), cwd=str(a.repo)).to_wire()
    finally:
        engine.close()
    nothing_fired(a.markers, json.dumps(env))
    refused_naming(env, DPKG_STATUS)


def test_an_include_outside_the_view_refuses_through_the_cli(dpkg_attack: Attack) -> None:
    a = dpkg_attack
    control = plain_git_in_the_sandbox(a.ws, a.repo, "build", "status")
    assert "TRAPFIRED-dpkg" in control
    for marker in a.markers.iterdir():
        marker.unlink()
    cfg = a.ws.parent / "parism-cli.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"profile": "build", "allowed_paths": [str(a.ws)]},
                                  "sandbox": {"mode": "required"}}))
    home = Path(tempfile.mkdtemp(prefix="parism-home-"))
    try:
        done = subprocess.run([sys.executable, "-m", "parism", "run", "--config", str(cfg), "--cwd", str(a.repo),
                               "--", "git", "status"], cwd=a.ws.parent, capture_output=True, text=True, timeout=120,
                              env={"HOME": str(home), "PATH": os.environ["PATH"], "PYTHONPATH": _pythonpath()})
    finally:
        shutil.rmtree(home, ignore_errors=True)
    assert done.returncode == 1, done.stderr
    env = json.loads(done.stdout)
    nothing_fired(a.markers, done.stdout, done.stderr)
    refused_naming(env, DPKG_STATUS)


def _pythonpath() -> str:
    """This tree first, then whatever made its dependencies importable (scripts/test-nonroot)."""
    return os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)


def test_an_include_outside_the_view_refuses_through_mcp(dpkg_attack: Attack) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    a = dpkg_attack
    control = plain_git_in_the_sandbox(a.ws, a.repo, "readonly", "status", "-v")
    assert "TRAPFIRED-dpkg" in control
    cfg = a.ws.parent / "parism-mcp.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"profile": "readonly", "allowed_paths": [str(a.ws)]},
                                  "sandbox": {"mode": "required"}}))
    home = Path(tempfile.mkdtemp(prefix="parism-home-"))
    params = StdioServerParameters(command=sys.executable, args=["-m", "parism", "serve", "--config", str(cfg)],
                                   env={"HOME": str(home), "PATH": os.environ["PATH"], "PYTHONPATH": _pythonpath()},
                                   cwd=str(a.ws.parent))

    async def call() -> Any:
        with anyio.fail_after(120):
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await session.call_tool("run", {"cmd": "git", "args": ["status", "-v"],
                                                           "cwd": str(a.repo)})

    try:
        result = anyio.run(call)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    env = result.structuredContent if hasattr(result, "structuredContent") else result.structured_content
    nothing_fired(a.markers, json.dumps(env))
    refused_naming(env, DPKG_STATUS)


# -- reading as root, showing to nobody -----------------------------------------------------

SECRET_URL = "https://root-only.example.invalid/SECRET-9f3c2b"


@pytest.mark.skipif(os.geteuid() != 0, reason="a root-only file needs a root server (the attack is root's reading)")
@pytest.mark.parametrize("where", ["inside the view", "outside the view"])
def test_a_root_only_include_is_refused_not_shown(workspace: tuple[Path, Path, Trap], where: str) -> None:
    ws, _markers, _trap = workspace
    repo = make_repo(ws / "repo")
    private = ws / "private" if where == "inside the view" else Path(tempfile.mkdtemp(prefix="parism-root-"))
    private.mkdir(exist_ok=True)
    secret = private / "secret.cfg"
    secret.write_text(f'[remote "origin"]\n\turl = {SECRET_URL}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n')
    include(repo, f"[include]\n\tpath = {secret}\n")
    own(ws)
    for path, mode in ((private, 0o700), (secret, 0o600)):
        os.chown(path, 0, 0)
        os.chmod(path, mode)
    try:
        # control: root's own git shows the URL (the old guard's reading, copied into the 0444 copy) …
        as_root = subprocess.run([GIT, "-c", "safe.directory=*", "remote", "-v"], cwd=repo,
                                 env={**os.environ, **GIT_ENV}, capture_output=True, text=True, timeout=30)
        assert SECRET_URL in as_root.stdout
        # … while the call's own identity may not read the file (cat in the call's sandbox)
        sandbox = Sandbox(settings(), [str(ws)], str(ws), pool_size=0)
        cat = sandboxed(sandbox, ["/bin/cat", str(secret)], str(repo))
        assert cat.cap.exit_code != 0 and SECRET_URL not in cat.out
        engine = engine_for(ws, "readonly")
        try:
            env = engine.run("git", ["remote", "-v"], cwd=str(repo)).to_wire()
        finally:
            engine.close()
        assert "SECRET-9f3c2b" not in json.dumps(env)
        refused_naming(env, str(secret))
    finally:
        if where == "outside the view":
            shutil.rmtree(private, ignore_errors=True)


# -- other include targets -----------------------------------------------------------------

def _refusal(ws: Path, repo: Path, profile: str = "build", args: tuple[str, ...] = ("status",)) -> dict[str, Any]:
    engine = engine_for(ws, profile)
    try:
        return engine.run("git", list(args), cwd=str(repo)).to_wire()
    finally:
        engine.close()


@pytest.mark.parametrize("target", ["/proc/self/status", "a symlink to /proc/self/environ"])
def test_a_proc_file_include_is_refused(workspace: tuple[Path, Path, Trap], target: str) -> None:
    ws, markers, trap = workspace
    repo = armed_repo(ws, trap, "proc")
    named = target
    if target.startswith("a symlink"):
        (repo / "inc.cfg").symlink_to("/proc/self/environ")
        named = str(repo / "inc.cfg")
    include(repo, f"[include]\n\tpath = {named}\n")
    own(ws)
    env = _refusal(ws, repo)
    refused_naming(env, named)
    assert "/proc" in env["failure"]["message"]
    nothing_fired(markers, json.dumps(env))


def test_a_fifo_include_is_refused_without_hanging(workspace: tuple[Path, Path, Trap]) -> None:
    ws, markers, trap = workspace
    repo = armed_repo(ws, trap, "fifo")
    fifo = repo / "inc.fifo"
    os.mkfifo(fifo)
    include(repo, "[include]\n\tpath = ../inc.fifo\n")
    own(ws)
    with pytest.raises(subprocess.TimeoutExpired):  # control: plain git blocks in open()
        subprocess.run([GIT, "-c", "safe.directory=*", "config", "--list"], cwd=repo,
                       env={**os.environ, **GIT_ENV}, capture_output=True, timeout=2)
    started = time.monotonic()
    env = _refusal(ws, repo)
    assert time.monotonic() - started < 4.0, "the guard waited for the FIFO"
    refused_naming(env, str(fifo))
    assert "FIFO" in env["failure"]["message"]
    nothing_fired(markers, json.dumps(env))


def test_a_directory_include_is_refused(workspace: tuple[Path, Path, Trap]) -> None:
    ws, markers, trap = workspace
    repo = armed_repo(ws, trap, "dir")
    (repo / "conf.d").mkdir()
    include(repo, "[include]\n\tpath = ../conf.d\n")
    own(ws)
    env = _refusal(ws, repo)
    refused_naming(env, str(repo / "conf.d"))
    assert "directory" in env["failure"]["message"]
    nothing_fired(markers, json.dumps(env))


def test_a_missing_include_is_refused(workspace: tuple[Path, Path, Trap]) -> None:
    """git ignores an include whose file is missing; a missing file cannot be told from one
    that vanished between two readings, so it refuses."""
    ws, markers, trap = workspace
    repo = armed_repo(ws, trap, "missing")
    include(repo, "[include]\n\tpath = ../nowhere.cfg\n")
    own(ws)
    control = plain_git_in_the_sandbox(ws, repo, "build", "status")
    assert "TRAPFIRED-missing" in control  # git itself skips the missing file
    for marker in markers.iterdir():
        marker.unlink()
    env = _refusal(ws, repo)
    refused_naming(env, str(repo / "nowhere.cfg"))
    nothing_fired(markers, json.dumps(env))


def test_an_include_if_gitdir_outside_the_view_is_refused(workspace: tuple[Path, Path, Trap]) -> None:
    if not os.path.isfile(DPKG_STATUS):
        pytest.skip(f"{DPKG_STATUS} does not exist here")
    ws, markers, trap = workspace
    repo = armed_repo(ws, trap, "includeif")
    include(repo, f'[includeIf "gitdir:{repo}/"]\n\tpath = {DPKG_STATUS}\n')
    own(ws)
    control = plain_git_in_the_sandbox(ws, repo, "readonly", "diff")
    assert "TRAPFIRED-includeif" in control
    env = _refusal(ws, repo, "readonly", ("diff",))
    refused_naming(env, DPKG_STATUS)
    nothing_fired(markers, json.dumps(env))


def test_an_include_cycle_is_refused(workspace: tuple[Path, Path, Trap]) -> None:
    ws, markers, trap = workspace
    repo = armed_repo(ws, trap, "cycle")
    (repo / ".git/a.cfg").write_text("[include]\n\tpath = b.cfg\n")
    (repo / ".git/b.cfg").write_text("[include]\n\tpath = a.cfg\n")
    include(repo, "[include]\n\tpath = a.cfg\n")
    own(ws)
    env = _refusal(ws, repo)
    refused_naming(env, "a.cfg")
    assert "include depth" in env["failure"]["message"]
    nothing_fired(markers, json.dumps(env))


def test_an_include_that_vanishes_while_calls_run(workspace: tuple[Path, Path, Trap]) -> None:
    """A thread renames the included file (which names the filter) away and back while calls
    run: every answer is either the disarmed query or a refusal naming the file, never the
    trap; the race was live (both outcomes seen, bounded)."""
    ws, markers, trap = workspace
    repo = make_repo(ws / "repo", "data.txt filter=v\n")
    dirty(repo)
    inc, away = ws / "inc.cfg", ws / "inc.away"
    inc.write_text(f'[filter "v"]\n\tclean = {trap("vanish")}\n')
    include(repo, f"[include]\n\tpath = {inc}\n")
    own(ws)
    control = plain_git_in_the_sandbox(ws, repo, "build", "status")
    assert "TRAPFIRED-vanish" in control
    for marker in markers.iterdir():
        marker.unlink()
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            for a, b in ((inc, away), (away, inc)):
                try:
                    os.rename(a, b)
                except FileNotFoundError:
                    pass
                time.sleep(0.003)

    engine = engine_for(ws, "build")
    outcomes: set[str] = set()
    thread = threading.Thread(target=flip, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        calls = 0
        while (calls < 20 or len(outcomes) < 2) and time.monotonic() < deadline:
            env = engine.run("git", ["status", "--porcelain"], cwd=str(repo)).to_wire()
            calls += 1
            nothing_fired(markers, json.dumps(env))
            if env.get("failure") and env["failure"]["kind"] == "guard":
                refused_naming(env, str(inc))
                outcomes.add("refused")
            else:
                assert env["ok"] is True, env
                outcomes.add("ran")
    finally:
        stop.set()
        thread.join(5)
        engine.close()
    assert outcomes == {"refused", "ran"}, f"the race was not live in {calls} calls: {outcomes}"
