"""Host-side id correction (parism/run/truth) against the kernel's own answers.

The sandbox's view is reproduced by hand (an overflow owner in a parsed row, as a sandbox that
maps only the server's uid prints it); the expected values come from os.lstat, /proc and
pwd/grp, never from Parism."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from tests.security.sandbox.helpers import host_group, host_user

from parism.run.truth import correct, uncorrectable


_user, _group = host_user, host_group


@pytest.fixture
def files(tmp_path: Path) -> Path:
    for name, owner in (("nouser", 4242), ("daemon", 1), ("mine", os.geteuid())):
        (tmp_path / name).write_text(name)
        if os.geteuid() == 0:
            os.chown(tmp_path / name, owner, owner)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner").write_text("x")
    return tmp_path


def test_ls_overflow_owners_become_the_hosts(files: Path) -> None:
    rows = [{"name": n, "owner": "nobody", "group": "nogroup"} for n in ("nouser", "daemon", "mine")]
    rows.append({"name": "gone", "owner": "nobody", "group": "nogroup"})
    got = correct("ls", ["-la"], {"entries": rows}, str(files), "isolated")
    for entry in got.parsed["entries"][:3]:
        st = os.lstat(files / entry["name"])
        assert (entry["owner"], entry["group"]) == (_user(st.st_uid), _group(st.st_gid))
    assert "owner" not in got.parsed["entries"][3] and "group" not in got.parsed["entries"][3]
    assert "ids_remapped" in got.warnings
    if os.geteuid() == 0:  # files of other owners exist only where the test may chown
        assert "ids_corrected" in got.warnings


def test_ls_numeric_and_subdirectory_listings(files: Path) -> None:
    got = correct("ls", ["-ln", "sub"], {"entries": [{"name": "inner", "owner": "65534", "group": "65534"}]},
                  str(files), "isolated")
    st = os.lstat(files / "sub" / "inner")
    assert got.parsed["entries"][0]["owner"] == str(st.st_uid)
    rec = correct("ls", ["-lR"], {"entries": [{"name": "inner", "directory": "./sub", "owner": "nobody",
                                               "group": "nogroup"}]}, str(files), "isolated")
    assert rec.parsed["entries"][0]["owner"] == _user(st.st_uid)


def test_values_that_are_not_the_overflow_id_are_left_as_printed(files: Path) -> None:
    row = {"name": "nouser", "owner": "alice", "group": "staff"}
    got = correct("ls", ["-l"], {"entries": [row]}, str(files), "isolated")
    assert got.parsed["entries"] == [row] and got.warnings == []


def test_stat_fields(files: Path) -> None:
    parsed = {"files": [{"file": "nouser", "uid": 65534, "uid_name": "nobody", "gid": 65534, "gid_name": "nogroup"}]}
    got = correct("stat", ["nouser"], parsed, str(files), "isolated").parsed["files"][0]
    st = os.lstat(files / "nouser")
    names = (pwd.getpwuid(st.st_uid).pw_name if st.st_uid != 4242 else "UNKNOWN")
    assert (got["uid"], got["gid"], got["uid_name"]) == (st.st_uid, st.st_gid, names)


def _status(pid: int, line: str) -> list[int]:
    text = Path(f"/proc/{pid}/status").read_text()
    return [int(v) for v in next(x for x in text.splitlines() if x.startswith(line)).split()[1:]]


def test_ps_users_and_groups_come_from_proc() -> None:
    me = os.getpid()
    cmd = " ".join(Path(f"/proc/{me}/cmdline").read_bytes().decode().split("\0")).strip()
    parsed = {"processes": [{"pid": me, "user": "nobody", "group": "nogroup", "ruid": "65534", "command": cmd},
                            {"pid": 1, "user": "nobody", "command": "/wrong/program --that-is-not-pid-1"}]}
    got = correct("ps", ["-eo", "pid,user,group,ruid,args"], parsed, "/", "host_procs")
    row, reused = got.parsed["processes"]
    assert row["user"] == _user(_status(me, "Uid:")[1])[:8]
    assert row["group"] == _group(_status(me, "Gid:")[1])[:8]
    assert row["ruid"] == str(_status(me, "Uid:")[0])
    assert "user" not in reused  # pid 1 runs another program: not corrected, left out
    assert "ids_remapped" in got.warnings


def test_ps_in_its_own_pid_namespace_cannot_be_corrected() -> None:
    got = correct("ps", ["aux"], {"processes": [{"pid": os.getpid(), "user": "nobody"}]}, "/", "isolated")
    assert got.parsed["processes"] == [{"pid": os.getpid()}] and got.warnings == ["ids_remapped"]


@pytest.mark.parametrize(("cmd", "args", "refused"), [
    ("find", [".", "-user", "root"], True), ("find", [".", "-nouser"], True), ("find", [".", "-ls"], True),
    ("find", [".", "-printf", "%p %u\n"], True), ("find", [".", "-printf", "%p\n"], False),
    ("find", [".", "-name", "-user"], True),  # argv position does not matter to the refusal
    ("ps", ["-u", "root"], True), ("ps", ["-uroot"], True), ("ps", ["--user=root"], True), ("ps", ["aux"], False),
    ("stat", ["-c", "%U", "x"], True), ("stat", ["--format=%n %g", "x"], True), ("stat", ["-c%s", "x"], False),
    ("stat", ["x"], False), ("lsof", ["-u", "root"], True), ("tree", ["-u"], True), ("ls", ["-la"], False),
])
def test_what_cannot_be_corrected_is_named(cmd: str, args: list[str], refused: bool) -> None:
    why = uncorrectable(f"/usr/bin/{cmd}", args)
    assert (why is not None) == refused, why
