"""The uid-0-in-a-namespace rule (``root_masked``) is never reachable by a workspace the caller
controls (issue 9).

A root server runs a command in a root-owned private workspace as host uid 0 without
capabilities: it keeps root's access to root's own files. Two ways that reached further than
a root-private tree the operator named:

* **build**: the command wrote its project as host root — a set-uid root copy of python3 left
  in a 0711 workspace then ran as root for every host user (here: ``nobody``);
* **shared tree**: a private directory some root process left inside an allowed path others
  can read (``/tmp``, a shared workspace) gave uid 0 to whoever named it as the cwd, and with
  it every root-only file of every allowed path.

Each armed control starts the same sandbox the old rule chose (the plan built directly, past
the refusal) and shows the harm; through the sandbox's launcher — the engine's only way in —
the call is refused with ``exec/sandbox_unsupported``, or runs seeing only root's named tree.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

import parism
from parism.wire.envelope import Failure
from parism.run.sandbox import Sandbox
from parism.run.sandbox.launcher import Prepared
from parism.run.sandbox.plan import Plan
from tests.security.sandbox.helpers import SH, decision, make_spec, run, sandbox_factory

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="root_masked exists only for a root server")
__all__ = ["sandbox_factory"]  # the fixture, used by name
SECRET = "ROOT-ONLY-7d3e"
PLANT = "cp /usr/bin/python3 ./py && chmod 4755 ./py"


@pytest.fixture
def base() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="parism-rootmask-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _dir(path: Path, mode: int) -> Path:
    path.mkdir()
    path.chmod(mode)
    return path


def _secret(where: Path) -> Path:
    path = where / "secret"
    path.write_text(SECRET + "\n")
    path.chmod(0o600)  # root's only
    return path


def _run_plan(plan: Plan, argv: list[str]) -> tuple[int | None, str]:
    """The sandbox of ``plan`` started directly (what the old rule did), argv run in it."""
    started = Prepared(plan).handover(argv)
    try:
        code = started.wait(20)
        return code, started.stdout.read().decode() + started.stderr.read().decode()
    finally:
        started.kill_tree()
        started.stdout.close()
        started.stderr.close()


def _refused(sb: Sandbox, argv: list[str], cwd: Path) -> Failure:
    launcher = sb.launcher(decision(), make_spec(argv, str(cwd)))
    assert isinstance(launcher, Failure), launcher
    assert (launcher.kind, launcher.reason) == ("exec", "sandbox_unsupported"), launcher
    return launcher


def _euid_as_nobody(program: Path) -> str:
    out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(program), "-c",
                          "import os; print(os.geteuid())"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def test_control_a_build_as_host_root_leaves_a_setuid_root_program(sandbox_factory, base: Path) -> None:
    ws = _dir(base / "ws", 0o711)  # enterable by everyone, listable by none: root_masked
    sb = sandbox_factory([str(ws)], writable=True)
    assert sb.identity_for(str(ws)).rule == "root_masked"
    code, out = _run_plan(sb.plan(decision(), make_spec([SH], str(ws))), [SH, "-c", PLANT])
    assert code == 0, out
    assert os.stat(ws / "py").st_uid == 0 and os.stat(ws / "py").st_mode & 0o4000
    assert _euid_as_nobody(ws / "py") == "0"  # the harm: any host user becomes root


def test_a_build_is_never_run_as_host_root(sandbox_factory, base: Path) -> None:
    ws = _dir(base / "ws", 0o711)
    sb = sandbox_factory([str(ws)], writable=True)
    failure = _refused(sb, [SH, "-c", PLANT], ws)
    assert "writable" in failure.message and failure.hint
    assert not (ws / "py").exists()


def test_control_a_private_directory_in_a_shared_tree_gave_uid_0(sandbox_factory, base: Path) -> None:
    shared = _dir(base / "shared", 0o755)
    left = _dir(shared / "left-by-root", 0o700)  # e.g. a root process's mkdtemp under /tmp
    _secret(left)
    sb = sandbox_factory([str(shared)])
    assert sb.identity_for(str(left)).rule == "root_masked"
    code, out = _run_plan(sb.plan(decision(), make_spec([SH], str(left))), ["/usr/bin/cat", "secret"])
    assert code == 0 and SECRET in out  # the old rule: root's file, read


def test_a_private_directory_in_a_shared_tree_is_refused(sandbox_factory, base: Path) -> None:
    shared = _dir(base / "shared", 0o755)
    left = _dir(shared / "left-by-root", 0o700)
    _secret(left)
    sb = sandbox_factory([str(shared)])
    failure = _refused(sb, ["/usr/bin/cat", "secret"], left)
    assert "no allowed path holding it is root's private tree" in failure.message


def test_no_allowed_paths_means_no_tree_was_given_as_roots(sandbox_factory, base: Path) -> None:
    private = _dir(base / "private", 0o700)
    _refused(sandbox_factory([]), ["/usr/bin/true"], private)


def test_roots_named_tree_runs_and_sees_no_other_allowed_tree(sandbox_factory, base: Path) -> None:
    """The operator named a root-private tree: the command runs there as uid 0 and reads it;
    another allowed path (readable by others, holding a root-only file) is not mounted — the
    control mounts it as before and uid 0 reads that file."""
    own = _dir(base / "own", 0o700)
    _secret(own)
    shared = _dir(base / "shared", 0o755)
    other = _secret(shared)
    sb = sandbox_factory([str(own), str(shared)])
    r = run(sb, [SH, "-c", f"cat secret; cat {other}; id -u"], str(own))
    assert r.out.splitlines() == [SECRET, "0"], r.out + r.err
    assert "No such file" in r.err
    plan = sb.plan(decision(), make_spec([SH], str(own)))
    assert plan.ro_paths == ()  # the cwd is bound as the workspace; the shared tree is left out
    code, out = _run_plan(dataclasses.replace(plan, ro_paths=(str(shared),)), ["/usr/bin/cat", str(other)])
    assert code == 0 and SECRET in out  # control: mounted, it would be read


def test_the_engine_refuses_a_build_in_roots_private_workspace(base: Path) -> None:
    ws = _dir(base / "ws", 0o711)
    cfg = base / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"profile": "build", "allowed_paths": [str(ws)]},
                                  "sandbox": {"mode": "required"}}))
    engine = parism.create_engine(str(cfg))
    try:
        env = engine.run("ls", ["-la"], cwd=str(ws))
    finally:
        engine.close()
    assert env.failure is not None and (env.failure.kind, env.failure.reason) == ("exec", "sandbox_unsupported")


def test_host_mounts_as_uid_0_sees_only_the_system_directories(sandbox_factory, base: Path) -> None:
    """df's class binds the host root: as host uid 0 every top-level directory but the
    system ones is covered, so a root-only file elsewhere (here a top-level directory made
    for the test) is not read; df still answers. Control: the other rules' masks show it."""
    own = _dir(base / "own", 0o700)
    top = Path(tempfile.mkdtemp(prefix="parism-rootmask-top-", dir="/"))
    try:
        top.chmod(0o755)
        other = _secret(top)
        sb = sandbox_factory([str(own)])
        r = run(sb, [SH, "-c", f"cat {other}; df -P / >/dev/null && echo DF-OK"], str(own), namespace="host_mounts")
        assert SECRET not in r.out and "DF-OK" in r.out, r.out + r.err
        plan = sb.plan(decision(namespace="host_mounts"), make_spec([SH], str(own)))
        unmasked = dataclasses.replace(plan, run_as=dataclasses.replace(plan.run_as, rule="uid0_unmasked"))
        code, out = _run_plan(unmasked, ["/usr/bin/cat", str(other)])
        assert code == 0 and SECRET in out  # control: the usual host_mounts masks, as uid 0
    finally:
        shutil.rmtree(top, ignore_errors=True)
