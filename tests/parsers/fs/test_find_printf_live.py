"""``find -printf FORMAT`` read by the format (issue #25, class 5), against the kernel.

A tree of hostile names (newline, CR, tab, leading spaces, ``->``, ``*``, ``total 12``, a name
that imitates a record ``x 5``) is listed by the real ``find``; every row is checked against
``os.lstat``/``os.readlink`` of its path and the path set against ``os.walk`` — never against
Parism.  (Names that are not UTF-8 travel as ``<field>_b64`` after the parse of a run:
``docs/envelope.md``; here the registry reads decoded text.)
"""

from __future__ import annotations

import os
import stat
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.parsers.text.realrun import ENV, parse, parsed

NAMES = ["plain", "a b", "nl\nx 5", "cr\rname", "tab\there", "  lead", "p -> q", "*star", "total 12", "x.1"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("findfmt")
    (root / "d\nir").mkdir()
    for name in NAMES:
        (root / name).write_bytes(b"x" * len(name))
        (root / "d\nir" / name).write_text("y")
    os.symlink("a b", root / "link -> a b")
    os.symlink("nl\nx 5", root / "d\nir" / "nl-link")
    return root


def find(root: Path, *args: str) -> str:
    out = subprocess.run(["find", ".", *args], cwd=root, env=ENV, capture_output=True, check=True).stdout
    return out.decode()


def walked(root: Path) -> set[str]:
    got = {"."}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for n in dirnames + filenames:
            got.add("./" + (n if rel == "." else os.path.join(rel, n)))
    return got


def iso_ns(ns: int) -> str:
    sec, frac = divmod(ns, 10**9)
    stamp = datetime.fromtimestamp(sec, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    digits = f"{frac:09d}".rstrip("0")
    return stamp + (f".{digits}" if digits else "") + "+00:00"


TYPES = {stat.S_IFREG: "f", stat.S_IFDIR: "d", stat.S_IFLNK: "l"}
FMT = "%p\\0%s %m %M %i %n %U %G %T@ %A@ %y %d %l\\0"


def test_nul_records_match_lstat(tree: Path) -> None:
    args = ["-printf", FMT]
    rows = parsed("find", [".", *args], find(tree, *args))["entries"]
    assert {r["path"] for r in rows} == walked(tree)
    for r in rows:
        st = os.lstat(tree / r["path"])
        assert r["size_bytes"] == st.st_size and r["inode"] == st.st_ino and r["links"] == st.st_nlink, r
        assert r["uid"] == st.st_uid and r["gid"] == st.st_gid, r
        assert r["mode_octal"] == format(stat.S_IMODE(st.st_mode), "04o") and r["permissions"] == stat.filemode(st.st_mode)
        assert r["type"] == TYPES[stat.S_IFMT(st.st_mode)], r
        assert r["modified_at"] == iso_ns(st.st_mtime_ns), r
        assert r["depth"] == r["path"].count("/"), r
        if stat.S_ISLNK(st.st_mode):
            assert r["target"] == os.readlink(tree / r["path"]), r
        else:
            assert "target" not in r, r


def test_one_name_field_between_typed_ones(tree: Path) -> None:
    """``%s %p %i``: the name (with its newline and ``x 5``) is pinned by the typed fields."""
    args = ["-printf", "%s %p %i\\0"]
    rows = parsed("find", [".", *args], find(tree, *args))["entries"]
    assert {r["path"] for r in rows} == walked(tree)
    for r in rows:
        st = os.lstat(tree / r["path"])
        assert (r["size_bytes"], r["inode"]) == (st.st_size, st.st_ino), r


def test_newline_records_without_names_are_read(tree: Path) -> None:
    args = ["-printf", "%i %s\\n"]
    rows = parsed("find", [".", *args], find(tree, *args))["entries"]
    want = sorted((os.lstat(tree / p).st_ino, os.lstat(tree / p).st_size) for p in walked(tree))
    assert sorted((r["inode"], r["size_bytes"]) for r in rows) == want


def test_newline_records_with_a_name_are_refused_not_invented(tree: Path) -> None:
    """``'nl\\nx 5'`` under ``%p %s\\n`` prints two lines that each fit the format: refused,
    with the same format ending in ``\\0`` as the hint (which then reads it exactly)."""
    args = ["-printf", "%p %s\\n"]
    text = find(tree, *args)
    assert "./nl\nx 5 6\n" in text  # the trap: the text holds the look-alike record
    out = parse("find", [".", *args], text)
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint is not None and out.parse_error.hint.args == [".", "-printf", "%p %s\\0"]
    hinted = out.parse_error.hint.args
    rows = parsed("find", hinted, find(tree, *hinted[1:]))["entries"]
    assert {r["path"] for r in rows} == walked(tree)


def test_two_readings_are_refused(tree: Path) -> None:
    """``%p.%T@`` on ``x.1``: the name's ``.1`` could belong to either field."""
    args = ["-name", "x.1", "-printf", "%p.%T@\\0"]
    out = parse("find", [".", *args], find(tree, *args))
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output", out


@pytest.mark.parametrize("fmt", ["%-10p\\0", "%t\\0", "%p", "%p%s\\0", "%p %f\\0", "%Tk\\0"])
def test_formats_out_of_range_are_refused(fmt: str) -> None:
    out = parse("find", [".", "-printf", fmt], "")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format", (fmt, out)


def test_printf_beside_another_action_is_refused() -> None:
    out = parse("find", [".", "-printf", "%p\\0", "-print"], "x\n")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"


def _ls_rows(root: Path) -> list[dict]:
    from parism.parsers import registry
    raw = subprocess.run(["find", ".", "-ls"], cwd=root, env=ENV, capture_output=True, check=True).stdout
    out = registry.parse("find", [".", "-ls"], raw.decode("utf-8", "surrogateescape"), "linux")
    assert out.parse_error is None, out.parse_error
    return out.parsed["entries"]


def test_ls_rows_match_lstat(tree: Path) -> None:
    """``-ls``: names exact (find escapes spaces, newlines and bytes that are not UTF-8; a
    name holding `` -> `` is not a symlink), every column against ``os.lstat``; times are
    printed in the sandbox's zone (UTC here) to the minute."""
    (tree / os.fsdecode(b"bad\xff")).write_text("b")
    (tree / os.fsdecode(b"bad\xfe")).write_text("b")
    try:
        rows = _ls_rows(tree)
        assert {os.fsencode(r["path"]) for r in rows} == {os.fsencode(p) for p in walked(tree)}
        for r in rows:
            st = os.lstat(tree / r["path"])
            assert r["inode"] == st.st_ino and r["links"] == st.st_nlink and r["size_bytes"] == st.st_size, r
            assert r["permissions"] == stat.filemode(st.st_mode), r
            assert r["blocks_1k"] == (st.st_blocks + 1) // 2, r
            minute = datetime.fromtimestamp(st.st_mtime, timezone.utc).strftime("%Y-%m-%dT%H:%M:00")
            assert r["modified_at"] == minute, r
            if stat.S_ISLNK(st.st_mode):
                assert r["target"] == os.readlink(tree / r["path"]), r
            else:
                assert "target" not in r, r
    finally:
        for name in (b"bad\xff", b"bad\xfe"):
            os.unlink(os.path.join(os.fsencode(tree), name))


def test_ls_device_row() -> None:
    raw = subprocess.run(["find", "/dev/null", "-maxdepth", "0", "-ls"], env=ENV, capture_output=True,
                         check=True).stdout.decode()
    row = parsed("find", ["/dev/null", "-maxdepth", "0", "-ls"], raw)["entries"][0]
    st = os.lstat("/dev/null")
    assert row["device_type"] == f"{os.major(st.st_rdev)},{os.minor(st.st_rdev)}" and "size_bytes" not in row
