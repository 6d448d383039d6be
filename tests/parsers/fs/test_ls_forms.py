"""ls forms added for other implementations: ``-lZ`` (GNU, uutils), BusyBox ``-le``, and the
``--time-style=+FORMAT`` hint — each checked against ``os.lstat`` of real files."""

from __future__ import annotations

import datetime as dt
import os
import stat
import time
from pathlib import Path

import pytest

from tests.parsers.fs._util import err, ok
from tests.parsers.fs.hostile import build, run
from tests.parsers.fs.lstat_check import check_ls_row

UUTILS_LS = "/usr/lib/cargo/bin/coreutils/ls"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("forms") / "hostile"
    build(path)
    return path


@pytest.mark.parametrize("argv", [["ls", "-lZ"], ["ls", "-laZ", "--time-style=long-iso"], [UUTILS_LS, "-lZ"]])
def test_lz_reads_the_context_column(root: Path, argv: list[str]) -> None:
    if not os.path.exists(argv[0]) and argv[0].startswith("/"):
        pytest.skip("rust-coreutils is not installed")
    res = ok(["ls", *argv[1:]], run(argv, root), now_year=None)
    want = sorted(os.listdir(root) + ([".", ".."] if "-laZ" in argv else []))
    assert sorted(e["name"] for e in res["entries"]) == want
    for row in res["entries"]:
        assert row["context"] == "?"  # no SELinux here: ls prints '?'
        check_ls_row(row, root / row["name"], dates=False)


def test_short_z_is_refused_with_a_hint() -> None:
    e = err(["ls", "-Z"], "? a\n")
    assert e.reason == "unsupported_format" and e.hint is not None and e.hint.args == []


@pytest.mark.parametrize("args", [["-l", "--time-style=+%s"], ["-l", "--time-style", "+%Y %m"]])
def test_custom_time_style_hints_full_iso(root: Path, args: list[str]) -> None:
    e = err(["ls", *args], run(["ls", *args], root))
    assert e.reason == "unsupported_format"
    assert e.hint is not None and e.hint.args == ["--time-style=full-iso", "-l"]
    res = ok(["ls", *e.hint.args], run(["ls", *e.hint.args], root), now_year=None)  # the hint works
    for row in res["entries"]:
        mtime = dt.datetime.fromtimestamp(os.lstat(root / row["name"]).st_mtime, dt.timezone.utc)
        assert row["modified_at"].startswith(mtime.strftime("%Y-%m-%dT%H:%M:%S")), row["name"]


def _busybox_le_line(path: Path) -> str:
    """One row as BusyBox ``ls -le`` prints it (coreutils/ls.c, display_single, before -e was
    replaced by --full-time in Debian's 1.35 build): ``%-10s %4lu %-8.8s %-8.8s %9u %.24s name``,
    the date being ``ctime()`` (TZ=UTC)."""
    st = os.lstat(path)
    when = time.asctime(time.gmtime(st.st_mtime))
    return f"{stat.filemode(st.st_mode):<10} {st.st_nlink:4} {'root':<8.8} {'root':<8.8} {st.st_size:9} {when:.24} {path.name}"


def test_busybox_le_full_date(root: Path) -> None:
    names = ["plain.txt", "with space.txt", "old", "future"]
    text = "\n".join(_busybox_le_line(root / n) for n in names) + "\n"
    res = ok(["ls", "-le"], text)
    assert [e["name"] for e in res["entries"]] == names
    for row in res["entries"]:
        st = os.lstat(root / row["name"])
        assert row["size_bytes"] == st.st_size
        mtime = dt.datetime.fromtimestamp(st.st_mtime, dt.timezone.utc)
        assert row["modified_at"] == mtime.strftime("%Y-%m-%dT%H:%M:%S"), row


def test_e_without_long_is_refused() -> None:
    assert err(["ls", "-e"], "a\n").reason == "unsupported_format"
