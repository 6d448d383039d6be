"""df: §22 bug 46 (mount points with spaces, -T, macOS 9-column output)."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.parsers.fs._util import err, ok

MAC_H = """Filesystem                                               Size   Used  Avail Capacity   iused               ifree %iused  Mounted on
/dev/disk1s1                                            466Gi  144Gi  315Gi    32%   1507697 9223372036853268110    0%   /
devfs                                                   334Ki  334Ki    0Bi   100%      1154                   0  100%   /dev
map -hosts                                                0Bi    0Bi    0Bi   100%         0                   0  100%   /net
/dev/disk2s1                                            1.0Gi  5.0Mi 1019Mi     1%        12 4294967267    0%   /Volumes/Untitled Disk
"""
GNU_T = """Filesystem     Type     1K-blocks    Used Available Use% Mounted on
/dev/sda2      ext4      20508240 5748028  13695408  30% /
/dev/sdb1      vfat        523248    5356    517892   2% /media/usb stick
"""


def test_bug46_macos_nine_columns_spaces_and_binary_units() -> None:
    res = ok(["df", "-h"], MAC_H, os="macos")
    rows = {r["filesystem"]: r for r in res["filesystems"]}
    assert rows["map -hosts"]["mounted_on"] == "/net" and rows["map -hosts"]["size_bytes_approx"] == 0
    assert rows["/dev/disk2s1"]["mounted_on"] == "/Volumes/Untitled Disk"
    assert rows["/dev/disk2s1"]["ifree"] == 4294967267 and rows["/dev/disk2s1"]["use_percent"] == 1
    assert rows["devfs"]["size"] == "334Ki" and rows["devfs"]["size_bytes_approx"] == 334 * 1024
    assert res["multiplier"] == 1024


def test_bug46_type_column_and_mount_with_space() -> None:
    rows = ok(["df", "-T"], GNU_T)["filesystems"]
    assert [(r["filesystem"], r["type"], r["mounted_on"]) for r in rows] == [
        ("/dev/sda2", "ext4", "/"), ("/dev/sdb1", "vfat", "/media/usb stick")]
    assert rows[1]["size_bytes"] == 523248 * 1024


def test_si_uses_powers_of_1000() -> None:
    text = "Filesystem Size Used Avail Use% Mounted on\n/dev/sda2 21G 5.9G 15G 30% /\n"
    row = ok(["df", "-H"], text)["filesystems"][0]
    assert row["size_bytes_approx"] == 21_000_000_000 and row["used_bytes_approx"] == 5_900_000_000


def test_grouped_or_suffixed_block_sizes_are_out_of_range_with_hint() -> None:
    for size in ("'4K", "K"):  # "'" groups thousands in the counts; a bare unit suffixes them
        pe = err(["df", "-B", size], "x\n")
        assert pe.reason == "unsupported_format" and pe.hint.args == []
    text = subprocess.run(["df", "-BK", "/"], capture_output=True, text=True, check=True).stdout
    assert "K " in text.splitlines()[1]  # the control: df really suffixes every count
    assert err(["df"], text.replace("-BK", "")).reason == "unrecognized_output"  # never dropped silently


def test_without_header_is_unrecognized() -> None:
    assert err(["df"], "/dev/sda2 1 2 3 4% /\n").reason == "unrecognized_output"


def test_rounded_inode_counts_are_refused_with_a_hint() -> None:
    pe = err(["df", "-hi"], "Filesystem Inodes IUsed IFree IUse% Mounted on\n/dev/sda 1.3M 12K 1.3M 1% /\n")
    assert pe.reason == "unsupported_format" and pe.hint.args == ["-i"]
    assert err(["df", "-h", "-B", "'4K"], "x\n").hint.args == ["-h"]


def test_macos_gigabyte_blocks() -> None:
    text = "Filesystem 1G-blocks Used Available Capacity iused ifree %iused Mounted on\n/dev/disk1s1 465 144 314 32% 1507695 4294967 0% /\n"
    row = ok(["df", "-g"], text, os="macos")["filesystems"][0]
    assert row["size_bytes"] == 465 * 2**30 and row["iused"] == 1507695


@pytest.mark.parametrize("size", ["1", "1m", "4096", "4K", "1kB", "1KiB", "1MB", "2M", "10"])
def test_block_sizes_read_by_the_title_df_prints(size: str) -> None:
    """``-B SIZE`` live: the size column is blocks of the unit df names, checked against
    ``statvfs`` (the total, which does not move while the test runs); ``-B1`` is exact bytes."""
    st = os.statvfs("/")
    total = st.f_blocks * st.f_frsize
    text = subprocess.run(["df", f"-B{size}", "/"], capture_output=True, text=True, check=True,
                          env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}).stdout
    res = ok(["df", f"-B{size}", "/"], text)
    unit = res["block_size"]
    row = res["filesystems"][0]
    assert row["mounted_on"] == "/"
    assert total <= row["size_bytes"] < total + unit  # df rounds a partial block up
    if size == "1":
        assert unit == 1 and row["size_bytes"] == total


def test_block_unit_titles() -> None:
    from parism.parsers.fs.df import block_unit
    assert [block_unit(t) for t in ("1B-blocks", "1kB-blocks", "4K-blocks", "1MB-blocks", "512-blocks",
                                    "1024-blocks", "2M-blocks", "Size")] == [
        1, 1000, 4096, 1000**2, 512, 1024, 2 * 1024**2, None]
