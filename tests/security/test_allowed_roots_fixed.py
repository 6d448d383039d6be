"""Allowed roots are fixed at start (issue #23, class 5).

f4aedb0's ``paths.Roots`` resolved every allowed root through its symlinks at each check, and
the sandbox bound what it resolved to: an allowed root (here a nested ``proj/data``) replaced
by a symlink after the engine started exposed another project's 0700 files, and, pointed at
``/root``, made ``root_masked`` run the command as uid 0 there. Now each root is resolved once
when the configuration loads and held by descriptor with its ``(st_dev, st_ino)``; a root that
is not that directory any more (a symlink, deleted and recreated, moved) is refused, never
resolved again nor bound, and ``root_masked`` needs a root that was root's private tree at start.

Real engine, real bubblewrap. The armed trap of each case, in the same test: an engine started
*after* the change — which resolves the names then, as the old ``Roots`` did at every check —
does run the same call and returns the other directory's secret.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

import parism

ROOT = os.geteuid() == 0
OWNER = 4321 if ROOT else os.geteuid()  # a root server runs the command as the workspace's owner
SECRET = "OTHER-PROJECT-SECRET-5b1c"


@pytest.fixture
def base() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="parism-roots-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _dir(path: Path, mode: int = 0o755, owner: int = OWNER) -> Path:
    path.mkdir()
    path.chmod(mode)
    if ROOT:
        os.chown(path, owner, owner)
    return path


def _file(path: Path, text: str, mode: int = 0o644, owner: int = OWNER) -> Path:
    path.write_text(text + "\n")
    path.chmod(mode)
    if ROOT:
        os.chown(path, owner, owner)
    return path


def _engine(base: Path, allowed: list[Path]) -> parism.Engine:
    cfg = base / f"parism-{len(list(base.glob('parism-*.toml')))}.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"profile": "readonly", "allowed_paths": [str(p) for p in allowed]},
                                  "sandbox": {"mode": "required"}}))
    engine = parism.create_engine(str(cfg))
    assert engine.errors == []
    return engine


def _run(engine: parism.Engine, args: list[str], cwd: Path, cmd: str = "cat") -> tuple[bool, str, str]:
    env = engine.run(cmd, args, cwd=str(cwd))
    failure = env.failure or env.guard_error
    text = (env.stdout.raw or "") + (env.stderr.raw or "") + (failure.message if failure else "")
    return env.ok, (failure.reason if failure else ""), text


def _project(base: Path) -> tuple[Path, Path, Path]:
    proj = _dir(base / "proj")
    data = _dir(proj / "data")
    _file(data / "ok.txt", "DATA-OK")
    other = _dir(base / "other", 0o700)  # another project of the same owner, private
    _file(other / "secret.txt", SECRET, 0o600)
    return proj, data, other


def _swap_for_symlink(path: Path, target: Path) -> None:
    path.rename(path.with_name(path.name + ".old"))
    path.symlink_to(target)


def test_a_root_replaced_by_a_symlink_to_another_private_project(base: Path) -> None:
    proj, data, other = _project(base)
    engine = _engine(base, [proj, data])
    assert _run(engine, ["data/ok.txt"], proj)[0] and _run(engine, ["ok.txt"], data)[0]  # both serve before

    _swap_for_symlink(data, other)
    for args, cwd in ((["data/secret.txt"], proj), (["secret.txt"], data), ([str(other / "secret.txt")], proj)):
        ok, reason, text = _run(engine, args, cwd)
        assert not ok and reason == "path_not_allowed" and SECRET not in text, (args, cwd, text)
    assert "replaced by a symbolic link" in _run(engine, ["secret.txt"], data)[2]
    assert _run(engine, ["data.old/ok.txt"], proj)[0]  # the unchanged root still serves

    # the armed trap: resolving the names now (an engine started after the swap) binds the new target
    later = _engine(base, [proj, data])
    ok, _, text = _run(later, ["data/secret.txt"], proj)
    assert ok and SECRET in text, text


@pytest.mark.skipif(not ROOT, reason="root_masked (host uid 0) exists only for a root server")
def test_a_root_pointed_at_root_s_home_never_runs_as_uid_0(base: Path) -> None:
    proj = _dir(base / "proj", owner=0)
    data = _dir(proj / "data", owner=0)
    _file(data / "ok.txt", "DATA-OK", owner=0)
    fd, name = tempfile.mkstemp(prefix="parism-roots-", suffix=".txt", dir="/root")
    marker = Path(name)
    try:
        os.write(fd, (SECRET + "\n").encode())
        os.close(fd)
        marker.chmod(0o600)
        engine = _engine(base, [proj, data])
        assert _run(engine, ["ok.txt"], data)[0]

        _swap_for_symlink(data, Path("/root"))
        for args, cwd in (([marker.name], data), ([f"data/{marker.name}"], proj)):
            ok, reason, text = _run(engine, args, cwd)
            assert not ok and reason == "path_not_allowed" and SECRET not in text, (args, cwd, text)

        later = _engine(base, [proj, data])  # the armed trap: uid 0 in /root, reading root's file
        ok, _, text = _run(later, [marker.name], data)
        assert ok and SECRET in text, text
    finally:
        marker.unlink(missing_ok=True)


@pytest.mark.parametrize("change", ["deleted_and_recreated", "moved_and_replaced"])
def test_a_root_deleted_or_moved_and_recreated_is_refused(base: Path, change: str) -> None:
    proj = _dir(base / "proj")
    shared = _dir(base / "shared")
    _file(shared / "f.txt", "FIRST")
    engine = _engine(base, [proj, shared])
    assert _run(engine, ["f.txt"], shared)[0]

    if change == "deleted_and_recreated":
        shutil.rmtree(shared)
    else:
        shared.rename(base / "shared.moved")
    _dir(shared)
    _file(shared / "f.txt", SECRET)
    ok, reason, text = _run(engine, ["f.txt"], shared)
    assert not ok and reason == "path_not_allowed" and SECRET not in text, text
    assert "restart the server" in text
    _file(proj / "p.txt", "PROJ")
    assert _run(engine, ["p.txt"], proj)[0]  # the other root is untouched

    later = _engine(base, [proj, shared])  # the armed trap: resolved now, the new directory serves
    ok, _, text = _run(later, ["f.txt"], shared)
    assert ok and SECRET in text, text


@pytest.mark.skipif(not ROOT, reason="root_masked (host uid 0) exists only for a root server")
def test_root_masked_needs_a_tree_that_was_root_s_private_one_at_start(base: Path) -> None:
    tree = _dir(base / "tree", 0o755, owner=0)  # root's, but open to nobody when the server starts
    _file(tree / "secret", SECRET, 0o600, owner=0)
    engine = _engine(base, [tree])
    ok, _, text = _run(engine, ["secret"], tree)
    assert not ok and SECRET not in text  # nobody cannot read it: the unprivileged_uid rule

    tree.chmod(0o700)  # now it looks like a root-private tree the operator named
    ok, reason, text = _run(engine, ["secret"], tree)
    assert not ok and reason == "sandbox_unsupported" and SECRET not in text, text

    later = _engine(base, [tree])  # the armed trap: judged now, root_masked reads it as uid 0
    ok, _, text = _run(later, ["secret"], tree)
    assert ok and SECRET in text, text


def test_the_sandbox_never_binds_a_root_that_is_another_inode_now(base: Path) -> None:
    """The second wall, with the guard bypassed (sh): a root recreated after start is not in
    the sandbox's view, and one recreated between a plan and its sandbox's start is not bound
    (``Plan.ro_ids``); the same plan without the start identities does bind the new one."""
    import dataclasses

    from parism.run.sandbox import Sandbox
    from parism.run.sandbox.launcher import close_all, pin_sources
    from tests.security.sandbox.helpers import SH, decision, make_spec, run, settings

    proj = _dir(base / "proj")
    shared = _dir(base / "shared")
    _file(shared / "f.txt", "FIRST")
    sb = Sandbox(settings(), [str(proj), str(shared)], str(proj), pool_size=0)
    assert run(sb, [SH, "-c", f"cat {shared}/f.txt"], str(proj)).out == "FIRST\n"

    plan = sb.plan(decision(), make_spec([SH], str(proj)))
    assert str(shared) in plan.ro_paths
    shutil.rmtree(shared)
    _dir(shared)
    _file(shared / "f.txt", SECRET)
    fds = pin_sources(plan)
    try:
        assert fds[str(shared)] == -1
    finally:
        close_all(fds)
    fds = pin_sources(dataclasses.replace(plan, ro_ids=()))  # the armed trap: bound by name, the new inode
    try:
        assert fds[str(shared)] >= 0 and os.fstat(fds[str(shared)]).st_ino == os.stat(shared).st_ino
    finally:
        close_all(fds)
    r = run(sb, [SH, "-c", f"cat {shared}/f.txt"], str(proj))
    assert SECRET not in r.out and r.cap.exit_code != 0, (r.out, r.err)
