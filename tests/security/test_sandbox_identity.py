"""Who the command runs as: never with root's file access to the host (identity.py rules)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from parism.run.sandbox import identity
from tests.security.sandbox.helpers import SH, host_group, host_user, run, sandbox_factory

__all__ = ["sandbox_factory"]

TEST_UID = 4242
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the workspace rules apply to a root server")
PROBE = "id -u; grep CapEff /proc/self/status; touch probe-write 2>/dev/null && echo WRITABLE || echo READONLY"


@pytest.fixture
def ws_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="parism-sbx-id-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _inside(sandbox_factory, ws: Path, writable: bool = False) -> tuple[str, list[str]]:
    sb = sandbox_factory([str(ws)], writable=writable, server_cwd=str(ws))
    rule = sb.status()["uid_rule"]
    r = run(sb, [SH, "-c", PROBE], str(ws))
    return rule, r.out.split()


def test_server_user_rule_when_not_root(tmp_path: Path) -> None:
    got = identity.choose(str(tmp_path), euid=1234)
    assert (got.uid, got.rule, got.switch) == (1234, "server_user", False)


@as_root
def test_workspace_owned_by_a_user_runs_as_that_user(sandbox_factory, ws_dir: Path) -> None:
    os.chown(ws_dir, TEST_UID, TEST_UID)
    ws_dir.chmod(0o700)  # only its owner may enter: nobody else could run there
    rule, out = _inside(sandbox_factory, ws_dir, writable=True)
    assert rule == "workspace_owner"
    assert out == [str(TEST_UID), "CapEff:", "0000000000000000", "WRITABLE"]
    assert (ws_dir / "probe-write").stat().st_uid == TEST_UID  # files keep the owner's uid


@as_root
def test_root_owned_listable_workspace_runs_as_nobody(sandbox_factory, ws_dir: Path) -> None:
    ws_dir.chmod(0o755)
    rule, out = _inside(sandbox_factory, ws_dir)
    assert rule == "unprivileged_uid"
    assert out == [str(identity.NOBODY), "CapEff:", "0000000000000000", "READONLY"]


@as_root
@pytest.mark.parametrize("mode", [0o700, 0o711])  # 0711: enterable but not listable
def test_root_only_workspace_runs_as_capless_root(sandbox_factory, ws_dir: Path, mode: int) -> None:
    ws_dir.chmod(mode)
    rule, out = _inside(sandbox_factory, ws_dir)
    assert rule == "root_masked"
    assert out == ["0", "CapEff:", "0000000000000000", "READONLY"]
    assert not (ws_dir / "probe-write").exists()


def test_can_list_follows_every_ancestor(ws_dir: Path) -> None:
    ws_dir.chmod(0o755)  # under /tmp (1777) and / (755)
    outer = ws_dir / "outer"
    inner = outer / "inner"
    inner.mkdir(parents=True)
    inner.chmod(0o755)
    outer.chmod(0o700)  # the ancestor blocks others
    assert not identity.can_list(str(inner), identity.NOBODY, identity.NOBODY)
    outer.chmod(0o711)  # enterable: enough for an ancestor
    assert identity.can_list(str(inner), identity.NOBODY, identity.NOBODY)
    inner.chmod(0o711)  # but the directory itself must be listable
    assert not identity.can_list(str(inner), identity.NOBODY, identity.NOBODY)


# -- owners inside are the host's (identity map of a root server) -----------------------------

def _owner_fixture(ws: Path) -> dict[str, tuple[int, int]]:
    """Files owned by a uid without a passwd entry, by daemon and by root."""
    made = {"nouser": (TEST_UID, TEST_UID), "daemon": (1, 1), "rootfile": (0, 0)}
    for name, (uid, gid) in made.items():
        (ws / name).write_text(name)
        os.chown(ws / name, uid, gid)
    return made


def _names(uid: int, gid: int) -> tuple[str, str]:
    return host_user(uid, "UNKNOWN"), host_group(gid, "UNKNOWN")


RULES = {"workspace_owner": (TEST_UID, 0o700), "unprivileged_uid": (0, 0o755), "root_masked": (0, 0o711)}


@as_root
@pytest.mark.parametrize("rule", sorted(RULES))
def test_owners_and_process_users_inside_are_the_hosts(sandbox_factory, ws_dir: Path, rule: str) -> None:
    owner, mode = RULES[rule]
    made = _owner_fixture(ws_dir)
    os.chown(ws_dir, owner, owner)
    ws_dir.chmod(mode)
    sb = sandbox_factory([str(ws_dir)], server_cwd=str(ws_dir))
    assert sb.status()["identity"] == {"mode": "identity_map", "rule": rule}
    names = " ".join(made)
    script = f"cd {ws_dir}; stat -c '%n %u %g %U %G' {names}"
    r = run(sb, [SH, "-c", script], str(ws_dir))
    assert r.cap.exit_code == 0, r.err
    got = {line.split()[0]: line.split()[1:] for line in r.out.splitlines()}
    for name in made:
        st = os.lstat(ws_dir / name)  # the kernel's own answer, outside the sandbox
        assert got[name] == [str(st.st_uid), str(st.st_gid), *_names(st.st_uid, st.st_gid)], name
    procs = run(sb, ["/usr/bin/ps", "-o", "uid=,gid=", "-p", "1"], str(ws_dir), namespace="host_procs")
    with open("/proc/1/status") as f:
        fields = {k: v.split() for k, _, v in (line.partition(":") for line in f)}
    assert procs.out.split() == [fields["Uid"][1], fields["Gid"][1]]


@as_root
@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("namespace", ["isolated", "host_procs"])
def test_no_namespace_can_be_made_or_joined_inside(sandbox_factory, ws_dir: Path, rule: str, namespace: str) -> None:
    owner, mode = RULES[rule]
    os.chown(ws_dir, owner, owner)
    ws_dir.chmod(mode)
    tries = ["unshare -U true", "unshare -Um true", "unshare -Un true", "unshare -Upf true",
             "python3 -c 'import os; os.waitpid(os.fork() or os._exit(0), 0)'"]
    script = "; ".join(f"{t} >/dev/null 2>&1; echo $?" for t in tries)
    # armed trap: the same attempts by the same kind of user without Parism all succeed
    host = subprocess.run(["setpriv", f"--reuid={TEST_UID}", f"--regid={TEST_UID}", "--clear-groups", SH, "-c", script],
                          capture_output=True, text=True, cwd="/")
    assert host.stdout.split() == ["0"] * len(tries), host
    sb = sandbox_factory([str(ws_dir)], server_cwd=str(ws_dir))
    r = run(sb, [SH, "-c", script], str(ws_dir), namespace=namespace)
    codes = r.out.split()
    assert codes[:-1] == ["1"] * (len(tries) - 1), (codes, r.err)
    assert codes[-1] == "0"  # an ordinary fork (clone without namespace flags) still works
