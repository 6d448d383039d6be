"""One check of an ``ls -l`` row against ``os.lstat`` of the file it names, shared by the live
tests of every implementation and language."""

from __future__ import annotations

import datetime as dt
import grp
import os
import pwd
import stat
from pathlib import Path
from typing import Any


def check_ls_row(row: dict[str, Any], path: Path, *, names: bool = True, dates: bool = True) -> None:
    """Mode, links, size (exact, or a ``-h`` size rounded up by at most a tenth), symlink target;
    owner and group names (``names``) and the modification time (``dates``) when asked."""
    st = os.lstat(path)
    where = repr(row["name"])
    assert row["mode"] == stat.filemode(st.st_mode), where
    assert row["mode_octal"] == f"{stat.S_IMODE(st.st_mode):04o}", where
    assert row["links"] == st.st_nlink, where
    if "size_bytes" in row:
        assert row["size_bytes"] == st.st_size, where
    else:
        assert st.st_size <= row["size_bytes_approx"] <= st.st_size * 1.1 + 1, (where, row["size"])
    if names:
        assert row["owner"] == pwd.getpwuid(st.st_uid).pw_name, where
        assert row["group"] == grp.getgrgid(st.st_gid).gr_name, where
    if dates:
        mtime = dt.datetime.fromtimestamp(st.st_mtime, dt.timezone.utc)
        if "T" in row["modified_at"]:
            assert row["modified_at"][:16] == mtime.strftime("%Y-%m-%dT%H:%M"), where
        else:
            assert row["modified_at"] == mtime.strftime("%Y-%m-%d"), where
    if stat.S_ISLNK(st.st_mode):
        assert row["target"] == os.readlink(path), where
