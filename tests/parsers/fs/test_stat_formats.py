"""``stat -c FMT``, ``--printf FMT`` and ``-t`` read by the caller's format, live, on a tree of
hostile names; every expected value comes from ``os.lstat``/``os.stat`` of the same files."""

from __future__ import annotations

import datetime as dt
import os
import stat as st
import subprocess
from pathlib import Path

import pytest

from tests.parsers.fs._util import err, ok

NAMES = [b"plain", b"a b", b"x 5 y", b"  lead", b"p -> q", b"star*", b"total 12", b"nl\nname 3 4",
         b"tab\there", b"d"]
ENV = {"LC_ALL": "C", "TZ": "UTC", "PATH": "/usr/bin:/bin"}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("statfmt")
    for i, name in enumerate(NAMES):
        path = os.path.join(os.fsencode(root), name)
        if name == b"d":
            os.mkdir(path)
        else:
            with open(path, "wb") as f:
                f.write(b"x" * (i * 100))
    os.symlink(b"a b", os.path.join(os.fsencode(root), b"link"))
    return root


def stat_out(tree: Path, args: list[str]) -> str:
    proc = subprocess.run([b"stat", *map(os.fsencode, args)], cwd=tree, env=ENV, capture_output=True, check=True)
    return proc.stdout.decode("utf-8", "surrogateescape")


def operands() -> list[str]:
    return [os.fsdecode(n) for n in NAMES] + ["link"]


def check_row(tree: Path, row: dict, follow: bool = False) -> None:
    s = (os.stat if follow else os.lstat)(os.path.join(os.fsencode(tree), os.fsencode(row["file"])))
    expect = {"size_bytes": s.st_size, "blocks": s.st_blocks, "inode": s.st_ino, "links": s.st_nlink,
              "uid": s.st_uid, "gid": s.st_gid, "permissions": st.filemode(s.st_mode),
              "mode_octal": format(st.S_IMODE(s.st_mode), "04o"),
              "device": f"{os.major(s.st_dev)},{os.minor(s.st_dev)}",
              "modified_at": dt.datetime.fromtimestamp(int(s.st_mtime), dt.timezone.utc).isoformat()}
    if "modified_raw" in row:  # the human form keeps nanoseconds and the printed offset
        whole, _, frac = row["modified_at"].partition(".")
        assert whole == expect.pop("modified_at").removesuffix("+00:00") and frac.endswith("+00:00")
        assert int(frac[:9]) == s.st_mtime_ns % 10**9
    for key, value in expect.items():
        if key in row:
            assert row[key] == value, (row["file"], key)


def test_format_with_names_reads_every_hostile_name_exactly(tree: Path) -> None:
    args = ["-c", "%n|%s|%b|%i|%h|%u|%g|%A|%a|%F|%Y", *operands()]
    rows = ok(["stat", *args], stat_out(tree, args))["files"]
    assert [r["file"] for r in rows] == operands()  # none split, none invented, none merged
    for row in rows:
        check_row(tree, row)
    types = {r["file"]: r["file_type"] for r in rows}
    assert types["d"] == "directory" and types["link"] == "symbolic link" and types["plain"] == "regular empty file"


def test_terse_is_read_by_gnus_terse_format(tree: Path) -> None:
    args = ["-t", *operands()]
    rows = ok(["stat", *args], stat_out(tree, args))["files"]
    assert [r["file"] for r in rows] == operands()
    for row in rows:
        check_row(tree, row)
        assert {"size_bytes", "inode", "permissions", "device", "modified_at"} <= set(row)


def test_printf_with_escapes_and_dereference(tree: Path) -> None:
    args = ["-L", "--printf", r"%n\t%s\t%f\t%y\n", "link", "a b"]
    rows = ok(["stat", *args], stat_out(tree, args))["files"]
    assert [r["file"] for r in rows] == ["link", "a b"]
    for row in rows:
        check_row(tree, row, follow=True)
        assert row["modified_raw"].endswith("+0000") and row["modified_at"].endswith("+00:00")


def test_without_names_records_go_by_position_only_when_one_per_file(tree: Path) -> None:
    args = ["-c", "%s %i", "plain", "a b"]
    rows = ok(["stat", *args], stat_out(tree, args))["files"]
    assert [r["file"] for r in rows] == ["plain", "a b"]
    for row in rows:
        check_row(tree, row)
    # one of two files missing: stat printed one record, which file it is cannot be known
    text = subprocess.run(["stat", "-c", "%s %i", "plain", "missing"], cwd=tree, env=ENV,
                          capture_output=True, text=True).stdout
    assert text.count("\n") == 1  # the control: stat really printed one record
    assert err(["stat", "-c", "%s %i", "plain", "missing"], text).reason == "unrecognized_output"


def test_a_missing_file_is_skipped_when_names_are_printed(tree: Path) -> None:
    args = ["-c", "%n %s", "missing", "a b"]
    text = subprocess.run(["stat", *args], cwd=tree, env=ENV, capture_output=True, text=True).stdout
    rows = ok(["stat", *args], text)["files"]
    assert [r["file"] for r in rows] == ["a b"]
    check_row(tree, rows[0])


@pytest.mark.parametrize("fmt, why", [
    ("%s%b", "nothing between"), ("%-10s", "not read"), ("%.9Y", "not read"), ("%m", "not read"),
    ("%N", "not read"), ("%t", "together"), ("plain text", "no field")])
def test_formats_that_cannot_be_read_exactly_are_refused(fmt: str, why: str) -> None:
    pe = err(["stat", "-c", fmt, "a"], "whatever\n")
    assert pe.reason == "unsupported_format" and why in pe.message
    assert pe.hint.args == ["a"]  # back to the default format


def test_printf_ending_in_a_field_is_refused_for_several_files() -> None:
    assert err(["stat", "--printf", "%s", "a", "b"], "12").reason == "unsupported_format"
    assert ok(["stat", "--printf", "%s", "a"], "12")["files"] == [{"file": "a", "size_bytes": 12}]
