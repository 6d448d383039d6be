"""Live ground truth: real ls/stat/find/du/wc/tree on a hostile tree, checked against the kernel.

Every expected value comes from ``os.lstat``/``os.readlink``/``os.walk``/the file contents, never
from a parser.  Commands run like the executor runs them (no shell, LC_ALL=C.UTF-8, TZ=UTC).
"""

from __future__ import annotations

import datetime as dt
import grp
import os
import pwd
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from parism.parsers import registry
from tests.parsers.fs.hostile import build, run

pytestmark = pytest.mark.skipif(shutil.which("ls") is None, reason="needs coreutils")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("live") / "hostile"
    build(path)
    return path


def parsed(argv: list[str], cwd: Path) -> dict[str, Any]:
    out = registry.parse(argv[0], argv[1:], run(argv, cwd), "linux")
    assert out.parse_error is None, out.parse_error
    assert isinstance(out.parsed, dict)
    return out.parsed


def _kind(st: os.stat_result) -> str:
    if stat.S_ISDIR(st.st_mode):
        return "directory"
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    return "file" if stat.S_ISREG(st.st_mode) else "other"


def _check_long_row(row: dict[str, Any], path: Path) -> None:
    st = os.lstat(path)
    where = repr(row["name"])
    assert row["type"] == _kind(st), where
    assert row["mode"] == stat.filemode(st.st_mode), where
    assert row["mode_octal"] == f"{stat.S_IMODE(st.st_mode):04o}", where
    assert row["links"] == st.st_nlink, where
    assert row["owner"] == pwd.getpwuid(st.st_uid).pw_name, where
    assert row["group"] == grp.getgrgid(st.st_gid).gr_name, where
    assert row["size_bytes"] == st.st_size, where
    mtime = dt.datetime.fromtimestamp(st.st_mtime, dt.timezone.utc)
    if "T" in row["modified_at"]:  # recent: ls printed the time, the parser inferred the year
        assert row["modified_at"][:16] == mtime.strftime("%Y-%m-%dT%H:%M"), where
    else:
        assert row["modified_at"] == mtime.strftime("%Y-%m-%d"), where
    if stat.S_ISLNK(st.st_mode):
        assert row["target"] == os.readlink(path), where
    assert bool(row.get("setuid")) == bool(st.st_mode & stat.S_ISUID), where
    assert bool(row.get("sticky")) == bool(st.st_mode & stat.S_ISVTX), where


def test_ls_la_matches_lstat(root: Path) -> None:
    res = parsed(["ls", "-la"], root)
    names = [r["name"] for r in res["entries"]]
    assert sorted(names) == sorted(os.listdir(root) + [".", ".."])
    for row in res["entries"]:
        _check_long_row(row, root / row["name"])
    # the newline name was joined, and the join is reported
    assert any("names_with_newlines" in w for w in res["warnings"])


def test_ls_lab_decodes_every_name_exactly(root: Path) -> None:
    res = parsed(["ls", "-lab"], root)
    assert sorted(r["name"] for r in res["entries"]) == sorted(os.listdir(root) + [".", ".."])
    assert "warnings" not in res
    for row in res["entries"]:
        _check_long_row(row, root / row["name"])


def test_ls_recursive_sections_match_walk(root: Path) -> None:
    res = parsed(["ls", "-lRb", "."], root)
    got = sorted((r["directory"], r["name"]) for r in res["entries"])
    want = sorted((("." + d[len(str(root)):]) if d != str(root) else ".", n)
                  for d, dirs, files in os.walk(root) for n in dirs + files)
    assert got == want


def test_ls_name_list_never_invents_entries(root: Path) -> None:
    res = parsed(["ls", "-1"], root)
    # 'new\nline' prints as 'new' then 'line': out of name order, so the doubt is reported
    assert any("newlines" in w for w in res["warnings"])
    assert "-b" in res["hint_args"]
    exact = parsed(["ls", "-1b"], root)
    assert sorted(r["name"] for r in exact["entries"]) == sorted(os.listdir(root))


def test_stat_every_file(root: Path) -> None:
    names = sorted(os.listdir(root))
    res = parsed(["stat", "--", *names], root)
    assert [f["file"] for f in res["files"]] == names
    for rec in res["files"]:
        st = os.lstat(root / rec["file"])
        where = repr(rec["file"])
        assert rec["size_bytes"] == st.st_size, where
        assert rec["inode"] == st.st_ino, where
        assert rec["links"] == st.st_nlink, where
        assert rec["permissions"] == stat.filemode(st.st_mode), where
        assert rec["mode_octal"] == f"{stat.S_IMODE(st.st_mode):04o}", where
        assert (rec["uid"], rec["gid"]) == (st.st_uid, st.st_gid), where
        assert rec["blocks"] == st.st_blocks, where
        mtime = dt.datetime.fromtimestamp(st.st_mtime, dt.timezone.utc)
        assert rec["modified_at"].startswith(mtime.strftime("%Y-%m-%dT%H:%M:%S")), where
        if stat.S_ISLNK(st.st_mode):
            assert rec["target"] == os.readlink(root / rec["file"]), where


def _walk_paths(root: Path) -> list[str]:
    out = ["."]
    for d, dirs, files in os.walk(root):
        rel = "." + d[len(str(root)):]
        out += [f"{rel}/{n}" for n in dirs + files]
    return sorted(out)


def test_find_lines_and_print0(root: Path) -> None:
    lines = parsed(["find", "."], root)
    assert sorted(lines["paths"]) == _walk_paths(root)
    assert lines["hint_args"][-1] == "-print0"  # the newline name was joined and reported
    exact = parsed(["find", ".", "-print0"], root)
    assert sorted(exact["paths"]) == _walk_paths(root)
    assert "warnings" not in exact


def test_du_apparent_bytes(root: Path) -> None:
    res = parsed(["du", "-ab", "."], root)
    by_path = {e["path"]: e for e in res["entries"]}
    for rel in _walk_paths(root):
        st = os.lstat(root / rel)
        if stat.S_ISREG(st.st_mode):
            assert by_path[rel]["size_bytes"] == st.st_size, rel
    assert set(by_path) <= set(_walk_paths(root))


def test_du_blocks_are_kib(root: Path) -> None:
    res = parsed(["du", "-a", "."], root)
    assert res["block_size"] == 1024
    for e in res["entries"]:
        st = os.lstat(root / e["path"])
        if stat.S_ISREG(st.st_mode):
            assert e["size_bytes"] == -(-st.st_blocks * 512 // 1024) * 1024, e["path"]


def test_wc_default_three_counts(root: Path) -> None:
    files = sorted(n for n in os.listdir(root) if stat.S_ISREG(os.lstat(root / n).st_mode) and "\n" not in n)
    res = parsed(["wc", "--", *files], root)
    assert [e["file"] for e in res["entries"]] == files
    for e in res["entries"]:
        data = (root / e["file"]).read_bytes()
        assert (e["lines"], e["words"], e["bytes"]) == (data.count(b"\n"), len(data.split()), len(data)), e["file"]
    assert res["total"]["bytes"] == sum((root / f).stat().st_size for f in files)


def _tree_paths(node: dict[str, Any], prefix: str) -> list[tuple[str, str | None]]:
    out = []
    for child in node.get("children", []):
        path = f"{prefix}/{child['name']}"
        out.append((path, child.get("type")))
        out += _tree_paths(child, path)
    return out


def _tree_truth(root: Path) -> dict[str, str]:
    return {p: _kind(os.lstat(root / p)) for p in _walk_paths(root) if p != "."}


@pytest.mark.skipif(shutil.which("tree") is None, reason="tree is not installed")
def test_tree_quoted_classified_is_exact(root: Path) -> None:
    res = parsed(["tree", "-aFQ", "."], root)
    truth = _tree_truth(root)
    assert sorted(_tree_paths(res["root"], ".")) == sorted(truth.items())
    dirs = sum(1 for k in truth.values() if k == "directory") + 1
    assert (res["directories"], res["files"]) == (dirs, len(truth) + 1 - dirs)
    assert "warnings" not in res


@pytest.mark.skipif(shutil.which("tree") is None, reason="tree is not installed")
def test_tree_plain_never_guesses_directories(root: Path) -> None:
    res = parsed(["tree", "-a", "."], root)
    truth = _tree_truth(root)
    got = dict(_tree_paths(res["root"], "."))
    # documented limit: without -Q a name containing ' -> ' reads as a link ('a -> b' is a file;
    # 'arrow -> link' is a link to 'a -> b', flagged ambiguous_link)
    arrows = {p for p in truth if " -> " in p}
    assert {p for p in got if p not in truth} == {"./a", "./arrow"}
    for path, kind in got.items():
        if path in truth:
            assert kind in (None, truth[path]), path  # empty directories stay untyped, never 'file'
    assert set(truth) - set(got) == arrows
    assert any("directories" in w for w in res["warnings"])
