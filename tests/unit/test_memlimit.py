"""max_concurrency against the cgroup's memory limit (parism/run/memlimit.py), on cgroup trees built
here the way the kernel lays them out (v2: memory.max per directory, "max" for none; v1:
memory/…/memory.limit_in_bytes, LONG_MAX rounded to a page for none)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from parism.run.memlimit import PEAK_PER_BYTE, RESERVE, budget, read_limit

MIB = 1 << 20


def guard(concurrency: int = 4, out: int = 64 * MIB, err: int = 256 * 1024) -> SimpleNamespace:
    return SimpleNamespace(max_concurrency=concurrency, max_output_bytes=out, max_stderr_bytes=err)


def v2(tmp_path: Path, limits: dict[str, str], own: str) -> tuple[Path, Path]:
    root = tmp_path / "cg"
    (root / own.lstrip("/")).mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpu memory pids\n")
    for where, value in limits.items():
        (root / where.lstrip("/") / "memory.max").write_text(value + "\n")
    proc = tmp_path / "cgroup"
    proc.write_text(f"0::{own}\n")
    return root, proc


def test_v2_the_smallest_limit_up_the_tree_binds(tmp_path: Path) -> None:
    root, proc = v2(tmp_path, {"/a": str(1 << 30), "/a/b": "max", "/a/b/c": "max"}, "/a/b/c")
    limit, source = read_limit(root, proc)
    assert limit == 1 << 30 and source.endswith("/a/memory.max")


def test_no_limit_is_none(tmp_path: Path) -> None:
    root, proc = v2(tmp_path, {"/a": "max"}, "/a")
    assert read_limit(root, proc) == (None, "none")
    b = budget(guard(8), root, proc)
    assert b.effective == 8 and not b.lowered and b.report()["action"] == "none"


def test_v1_limit_and_its_unlimited_value(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    own = root / "memory" / "docker" / "x"
    own.mkdir(parents=True)
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (own / "memory.limit_in_bytes").write_text(f"{512 * MIB}\n")
    proc = tmp_path / "cgroup"
    proc.write_text("4:memory:/docker/x\n0::/\n")
    assert read_limit(root, proc) == (512 * MIB, f"cgroup v1 {own / 'memory.limit_in_bytes'}")
    (own / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert read_limit(root, proc) == (None, "none")


def test_concurrency_is_lowered_to_what_fits_and_said(tmp_path: Path) -> None:
    root, proc = v2(tmp_path, {"/": str(1 << 30)}, "/")
    (root / "memory.max").write_text(f"{1 << 30}\n")
    g = guard(8)
    b = budget(g, root, proc)
    per_call = PEAK_PER_BYTE * (64 * MIB + 256 * 1024)
    assert b.per_call == per_call
    assert b.effective == ((1 << 30) - RESERVE) // per_call == 4
    assert b.lowered and b.report() == {
        "limit_bytes": 1 << 30, "source": f"cgroup v2 {root / 'memory.max'}", "per_call_bytes": per_call,
        "configured_concurrency": 8, "effective_concurrency": 4, "action": "lowered"}
    assert budget(guard(2), root, proc).effective == 2  # what fits is not raised
    (root / "memory.max").write_text(f"{64 * MIB}\n")
    assert budget(g, root, proc).effective == 1  # never below one


def test_an_unreadable_cgroup_file_is_unknown_not_none(tmp_path: Path) -> None:
    limit, source = read_limit(tmp_path, tmp_path / "missing")
    assert limit is None and source.startswith("unknown: ")
    root, proc = v2(tmp_path, {"/a": "garbage"}, "/a")
    limit, source = read_limit(root, proc)
    assert limit is None and source.startswith("unknown: ")
