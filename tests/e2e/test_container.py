"""The OCI appliance end to end: the MCP SDK's real client speaks to ``docker run -i`` of parism:dev.

The hardened line is the one docs/container.md tells users to run (read-only root, no
capabilities, no-new-privileges, the shipped seccomp profile, unmasked /proc, no network, pid and
memory limits, the workspace bind-mounted read-only, uid 10001). The degraded cases are what a
user gets when leaving the seccomp profile or ``systempaths=unconfined`` out: the image sets
``PARISM_SANDBOX=required`` and must refuse to run commands.

Needs a Docker engine and the image (``scripts/start-dockerd && scripts/build-image``). Without
them the module is skipped — unless ``PARISM_CONTAINER_TESTS=1`` (CI after building), where a
missing engine or image is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGE = os.environ.get("PARISM_IMAGE", "parism:dev")
SECCOMP = REPO_ROOT / "policies" / "seccomp-bwrap.json"
LABEL_KEY = "parism-e2e-container"
REQUIRED = os.environ.get("PARISM_CONTAINER_TESTS") == "1"

pytestmark = [pytest.mark.container, pytest.mark.anyio, pytest.mark.timeout(180)]

# The workspace's contents; expected values below come from here, not from earlier answers.
FILES = {"hello.txt": b"hello\n", "data.bin": bytes(range(256)) * 4}
SUBDIR = "sub"

# An explicit (trusted) configuration that lets the guard pass a write to a path outside the
# workspace, so that only the sandbox (and the container's read-only root) stand in the way.
WRITE_CONFIG = """\
[guard]
allowed_commands = ["ls", "touch"]
allowed_paths = ["/workspace", "/etc", "/usr"]

[guard.command_policies.touch]
positionals = "any"
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _unavailable(message: str) -> None:
    if REQUIRED:
        pytest.fail(f"PARISM_CONTAINER_TESTS=1 but {message}", pytrace=False)
    pytest.skip(f"{message} (set PARISM_CONTAINER_TESTS=1 to make this a failure)")


@pytest.fixture(scope="module")
def image() -> str:
    """The image under test, after checking the engine answers and the image exists."""
    if shutil.which("docker") is None:
        _unavailable("the docker CLI is not installed (scripts/start-dockerd installs an engine)")
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        _unavailable("`docker info` did not answer within 60 s")
    if info.returncode != 0:
        last = (info.stderr.strip().splitlines() or ["?"])[-1]
        _unavailable(f"no Docker engine answers `docker info` ({last}); run scripts/start-dockerd")
    found = subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True, text=True, timeout=60)
    if found.returncode != 0:
        _unavailable(f"the image {IMAGE} does not exist; build it with scripts/build-image")
    return IMAGE


def _containers_with(label: str) -> list[str]:
    out = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={label}"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.fixture
def label(image: str) -> Iterator[str]:
    """A label unique to the test; afterwards no container may carry it (``--rm`` must have worked).

    ``docker run --rm`` removes the container once it exits; allow the engine a few seconds, then
    remove what is left and fail.
    """
    value = f"{LABEL_KEY}={uuid.uuid4().hex}"
    yield value
    deadline = time.monotonic() + 15
    left = _containers_with(value)
    while left and time.monotonic() < deadline:
        time.sleep(0.25)
        left = _containers_with(value)
    if left:
        subprocess.run(["docker", "rm", "-f", *left], capture_output=True, timeout=60)
    assert not left, f"containers left behind with label {value}: {left}"


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A host directory the container's uid 10001 can enter and read (mounted read-only)."""
    ws = Path(tempfile.mkdtemp(prefix="parism-ctr-")).resolve()
    ws.chmod(0o755)
    for name, data in FILES.items():
        (ws / name).write_bytes(data)
        (ws / name).chmod(0o644)
    (ws / SUBDIR).mkdir(mode=0o755)
    (ws / "parism-write.toml").write_text(WRITE_CONFIG)
    (ws / "parism-write.toml").chmod(0o644)
    yield ws
    shutil.rmtree(ws, ignore_errors=True)


def hardened_args(image: str, label: str, workspace: Path, *server_args: str) -> list[str]:
    """docs/container.md's hardened line (plus --init, --label and --user, as the brief asks)."""
    return [
        "run", "-i", "--rm", "--init", "--label", label,
        "--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,size=64m",
        "--cap-drop=ALL", "--security-opt", "no-new-privileges",
        "--security-opt", f"seccomp={SECCOMP}",
        "--security-opt", "systempaths=unconfined",
        "--network", "none",
        "--pids-limit", "256", "--memory", "1g", "--memory-swap", "1g",
        "-v", f"{workspace}:/workspace:ro", "-w", "/workspace",
        "--user", "10001:10001",
        image, *server_args,
    ]


def plain_args(image: str, label: str, workspace: Path, *extra: str) -> list[str]:
    """What a user gets by leaving the hardening out: Docker's default seccomp and masked /proc."""
    return ["run", "-i", "--rm", "--init", "--label", label, *extra,
            "-v", f"{workspace}:/workspace:ro", image]


@asynccontextmanager
async def session(docker_args: list[str]) -> AsyncIterator[tuple[ClientSession, Any]]:
    # The SDK passes only a minimal environment by default; the docker CLI needs DOCKER_HOST etc.
    params = StdioServerParameters(command="docker", args=docker_args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            yield s, init


def envelope(result: CallToolResult) -> dict[str, Any]:
    """The structured answer; the text copy must carry the same JSON."""
    assert result.structured_content is not None, result
    assert len(result.content) == 1
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content


# --- hardened line ---------------------------------------------------------------------------------


async def test_initialize_and_list_tools(image: str, label: str, workspace: Path) -> None:
    async with session(hardened_args(image, label, workspace)) as (s, init):
        assert init.server_info.name == "parism"
        tools = {t.name for t in (await s.list_tools()).tools}
    assert {"run", "run_paged", "describe", "dry_run"} <= tools


async def test_describe_reports_full_sandbox_in_required_mode(image: str, label: str, workspace: Path) -> None:
    async with session(hardened_args(image, label, workspace)) as (s, _):
        result = await s.call_tool("describe", {})
    assert result.is_error is False
    sandbox = envelope(result)["sandbox"]
    assert sandbox["engine"] == "bwrap"
    assert sandbox["mode"] == "required"  # ENV PARISM_SANDBOX=required in the image
    assert sandbox["level"] == "full", sandbox
    assert sandbox["active"] is True and sandbox["reason"] is None
    assert sandbox["uid"] == 10001
    assert sandbox["features"]["pid_namespace"] is True and sandbox["features"]["disable_userns"] is True


async def test_run_ls_la_parses_the_workspace(image: str, label: str, workspace: Path) -> None:
    async with session(hardened_args(image, label, workspace)) as (s, _):
        result = await s.call_tool("run", {"cmd": "ls", "args": ["-la"]})
    env = envelope(result)
    assert result.is_error is False and env["ok"] is True, env
    assert env["cwd"] == "/workspace" and env["exitCode"] == 0
    entries = {e["name"]: e for e in env["stdout"]["parsed"]["entries"]}
    expected = {".", "..", SUBDIR, "parism-write.toml", *FILES}
    assert set(entries) == expected
    for name, data in FILES.items():
        assert entries[name]["size_bytes"] == len(data)
        assert entries[name]["type"] == "file"
        assert entries[name]["mode"] == "-rw-r--r--"
    assert entries[SUBDIR]["type"] == "directory"


async def test_write_outside_the_workspace_fails_read_only(image: str, label: str, workspace: Path) -> None:
    args = hardened_args(image, label, workspace, "serve", "--config", "/workspace/parism-write.toml")
    async with session(args) as (s, _):
        describe = envelope(await s.call_tool("describe", {}))
        etc = await s.call_tool("run", {"cmd": "touch", "args": ["/etc/parism-e2e-x"]})
        usr = await s.call_tool("run", {"cmd": "touch", "args": ["/usr/parism-e2e-x"]})
        inside = await s.call_tool("run", {"cmd": "touch", "args": ["/workspace/parism-e2e-x"]})
    assert describe["sandbox"]["level"] == "full"
    for result, path in ((etc, "/etc/parism-e2e-x"), (usr, "/usr/parism-e2e-x"),
                         (inside, "/workspace/parism-e2e-x")):
        env = envelope(result)
        # the guard let it through: the command ran and the kernel refused the write
        assert "guard_error" not in env, env
        assert env["ok"] is False and env["exitCode"] == 1, env
        assert env["failure"]["reason"] == "non_zero_exit"
        assert f"cannot touch '{path}': Read-only file system" in env["stderr"]["raw"], env
    assert not (workspace / "parism-e2e-x").exists()


# --- degraded: the hardening left out -> required mode refuses --------------------------------------


async def test_plain_docker_run_reports_no_sandbox_and_refuses(image: str, label: str, workspace: Path) -> None:
    async with session(plain_args(image, label, workspace)) as (s, _):
        describe = await s.call_tool("describe", {})
        run = await s.call_tool("run", {"cmd": "ls", "args": ["-la"]})
    sandbox = envelope(describe)["sandbox"]
    assert sandbox["mode"] == "required"
    assert sandbox["level"] == "none" and sandbox["active"] is False, sandbox
    assert sandbox["reason"], sandbox  # why: Docker's default seccomp blocks the namespaces
    env = envelope(run)
    assert run.is_error is True and env["ok"] is False
    assert env["failure"]["kind"] == "exec" and env["failure"]["reason"] == "sandbox_unavailable", env
    assert env["stdout"]["raw"] == ""  # nothing ran


async def test_seccomp_without_systempaths_is_nested_weak_and_refused(image: str, label: str,
                                                                       workspace: Path) -> None:
    """The profile alone (no ``systempaths=unconfined``): bwrap cannot mount a fresh /proc."""
    extra = ["--cap-drop=ALL", "--security-opt", "no-new-privileges",
             "--security-opt", f"seccomp={SECCOMP}", "--network", "none"]
    async with session(plain_args(image, label, workspace, *extra)) as (s, _):
        describe = await s.call_tool("describe", {})
        run = await s.call_tool("run", {"cmd": "ls", "args": ["-la"]})
    sandbox = envelope(describe)["sandbox"]
    assert sandbox["level"] == "nested-weak", sandbox
    assert sandbox["features"]["pid_namespace"] is False
    env = envelope(run)
    assert run.is_error is True
    assert env["failure"]["reason"] == "sandbox_unavailable", env
    assert "nested-weak" in env["failure"]["message"]


# --- PID 1 ----------------------------------------------------------------------------------------


async def test_image_pid1_reaps_what_the_sandboxes_leave(image: str, label: str, workspace: Path) -> None:
    """Without ``--init`` the image's own tini must reap: each sandboxed call leaves an orphan
    (bwrap's pid-namespace helper) behind, and without a reaper these zombies exhaust a small
    ``--pids-limit`` after a few dozen calls (``bwrap: Can't fork for pid 1``; observed at call
    ~36 with parism as PID 1 and a limit of 48)."""
    args = hardened_args(image, label, workspace)
    args.remove("--init")
    args[args.index("--pids-limit") + 1] = "48"
    async with session(args) as (s, _):
        for i in range(80):
            env = envelope(await s.call_tool("run", {"cmd": "ls", "args": ["-a"]}))
            assert env["ok"] is True, f"call {i}: {env}"
