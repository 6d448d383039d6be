"""Live ground truth for other implementations: Debian's busybox, toybox and rust-coreutils
(uutils) on the hostile tree, checked against ``os.lstat``/``os.listdir``/``/proc``/``os.statvfs``.

``scripts/bootstrap --test`` installs the three packages; each test is skipped only where its
binary is missing (a developer machine without them), never on CI.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parism.parsers import registry
from tests.parsers.fs.hostile import CHILD_ENV, build
from tests.parsers.fs.lstat_check import check_ls_row

UUTILS = "/usr/lib/cargo/bin/coreutils"  # rust-coreutils: one program per command, GNU names
BUSYBOX = shutil.which("busybox")
TOYBOX = shutil.which("toybox")
needs_uutils = pytest.mark.skipif(not os.path.isdir(UUTILS), reason="rust-coreutils is not installed")
needs_busybox = pytest.mark.skipif(BUSYBOX is None, reason="busybox is not installed")
needs_toybox = pytest.mark.skipif(TOYBOX is None, reason="toybox is not installed")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("impl") / "hostile"
    build(path)
    for name in ("it's", 'say "hi"', "$HOME", "semi;colon"):  # what shell quoting must undo
        (path / name).write_text(name + "\n")
    return path


def run(argv: list[str], cwd: Path) -> str:
    res = subprocess.run(argv, cwd=cwd, env=CHILD_ENV, capture_output=True, timeout=60, check=False)
    return res.stdout.decode("utf-8", "replace")


def parsed(cmd: str, args: list[str], text: str) -> dict[str, Any]:
    out = registry.parse(cmd, args, text, "linux", strict_schemas=True)
    assert out.parse_error is None, out.parse_error
    assert isinstance(out.parsed, dict)
    return out.parsed


# -- uutils: shell quoting in ls and wc ------------------------------------------------------


@needs_uutils
@pytest.mark.parametrize("args", [["-l"], ["-la"], ["-lR", "."]])
def test_uutils_ls_long_names_are_unquoted(root: Path, args: list[str]) -> None:
    text = run([f"{UUTILS}/ls", *args], root)
    assert "'with space.txt'" in text  # uutils quoted it, even into a pipe
    res = parsed("ls", args, text)
    top = [r for r in res["entries"] if r.get("directory") in (None, ".")]
    want = sorted(os.listdir(root) + ([".", ".."] if "-la" in args else []))
    assert sorted(r["name"] for r in top) == want
    for row in top:
        check_ls_row(row, root / row["name"], dates=False)
    assert any(w.startswith("shell_quoted_names") for w in res["warnings"])
    assert not any("newlines" in w for w in res["warnings"])


@needs_uutils
def test_uutils_ls_name_list_is_unquoted(root: Path) -> None:
    res = parsed("ls", [], run([f"{UUTILS}/ls"], root))
    assert sorted(r["name"] for r in res["entries"]) == sorted(os.listdir(root))
    assert "unresolved" not in res


@needs_uutils
def test_uutils_wc_names_are_unquoted(root: Path) -> None:
    files = sorted(n for n in os.listdir(root) if stat.S_ISREG(os.lstat(root / n).st_mode))
    res = parsed("wc", ["--", *files], run([f"{UUTILS}/wc", "--", *files], root))
    assert [e["file"] for e in res["entries"]] == files
    for e in res["entries"]:
        data = (root / e["file"]).read_bytes()
        assert (e["lines"], e["words"], e["bytes"]) == (data.count(b"\n"), len(data.split()), len(data)), e["file"]


def test_gnu_wc_newline_name_is_decoded(root: Path) -> None:
    files = ["new\nline", "plain.txt", "with space.txt"]
    text = run(["wc", "--", *files], root)
    res = parsed("wc", ["--", *files], text)
    assert [e["file"] for e in res["entries"]] == files
    assert "warnings" not in res  # GNU quoted only the newline name; the others are literal


# -- busybox -----------------------------------------------------------------------------------


@pytest.fixture()
def renamed_sleep() -> Iterator[int]:
    """A process whose argv[0] differs from its executable's name (busybox marks it {comm})."""
    proc = subprocess.Popen(["my server", "60"], executable=shutil.which("sleep"))
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not Path(f"/proc/{proc.pid}/cmdline").read_bytes():
            time.sleep(0.01)
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


@needs_busybox
@pytest.mark.parametrize("args", [[], ["-o", "pid,user,args"], ["-o", "pid,comm,args"]])
def test_busybox_ps_comm_marker_is_not_command(renamed_sleep: int, args: list[str]) -> None:
    text = subprocess.run([BUSYBOX, "ps", *args], capture_output=True, text=True, check=True).stdout
    assert "{sleep} my server 60" in text
    rows = {r["pid"]: r for r in parsed("ps", args, text)["processes"]}
    row = rows[renamed_sleep]
    cmdline = Path(f"/proc/{renamed_sleep}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    assert row["command"] == b" ".join(cmdline).decode()
    assert row["comm"] == Path(f"/proc/{renamed_sleep}/comm").read_text().strip()
    for pid, r in rows.items():  # nobody else's command starts with a marker
        assert not str(r["command"]).startswith("{"), (pid, r)


@needs_busybox
def test_busybox_ls_la_matches_lstat(root: Path) -> None:
    res = parsed("ls", ["-la"], run([BUSYBOX, "ls", "-la"], root))
    for row in res["entries"]:
        if "\n" not in row["name"] and "?" not in row["name"]:  # busybox prints control chars as '?'
            check_ls_row(row, root / row["name"], dates=False)


@needs_busybox
@needs_toybox
@pytest.mark.parametrize("impl", ["busybox", "toybox"])
def test_df_root_matches_statvfs(impl: str) -> None:
    text = subprocess.run([shutil.which(impl) or impl, "df", "/"], capture_output=True, text=True, check=True).stdout
    (row,) = parsed("df", ["/"], text)["filesystems"]
    vfs = os.statvfs(row["mounted_on"])  # toybox names the device's last mount point, not "/"
    assert os.stat(row["mounted_on"]).st_dev == os.stat("/").st_dev
    assert row["size_bytes"] == vfs.f_blocks * vfs.f_frsize
    # busybox prints f_bavail; toybox prints f_bfree to root (who may use the reserved blocks)
    free_blocks = vfs.f_bfree if impl == "toybox" and os.geteuid() == 0 else vfs.f_bavail
    # other processes write to this disk between df and statvfs: allow 256 MiB of drift
    assert abs(row["available_bytes"] - free_blocks * vfs.f_frsize) <= 256 << 20


# -- toybox ------------------------------------------------------------------------------------


def _meminfo_bytes(key: str) -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


@needs_toybox
@pytest.mark.parametrize("args,unit_bytes", [([], 1), (["-k"], 1024), (["-m"], 1024**2)])
def test_toybox_free_units(args: list[str], unit_bytes: int) -> None:
    res = parsed("free", args, subprocess.run([TOYBOX, "free", *args], capture_output=True, text=True,
                                              check=True).stdout)
    assert res["unit_bytes"] == unit_bytes and res["implementation"] == "toybox"
    assert res["mem"]["total"] == _meminfo_bytes("MemTotal") // unit_bytes
    assert res["swap"]["total"] == _meminfo_bytes("SwapTotal") // unit_bytes


@needs_toybox
def test_toybox_stat_matches_lstat(root: Path) -> None:
    names = sorted(n for n in os.listdir(root) if "\n" not in n)
    res = parsed("stat", ["--", *names], run([TOYBOX, "stat", "--", *names], root))
    assert [f["file"] for f in res["files"]] == names
    for rec in res["files"]:
        st = os.lstat(root / rec["file"])
        where = repr(rec["file"])
        assert (rec["size_bytes"], rec["blocks"], rec["inode"], rec["links"]) == \
            (st.st_size, st.st_blocks, st.st_ino, st.st_nlink), where
        assert rec["permissions"] == stat.filemode(st.st_mode), where
        assert (rec["uid"], rec["gid"]) == (st.st_uid, st.st_gid), where
        assert rec["block_size"] == 512 and "io_block" not in rec, where
        if stat.S_ISLNK(st.st_mode):
            assert rec["target"] == os.readlink(root / rec["file"]), where


@needs_toybox
def test_toybox_ls_l_matches_lstat(root: Path) -> None:
    res = parsed("ls", ["-l"], run([TOYBOX, "ls", "-l"], root))
    names = {r["name"] for r in res["entries"]}
    assert names == set(os.listdir(root))
    for row in res["entries"]:
        check_ls_row(row, root / row["name"], dates=False)
