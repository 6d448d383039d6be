"""``ls``'s column flags (``parism.parsers.fs.ls.COLUMN_FLAGS``) on device files, live: the real
``ls`` on ``/dev/null`` and ``/dev/zero``, parsed, checked against ``os.stat`` (``st_rdev``,
``st_uid``/``st_gid``). The rest of the table is exercised on the hostile tree of
``truth_cases.py`` (``test_truth_live.py``): -u, -c, --time=atime, -g, -o, -G, -n, -go, -F, -p,
--file-type, -R, name lists, -b, -Q, -i, -s."""

from __future__ import annotations

import grp
import os
import pwd
import subprocess

import pytest

from parism.parsers import registry
from parism.parsers.fs.ls import COLUMN_FLAGS

DEVICES = ["/dev/null", "/dev/zero"]
ENV = {"LC_ALL": "C.UTF-8", "TZ": "UTC", "PATH": "/usr/bin:/bin"}


def _parse(args: list[str]) -> list[dict]:
    out = subprocess.run(["ls", *args, *DEVICES], capture_output=True, env=ENV, check=True).stdout.decode()
    res = registry.parse("ls", [*args, *DEVICES], out, "linux", strict_schemas=True)
    assert res.parse_error is None, res.parse_error
    return res.parsed["entries"]


@pytest.mark.parametrize("flags", [["-l"], ["-lo"], ["-lg"], ["-lgo"], ["-lG"], ["-ln"], ["-lgn"], ["-lon"]])
def test_a_device_row_keeps_its_major_minor_and_ids(flags: list[str]) -> None:
    for row in _parse(flags):
        st = os.stat(row["name"])
        assert (row["major"], row["minor"]) == (os.major(st.st_rdev), os.minor(st.st_rdev)), (flags, row)
        owner_shown = "g" not in flags[0]
        group_shown = "o" not in flags[0] and "G" not in flags[0]
        numeric = "n" in flags[0]
        owner, group = row.get("owner"), row.get("group")
        assert owner == ((str(st.st_uid) if numeric else pwd.getpwuid(st.st_uid).pw_name) if owner_shown else None), row
        assert group == ((str(st.st_gid) if numeric else grp.getgrgid(st.st_gid).gr_name) if group_shown else None), row
        assert ("owner" in row) == owner_shown and ("group" in row) == group_shown


def test_the_table_names_every_column_flag_the_issue_lists() -> None:
    text = " ".join(COLUMN_FLAGS)
    for flag in ("-u", "-c", "-g", "-o", "-G", "-n", "-F", "-p", "--file-type", "-R", "-b", "-Q", "devices"):
        assert flag in text, flag


def test_time_birth_is_the_birth_time_not_the_mtime(tmp_path) -> None:
    """``--time=birth``: the kernel's birth time (statx, as GNU ``stat -c %W`` reads it) in
    birth_at, never in modified_at."""
    import datetime as dt

    f = tmp_path / "f"
    f.write_text("x")
    os.utime(f, (1_000_000_000, 1_000_000_000))  # mtime 2001: differs from the birth time
    born = subprocess.run(["stat", "-c", "%W", str(f)], capture_output=True, text=True, env=ENV).stdout.strip()
    if born in ("", "0", "-"):
        pytest.skip("this file system does not record birth times")
    args = ["-l", "--time=birth", "--full-time"]
    out = subprocess.run(["ls", *args, str(f)], capture_output=True, env=ENV, check=True).stdout.decode()
    res = registry.parse("ls", [*args, str(f)], out, "linux", strict_schemas=True)
    assert res.parse_error is None, res.parse_error
    [row] = res.parsed["entries"]
    assert "modified_at" not in row
    assert int(dt.datetime.fromisoformat(row["birth_at"]).timestamp()) == int(born)
