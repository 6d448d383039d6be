"""A real Parism server over stdio, driven by the SDK's own client (legacy handshake, like hosts).

Each test gets a private HOME (no global config leaks in) and a working directory that is the
server's cwd and therefore its default allowed path.  The test config allows ``sleep`` so that a
long-running call exists to cancel; processes are found with psutil by a unique argument.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import psutil
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

REPO_ROOT = Path(__file__).resolve().parents[2]

TEST_CONFIG = """\
[guard]
allowed_commands = ["ls", "git", "sleep"]
timeout_ms = 60000

[guard.command_policies.sleep]
positionals = "any"
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_workdir() -> Path:
    """The server's cwd with a private HOME inside and the test config next to it.

    World-readable and outside pytest's 0700 tmp tree, so the sandbox (which runs commands as
    an unprivileged user) can mount it: the tests exercise the real, confined path.
    """
    work = Path(tempfile.mkdtemp(prefix="parism-e2e-")).resolve()
    work.chmod(0o755)
    (work / "home").mkdir()
    (work / "parism-test.toml").write_text(TEST_CONFIG)
    return work


@pytest.fixture
def workdir() -> Iterator[Path]:
    work = make_workdir()
    yield work
    shutil.rmtree(work, ignore_errors=True)


def git(repo: Path, *args: str) -> None:
    """git with a fixed identity and no global configuration."""
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", *args], cwd=repo, check=True,
                   capture_output=True, env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"})


def server_params(workdir: Path, *extra_args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "parism", "serve", "--config", str(workdir / "parism-test.toml"), *extra_args],
        env={"HOME": str(workdir / "home"), "PYTHONPATH": str(REPO_ROOT)},
        cwd=str(workdir),
    )


@asynccontextmanager
async def open_session(workdir: Path) -> AsyncIterator[ClientSession]:
    async with stdio_client(server_params(workdir)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


@pytest.fixture
async def session(workdir: Path) -> AsyncIterator[ClientSession]:
    async with open_session(workdir) as s:
        yield s


@pytest.fixture
def sleep_arg() -> Iterator[str]:
    """A sleep duration nobody else on the machine uses, so psutil finds exactly our child.

    Teardown kills (by pid) whatever such child a failing test left behind.
    """
    arg = f"{300 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6:06d}"
    yield arg
    for proc in sleep_procs(arg):
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass


def processes_with_arg(arg: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            cmdline = proc.info["cmdline"] or []
            if arg in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def sleep_procs(arg: str) -> list[psutil.Process]:
    """Live ``sleep <arg>`` processes (not a bwrap wrapper that merely mentions the argument)."""
    return [p for p in processes_with_arg(arg) if _name(p) == "sleep"]


def _name(proc: psutil.Process) -> str:
    try:
        return proc.name()
    except psutil.NoSuchProcess:
        return ""


async def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for: {what}")
        await anyio.sleep(0.05)


def server_pid_of(child: psutil.Process) -> int:
    """Walk up from the command to the Python process serving ``-m parism``."""
    for parent in child.parents():
        cmdline = parent.cmdline()
        if "-m" in cmdline and "parism" in cmdline:
            return parent.pid
    raise AssertionError(f"no parism server among the ancestors of {child.pid}")


def pid_alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False

