"""lsblk: real output of this machine's util-linux 2.38.1 (tests/fixtures/linux/lsblk/, captured
with LC_ALL=C), its values checked against the kernel's own interfaces — ``/sys/block/<dev>/``
(``dev``, ``size`` in 512-byte sectors, ``removable``, ``ro``) and ``/proc/self/mountinfo`` —
never against Parism. The live test runs lsblk now and checks every row the same way."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.parsers.fs._util import err, ok

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "linux" / "lsblk"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_all_devices_in_bytes_are_the_recorded_sys_block_values() -> None:
    """``lsblk -a -b`` as recorded; the expected values were read by hand from /sys/block and
    /proc/self/mountinfo on the machine it was captured on (vda: dev 254:0, size 536870912
    sectors; loop0-7: 7:N, size 0; zram0: 253:0, size 0; nothing removable or read-only)."""
    rows = ok(["lsblk", "-a", "-b"], fixture("ab.out"))["devices"]
    assert [(r["name"], r["maj"], r["min"], r["size_bytes"]) for r in rows] == [
        *((f"loop{i}", 7, i, 0) for i in range(8)), ("zram0", 253, 0, 0), ("vda", 254, 0, 536870912 * 512)]
    assert {(r["removable"], r["read_only"]) for r in rows} == {(False, False)}
    assert {r["type"] for r in rows[:8]} == {"loop"} and rows[8]["type"] == rows[9]["type"] == "disk"
    # a device mounted three times: the continuation lines are its mount points, not rows
    assert rows[9]["mountpoints"] == ["/run/netns", "/var/lib/docker", "/"]
    assert all(r["mountpoints"] == [] and "parent" not in r for r in rows[:9])


def test_default_sizes_are_the_printed_ones() -> None:
    rows = ok(["lsblk"], fixture("default.out"))["devices"]
    assert [(r["name"], r["size"]) for r in rows] == [("zram0", "0B"), ("vda", "256G")]
    assert "size_bytes" not in rows[1]


def test_no_headings_with_nodeps() -> None:
    rows = ok(["lsblk", "-d", "-n"], fixture("dn.out"))["devices"]
    assert [(r["name"], r["maj"], r["min"]) for r in rows] == [("zram0", 253, 0), ("vda", 254, 0)]


def test_other_columns_are_refused_with_a_hint() -> None:
    e = err(["lsblk", "-o", "NAME,SIZE"], "NAME SIZE\nvda 256G\n")
    assert e.reason == "unsupported_format" and "-o" in e.message
    assert e.hint is not None and e.hint.args == []


def test_a_missing_header_is_refused_and_a_broken_row_is_unrecognized() -> None:
    assert err(["lsblk"], "vda 254:0 0 256G 0 disk\n").reason == "unsupported_format"
    assert err(["lsblk"], "NAME MAJ:MIN RM SIZE RO TYPE MOUNTPOINTS\nvda 254:0 zero\n").reason \
        == "unrecognized_output"


def _mountinfo() -> dict[str, set[str]]:
    """maj:min → mount points, from the kernel's table (octal escapes decoded)."""
    out: dict[str, set[str]] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        f = line.split()
        out.setdefault(f[2], set()).add(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), f[4]))
    return out


@pytest.mark.skipif(shutil.which("lsblk") is None or not os.path.isdir("/sys/block"), reason="needs lsblk and /sys")
def test_live_lsblk_agrees_with_sys_block_and_mountinfo() -> None:
    text = subprocess.run(["lsblk", "-a", "-b"], capture_output=True, text=True, check=True,
                          env={**os.environ, "LC_ALL": "C"}).stdout
    rows = ok(["lsblk", "-a", "-b"], text)["devices"]
    mounts = _mountinfo()
    names = {r["name"] for r in rows}
    assert {r["name"] for r in rows if "parent" not in r} <= set(os.listdir("/sys/block")) <= names
    for r in rows:
        sys = Path("/sys/class/block") / r["name"]
        assert (sys / "dev").read_text().strip() == f"{r['maj']}:{r['min']}", r
        assert int((sys / "size").read_text()) * 512 == r["size_bytes"], r
        assert (sys / "ro").read_text().strip() == str(int(r["read_only"])), r
        if r["type"] == "part":  # a partition lives under its disk in sysfs
            assert (Path("/sys/block") / r["parent"] / r["name"]).is_dir(), r
        if "parent" not in r:
            assert (sys / "removable").read_text().strip() == str(int(r["removable"])), r
        assert set(r["mountpoints"]) == mounts.get(f"{r['maj']}:{r['min']}", set()), r
