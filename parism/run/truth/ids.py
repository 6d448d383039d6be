"""The corrections, one function per command family; see the package docstring for the rules."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TYPE_CHECKING

from parism.run.truth.names import group_name, like, overflow_names, ps_name, user_name

if TYPE_CHECKING:
    from pydantic import JsonValue

CORRECTED = "ids_corrected"
REMAPPED = "ids_remapped"


@dataclass
class Corrected:
    parsed: Any
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Tally:
    fixed: int = 0
    lost: int = 0

    def set(self, row: dict[str, Any], key: str, value: JsonValue) -> None:
        """Write the host's value; only a change counts as a correction (nobody may be true)."""
        if row.get(key) != value:
            self.fixed += 1
        row[key] = value

    def warnings(self) -> list[str]:
        return [w for w, n in ((CORRECTED, self.fixed), (REMAPPED, self.lost)) if n]


def correct(cmd: str, args: list[str], parsed: JsonValue, cwd: str, namespace: str) -> Corrected:
    """Rewrite overflow ids in ``parsed`` (a fresh copy) with the host's values."""
    fix = _FIXERS.get(os.path.basename(cmd))
    if fix is None or not isinstance(parsed, dict):
        return Corrected(parsed)
    tally = _Tally()
    out = fix(args, parsed, cwd, namespace, tally)
    return Corrected(out, tally.warnings())


def _rows(value: JsonValue) -> list[dict[str, Any]] | None:
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else None


def _overflow(value: JsonValue) -> bool:
    return isinstance(value, (str, int)) and str(value) in overflow_names()


# -- paths: ls -l, stat ----------------------------------------------------------------------

def _operands(args: list[str]) -> list[str]:
    out, ended = [], False
    for a in args:
        if ended or a == "-" or not a.startswith("-"):
            out.append(a)
        elif a == "--":
            ended = True
    return out


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _ls(args: list[str], parsed: dict[str, Any], cwd: str, namespace: str, tally: _Tally) -> dict[str, Any]:
    entries = _rows(parsed.get("entries"))
    if entries is None:
        return parsed
    ops = _operands(args)
    single = ops[0] if len(ops) == 1 and os.path.isdir(os.path.join(cwd, ops[0])) else None
    follow = any(a in ("-L", "--dereference") for a in args)
    fixed = []
    for row in entries:
        keys = ("owner", "group")
        if not (_overflow(row.get(keys[0])) or _overflow(row.get(keys[1]))):
            fixed.append(row)
            continue
        base = row.get("directory") or single or ""
        path = os.path.join(cwd, base, str(row.get("name", "")))
        st = _stat(path, follow)
        fixed.append(_owner_fields(row, st, keys, tally))
    return {**parsed, "entries": fixed}


def _stat(path: str, follow: bool) -> os.stat_result | None:
    if not follow:
        return _lstat(path)
    try:
        return os.stat(path)
    except OSError:
        return None


def _owner_fields(row: dict[str, Any], st: os.stat_result | None, keys: tuple[str, str],
                  tally: _Tally) -> dict[str, Any]:
    """Owner and group keys (names or numbers as printed) from ``st``; left out without one."""
    out = dict(row)
    for key, value, name_of in ((keys[0], st.st_uid if st else None, user_name),
                                (keys[1], st.st_gid if st else None, group_name)):
        if not _overflow(out.get(key)):
            continue
        if value is None:
            del out[key]
            tally.lost += 1
        else:
            tally.set(out, key, like(str(out[key]), value, name_of(value)))
    return out


def _stat_cmd(args: list[str], parsed: dict[str, Any], cwd: str, namespace: str, tally: _Tally) -> dict[str, Any]:
    files = _rows(parsed.get("files"))
    if files is None:
        return parsed
    follow = any(a in ("-L", "--dereference") for a in args)
    fixed = []
    for row in files:
        keys = [k for k in ("uid", "uid_name", "gid", "gid_name", "owner", "group") if _overflow(row.get(k))]
        if not keys:
            fixed.append(row)
            continue
        st = _stat(os.path.join(cwd, str(row.get("file", ""))), follow)
        out = dict(row)
        for key in keys:
            if st is None:
                del out[key]
                tally.lost += 1
                continue
            uid_side = key in ("uid", "uid_name", "owner")
            value = st.st_uid if uid_side else st.st_gid
            name = (user_name if uid_side else group_name)(value, "UNKNOWN")
            tally.set(out, key, value if key in ("uid", "gid") else name)
        fixed.append(out)
    return {**parsed, "files": fixed}


# -- processes: ps, lsof (host_procs: the pids are the host's) --------------------------------

# parsed key → (status line, index: real, effective, saved, fs), and whether it is a group
PROC_IDS: dict[str, tuple[str, int, bool]] = {
    "user": ("Uid:", 1, False), "uid": ("Uid:", 1, False), "euser": ("Uid:", 1, False), "euid": ("Uid:", 1, False),
    "ruser": ("Uid:", 0, False), "ruid": ("Uid:", 0, False),
    "group": ("Gid:", 1, True), "gid": ("Gid:", 1, True), "egroup": ("Gid:", 1, True), "egid": ("Gid:", 1, True),
    "rgroup": ("Gid:", 0, True), "rgid": ("Gid:", 0, True),
}


def _proc_ids(pid: object, command: object) -> dict[str, int] | None:
    """``{"Uid:0": real uid, "Uid:1": effective, …, "Gid:1": …}`` of ``pid`` from /proc, if it
    is still the process that was printed."""
    if not isinstance(pid, int):
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            status = f.read()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return None
    if isinstance(command, str) and command and cmdline and not _same_command(command.strip(), cmdline):
        return None  # the pid belongs to another process now
    out: dict[str, int] = {}
    for line in status.splitlines():
        if line.startswith(("Uid:", "Gid:")):
            head, *values = line.split()
            out.update({f"{head}{i}": int(v) for i, v in enumerate(values)})
    return out or None


def _same_command(printed: str, cmdline: str) -> bool:
    """ps prints the arguments with whitespace (newlines too) as it likes, cut to its width."""
    a, b = " ".join(printed.split()), " ".join(cmdline.split())
    if a.startswith(b) or b.startswith(a):
        return True
    return os.path.basename(a.split(" ")[0])[:15] == os.path.basename(b.split(" ")[0])[:15]


def _processes(key: str, command_keys: tuple[str, ...],
               name_of: Callable[[str, int, bool], str]) -> Callable[..., dict[str, Any]]:
    def fix(args: list[str], parsed: dict[str, Any], cwd: str, namespace: str, tally: _Tally) -> dict[str, Any]:
        rows = _rows(parsed.get(key))
        if rows is None:
            return parsed
        fixed = []
        for row in rows:
            fields = [k for k in PROC_IDS if _overflow(row.get(k))]
            if not fields:
                fixed.append(row)
                continue
            command = next((row[k] for k in command_keys if isinstance(row.get(k), str)), None)
            ids = _proc_ids(row.get("pid"), command) if namespace == "host_procs" else None
            out = dict(row)
            for k in fields:
                line, index, is_group = PROC_IDS[k]
                value = ids.get(f"{line}{index}") if ids else None
                if value is None:
                    del out[k]
                    tally.lost += 1
                else:
                    tally.set(out, k, name_of(str(row[k]), value, is_group))
            fixed.append(out)
        return {**parsed, key: fixed}
    return fix


_FIXERS: dict[str, Callable[..., dict[str, Any]]] = {
    "ls": _ls,
    "stat": _stat_cmd,
    "ps": _processes("processes", ("command", "comm"), ps_name),
    "lsof": _processes("entries", (), lambda printed, value, group: like(
        printed, value, (group_name if group else user_name)(value))),
}
