"""The appliance driven by testcontainers-python: image build, container lifecycle, clean-up.

testcontainers builds the image from the repository's Containerfile (``DockerImage``: docker-py's
classic builder, ``pull=False``, no network, the local base that ``scripts/build-image`` made) and
starts containers with the hardening docker-py can express. Facts are read from *outside* the
container — the engine's view (``docker inspect``) and the kernel's (``/proc/<pid>/status``,
cgroup files of the host) — not from Parism's own reports, except the one report under test:
that a container started without ``systempaths=unconfined`` (docker-py cannot set it;
``../shared/spec/sandbox-notes.md`` §6) *says* its sandbox is degraded and ``required`` mode
refuses to run commands. Ryuk (testcontainers' reaper) is disabled: its image cannot be pulled
here; every container is removed by its context manager and the module checks nothing is left.

Sessions that need sandbox level ``full`` use ``docker run -i`` with the hardened line
(tests/e2e/test_container.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_container import _unavailable

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")

REPO_ROOT = Path(__file__).resolve().parents[2]
LABEL = "parism-e2e-testcontainers"
RUN_ID = uuid.uuid4().hex[:12]

pytestmark = [pytest.mark.container, pytest.mark.timeout(900)]


def _base_tag() -> str:
    """The base ``scripts/build-image`` builds: its tag carries a hash of the scripts making it."""
    data = b"".join((REPO_ROOT / p).read_bytes() for p in ("scripts/mkbase", "container/trim.sh",
                                                           "container/zip_python.py"))
    return os.environ.get("PARISM_BASE_IMAGE", f"parism-base:bookworm-{hashlib.sha256(data).hexdigest()[:12]}")


@pytest.fixture(scope="module")
def docker_client():  # type: ignore[no-untyped-def]
    try:
        import docker
        from testcontainers.core.image import DockerImage  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the [test] extra installs both
        pytest.fail(f"testcontainers is not installed: {exc}")
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # docker-py raises several types for "no engine"
        _unavailable(f"no Docker engine answers ({type(exc).__name__}: {exc}); run scripts/start-dockerd")
    yield client
    left = client.containers.list(all=True, filters={"label": f"{LABEL}={RUN_ID}"})
    for c in left:
        c.remove(force=True)
    assert not left, f"containers left behind: {[c.name for c in left]}"


@pytest.fixture(scope="module")
def image(docker_client) -> Iterator[str]:  # type: ignore[no-untyped-def]
    from testcontainers.core.image import DockerImage

    base = _base_tag()
    if not docker_client.images.list(name=base):
        _unavailable(f"the local base {base} does not exist; build it with scripts/build-image")
    if not list((REPO_ROOT / "dist" / "wheels").glob("parism-*.whl")):
        _unavailable("dist/wheels has no parism wheel; scripts/build-image makes it")
    tag = f"parism:tc-{RUN_ID}"
    # clean_up=False: DockerImage removes by image id with force, and the build cache makes this
    # image the very one tagged parism:dev — that would untag (or, with a container running it,
    # fail on) the image the other e2e tests use. Only this run's tag is removed, unforced.
    with DockerImage(path=str(REPO_ROOT), dockerfile_path="Containerfile", tag=tag, clean_up=False,
                     buildargs={"BASE_IMAGE": base}, network_mode="none", pull=False, rm=True):
        try:
            yield tag
        finally:
            docker_client.images.remove(tag)
    assert not docker_client.images.list(name=tag), "the run's tag was left behind"


@pytest.fixture
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("tc-ws")
    ws.chmod(0o755)
    (ws / "hello.txt").write_text("hello\n")
    (ws / "hello.txt").chmod(0o644)
    return ws


#: Without an attached client the server would read EOF at once and exit, so the container's main
#: process is a long sleep under the image's own init; Parism runs through ``exec`` (same
#: user, seccomp filter, capabilities and cgroup as the container).
KEEP_ALIVE = ["/usr/bin/tini", "--", "sleep", "3600"]


def hardened(image: str, workspace: Path):  # type: ignore[no-untyped-def]
    """The hardened line as far as docker-py goes: everything but ``systempaths=unconfined``."""
    from testcontainers.core.container import DockerContainer

    from parism.appliance import seccomp_profile

    return (DockerContainer(image)
            .with_volume_mapping(str(workspace), "/workspace", "ro")
            # not tmpfs= (it collides with the wrapper's own keyword; sandbox-notes §6.1)
            .with_tmpfs_mount("/tmp", "rw,nosuid,nodev,size=64m")
            .with_kwargs(entrypoint=KEEP_ALIVE, init=True, read_only=True, cap_drop=["ALL"],
                         security_opt=["no-new-privileges", f"seccomp={seccomp_profile()}"],
                         network_mode="none", pids_limit=256, mem_limit="1g", memswap_limit="1g",
                         user="10001:10001",
                         working_dir="/workspace", labels={LABEL: RUN_ID}))


def host_status(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/status") as fh:
        return dict(line.rstrip("\n").split(":\t", 1) for line in fh if ":\t" in line)


def container_pids(container, expected: int, timeout_s: float = 10.0) -> list[int]:  # type: ignore[no-untyped-def]
    """Host pids of the container's processes: Docker's init and everything below it, once
    ``expected`` of them are there (the container is "running" as soon as Docker's init is:
    tini may not have started its child yet — one fresh-clone CI run saw only init and tini)."""
    import psutil

    container.reload() if hasattr(container, "reload") else None
    pid = container.get_wrapped_container().attrs["State"]["Pid"]
    assert pid > 0, container.get_wrapped_container().attrs["State"]
    root = psutil.Process(pid)
    deadline = time.monotonic() + timeout_s
    while True:
        pids = [root.pid, *(p.pid for p in root.children(recursive=True))]
        if len(pids) >= expected or time.monotonic() >= deadline:
            return pids
        time.sleep(0.05)


def cgroup_file(pid: int, controller: str, name: str) -> str:
    """Read a cgroup limit file of ``pid`` on the host (v2 unified, or the v1 controller)."""
    with open(f"/proc/{pid}/cgroup") as fh:
        lines = [line.strip().split(":", 2) for line in fh]
    for _, ctrls, path in lines:
        if controller in ctrls.split(","):
            return Path(f"/sys/fs/cgroup/{controller}{path}/{name}").read_text().strip()
    for _, ctrls, path in lines:
        if ctrls == "":
            return Path(f"/sys/fs/cgroup{path}/{name}").read_text().strip()
    raise AssertionError(f"no {controller} cgroup for {pid}: {lines}")


def exec_json(container, *argv: str) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
    code, out = container.exec(list(argv))  # stdout and stderr interleaved: the first JSON object
    text = out.decode()
    value, _ = json.JSONDecoder().raw_decode(text, text.index("{"))
    return code, value


def test_container_facts_from_outside(image: str, workspace: Path) -> None:
    with hardened(image, workspace) as c:
        attrs = c.get_wrapped_container().attrs
        assert attrs["Config"]["User"] == "10001:10001"
        assert attrs["HostConfig"]["ReadonlyRootfs"] is True
        assert attrs["HostConfig"]["PidsLimit"] == 256
        assert attrs["HostConfig"]["Memory"] == 1 << 30
        pids = container_pids(c, expected=3)
        assert len(pids) >= 3, pids  # docker-init, tini, sleep
        for pid in pids:
            status = host_status(pid)
            assert status["Uid"].split() == ["10001"] * 4, status["Uid"]  # real, effective, saved, fs
            assert status["Gid"].split() == ["10001"] * 4, status["Gid"]
            assert status["Seccomp"] == "2", status  # a filter is in force
            assert status["NoNewPrivs"] == "1"
            assert int(status["CapEff"], 16) == 0 and int(status["CapBnd"], 16) == 0
        pid = pids[-1]
        assert cgroup_file(pid, "pids", "pids.max") == "256"
        mem = cgroup_file(pid, "memory", "memory.max" if Path("/sys/fs/cgroup/cgroup.controllers").exists()
                          else "memory.limit_in_bytes")
        assert int(mem) == 1 << 30
        code, out = c.exec(["touch", "/usr/parism-tc-probe"])
        assert code != 0 and b"Read-only file system" in out, out
        code, out = c.exec(["touch", "/tmp/ok"])  # the tmpfs is the one writable place
        assert code == 0, out


def test_degraded_sandbox_says_so_and_required_mode_refuses(image: str, workspace: Path) -> None:
    """docker-py cannot unmask /proc (``systempaths=unconfined``): bwrap gets no fresh /proc."""
    with hardened(image, workspace) as c:
        code, described = exec_json(c, "parism", "describe")
        assert code == 0
        sandbox = described["sandbox"]
        assert sandbox["mode"] == "required"
        assert sandbox["level"] != "full" and sandbox["reason"], sandbox
        code, env = exec_json(c, "parism", "run", "--", "ls", "-la")
        assert code == 1
        assert env["ok"] is False and env["failure"]["reason"] == "sandbox_unavailable", env
        assert env["stdout"]["raw"] == ""  # nothing ran


def test_plain_container_is_refused_too(image: str, workspace: Path) -> None:
    """No hardening at all (Docker's default seccomp): level none, and still no command runs."""
    from testcontainers.core.container import DockerContainer

    with DockerContainer(image).with_volume_mapping(str(workspace), "/workspace", "ro").with_kwargs(
            entrypoint=KEEP_ALIVE, network_mode="none", labels={LABEL: RUN_ID}) as c:
        code, described = exec_json(c, "parism", "describe")
        assert described["sandbox"]["level"] == "none", described["sandbox"]
        code, env = exec_json(c, "parism", "run", "--", "ls")
        assert code == 1 and env["failure"]["reason"] == "sandbox_unavailable", env


def test_no_container_outlives_its_context(image: str, workspace: Path, docker_client) -> None:  # type: ignore[no-untyped-def]
    with hardened(image, workspace) as c:
        cid = c.get_wrapped_container().id
        assert docker_client.containers.get(cid).status == "running"
    import docker.errors

    with pytest.raises(docker.errors.NotFound):
        docker_client.containers.get(cid)
