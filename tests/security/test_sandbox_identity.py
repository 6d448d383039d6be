"""Who the command runs as: never with root's file access to the host (identity.py rules)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from parism.sandbox import identity
from tests.security.sandbox.helpers import SH, run, sandbox_factory

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
