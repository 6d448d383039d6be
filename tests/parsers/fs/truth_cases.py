"""The live truth cases of issue #25: a tree of hostile names under every ``ls``/``find``/``du``/
``stat``/``wc`` form the parsers accept, run through the real engine (guard, sandbox, redactor,
parser, JSON text), each answer judged against the kernel — ``os.listdir`` in bytes, ``os.lstat``,
``os.readlink`` — and counted right / wrong / refused / crash.

Used by ``tests/parsers/fs/test_truth_live.py`` (no case may be wrong or crash) and by
``scripts/truth_count.py`` (the counts, also against an older tree: it uses only
``create_engine().run`` and the JSON text, so any version of Parism can be judged).
Nothing here reads Parism's own answer as the expected value.
"""

from __future__ import annotations

import base64
import datetime as dt
import grp
import json
import os
import pwd
import stat
import time
from pathlib import Path
from typing import Any

NOW = time.time()
MTIME = NOW - 2 * 86400 - 777  # recent: ls prints HH:MM
ATIME = NOW - 1 * 86400 - 333  # differs from the mtime: -u must show this one

# top-level names (bytes): every one breaks a naive reader somewhere
FILES = [b"bad\xff", b"bad\xfe", b"nl\nname", b"cr\rname", b"tab\tname", b"  lead", b"p -> q", b"star*",
         b"total 12", b"plain", b"trail "]
EXEC = [b"exe", b"run*"]  # run* prints as run** under -F: only the last * goes
DIRS = {b"d\nx": [b"inner"], b"sub": [b"deep\xff", b"ok"]}
LINKS = {b"ln\xff": b"tgt\xfe", b"lnd": b"sub", b"lnx": b"exe", b"arrow -> x": b"p -> q"}
FIFO = b"ff"


def build(root: Path) -> None:
    """Create the tree in ``root`` (an empty directory)."""
    base = os.fsencode(root)
    for name in FILES + EXEC:
        with open(os.path.join(base, name), "wb") as fh:
            fh.write(b"x" * (len(name) + 3))
    for name in EXEC:
        os.chmod(os.path.join(base, name), 0o755)
    for name, inner in DIRS.items():
        os.mkdir(os.path.join(base, name))
        for child in inner:
            with open(os.path.join(base, name, child), "wb") as fh:
                fh.write(b"inner\n")
    for name, target in LINKS.items():
        os.symlink(target, os.path.join(base, name))
    os.mkfifo(os.path.join(base, FIFO))
    for dirpath, dirnames, filenames in os.walk(base):
        for n in dirnames + filenames:
            os.utime(os.path.join(dirpath, n), (ATIME, MTIME), follow_symlinks=False)


def regular(root: Path) -> list[bytes]:
    base = os.fsencode(root)
    return sorted(n for n in os.listdir(base) if stat.S_ISREG(os.lstat(os.path.join(base, n)).st_mode))


LS = [["-l"], ["-la"], ["-lA"], ["-lb"], ["-lab"], ["-lQ"], ["-l", "--quoting-style=c"], ["-lu"], ["-lc"],
      ["-l", "--time=atime"], ["-lg"], ["-lo"], ["-lG"], ["-ln"], ["-lgo"], ["-lF"], ["-lp"], ["-l", "--file-type"],
      ["-lFb"], ["-lR"], ["-lRb"], ["-li"], ["-ls"], ["-lh"], ["-l", "--full-time"], ["-lt"], ["-lr"], ["-lS"],
      ["-l", "--time-style=long-iso"], [], ["-1"], ["-a"], ["-A"], ["-1b"], ["-Q"], ["-F"], ["-p"],
      ["-F", "--quoting-style=c"], ["-R"], ["-Rb"], ["-i"], ["-r"]]
FIND = [["."], [".", "-mindepth", "1"], [".", "-type", "f"]]
DU = [["-a"], ["-ab"], ["-a", "--apparent-size"]]


def cases() -> list[tuple[str, list[str]]]:
    """Every case, as (cmd, args) run in the tree's root."""
    names = [os.fsdecode(n) for n in sorted([*FILES, *EXEC, *DIRS, *LINKS, FIFO])]
    files = [os.fsdecode(n) for n in sorted(FILES + EXEC)]
    out: list[tuple[str, list[str]]] = [("ls", a) for a in LS]
    out += [("find", a) for a in FIND]
    out += [("du", a) for a in DU]
    out += [("stat", ["--", *names]), ("stat", ["-L", "--", *files])]
    out += [("wc", ["-c", "--", *files]), ("wc", ["--", *files]), ("wc", ["-l", "--", *files])]
    out += [("ls", ["-l", "--", n]) for n in names]  # each name as an argument
    return out


# -- judging ---------------------------------------------------------------------------------

class Wrong(Exception):
    pass


def _exact(row: dict[str, Any], key: str) -> bytes:
    if f"{key}_b64" in row:
        return base64.b64decode(row[f"{key}_b64"])
    return str(row[key]).encode("utf-8")


def _same(got: Any, want: Any, what: str) -> None:
    if got != want:
        raise Wrong(f"{what}: got {got!r}, want {want!r}")


def _minute(iso: str) -> float | str:
    """An ISO time as the instant of its minute (a naive one is UTC: the tests leave TZ unset);
    a date alone stays a date."""
    if "T" not in iso:
        return iso
    at = dt.datetime.fromisoformat(iso)
    if at.tzinfo is None:
        at = at.replace(tzinfo=dt.UTC)
    return at.replace(second=0, microsecond=0).timestamp()


def _kernel_minute(t: float) -> float:
    return float(int(t // 60) * 60)


def _flag(args: list[str], *names: str) -> bool:
    short = {n[1] for n in names if len(n) == 2}
    return any(a in names or (a.startswith("-") and not a.startswith("--") and short & set(a[1:])) for a in args)


def _time_key(args: list[str]) -> str:
    key = "modified"
    for a in args:
        if a.startswith("-") and not a.startswith("--"):
            for c in a[1:]:
                key = {"u": "accessed", "c": "changed"}.get(c, key)
        elif a.startswith("--time="):
            key = {"atime": "accessed", "ctime": "changed"}.get(a[7:], "modified")
    return key


def _check_long_row(row: dict[str, Any], path: bytes, args: list[str]) -> None:
    st = os.lstat(path)
    where = repr(path)
    if "mode" in row:
        _same(row["mode"], stat.filemode(st.st_mode), f"{where} mode")
    _same(row.get("links"), st.st_nlink, f"{where} links")
    if "size_bytes" in row and not stat.S_ISCHR(st.st_mode):
        _same(row["size_bytes"], st.st_size, f"{where} size")
    g, o, n = _flag(args, "-g"), _flag(args, "-o", "-G"), _flag(args, "-n")
    if n:
        _same(row.get("owner"), None if g else str(st.st_uid), f"{where} owner (numeric)")
        _same(row.get("group"), None if o else str(st.st_gid), f"{where} group (numeric)")
    else:
        _same(row.get("owner"), None if g else pwd.getpwuid(st.st_uid).pw_name, f"{where} owner")
        _same(row.get("group"), None if o else grp.getgrgid(st.st_gid).gr_name, f"{where} group")
    key = _time_key(args)
    kernel = {"modified": st.st_mtime, "accessed": st.st_atime, "changed": st.st_ctime}[key]
    if key != "modified" and "modified_at" in row:
        raise Wrong(f"{where}: modified_at holds the {key} time")
    iso = row.get(f"{key}_at")
    if iso is None:
        raise Wrong(f"{where}: no {key}_at")
    want: float | str = _kernel_minute(kernel)
    got = _minute(iso)
    if isinstance(got, str):
        want = dt.datetime.fromtimestamp(kernel, dt.UTC).date().isoformat()
    _same(got, want, f"{where} {key}_at")
    if stat.S_ISLNK(st.st_mode):
        _same(_exact(row, "target"), os.readlink(path), f"{where} target")
    if "inode" in row:
        _same(row["inode"], st.st_ino, f"{where} inode")


def _listing_truth(root: bytes, args: list[str], recursive: bool) -> set[tuple[bytes, bytes]]:
    hidden = _flag(args, "-a", "-A")
    dots = _flag(args, "-a")
    out: set[tuple[bytes, bytes]] = set()
    dirs = [b"."]
    while dirs:
        d = dirs.pop()
        names = os.listdir(os.path.join(root, d))
        if dots:
            names += [b".", b".."]
        for n in names:
            if n.startswith(b".") and not hidden:
                continue
            out.add((d, n))
            full = os.path.join(root, d, n)
            if recursive and n not in (b".", b"..") and stat.S_ISDIR(os.lstat(full).st_mode):
                dirs.append(d + b"/" + n)
    return out


def judge_ls(parsed: dict[str, Any], root: bytes, args: list[str]) -> str:
    entries = parsed.get("entries")
    if not entries and (parsed.get("unresolved") or parsed.get("hint_args")):
        return "refused"
    recursive = _flag(args, "-R")
    operands = [a for a in args if not a.startswith("-")]
    if operands:  # ls -l -- NAME: that entry, or a directory's entries
        op = os.fsencode(operands[0])
        inside = stat.S_ISDIR(os.lstat(os.path.join(root, op)).st_mode)
        got = {_exact(r, "name") for r in entries}
        _same(got, set(os.listdir(os.path.join(root, op))) if inside else {op}, "the operand's entries")
        for r in entries:
            _check_long_row(r, os.path.join(root, op, _exact(r, "name")) if inside else os.path.join(root, op), args)
        return "right"
    got_pairs = set()
    for r in entries:
        d = _exact(r, "directory") if "directory" in r else b"."
        got_pairs.add((d, _exact(r, "name")))
    _same(got_pairs, _listing_truth(root, args, recursive), "entries (directory, name)")
    long = _flag(args, "-l", "-n", "-g", "-o")
    for r in entries:
        d = _exact(r, "directory") if "directory" in r else b"."
        path = os.path.join(root, d, _exact(r, "name"))
        if long:
            _check_long_row(r, path, args)
        elif "type" in r:
            st = os.lstat(path)
            kind = "directory" if stat.S_ISDIR(st.st_mode) else "symlink" if stat.S_ISLNK(st.st_mode) else \
                "file" if stat.S_ISREG(st.st_mode) else "other"
            _same(r["type"], kind, f"{path!r} type")
        if "inode" in r:
            _same(r["inode"], os.lstat(path).st_ino, f"{path!r} inode")
    return "right"


def _walk(root: bytes, files_only: bool = False, top: bool = True) -> set[bytes]:
    out = {b"."} if top and not files_only else set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for n in dirnames + filenames:
            p = os.path.normpath(os.path.join(rel, n))
            if not files_only or stat.S_ISREG(os.lstat(os.path.join(root, p)).st_mode):
                out.add(p)
    return out


def _rel(p: bytes) -> bytes:
    return os.path.normpath(p) if p != b"." else b"."


def judge(cmd: str, args: list[str], envelope: dict[str, Any], root: Path) -> str:
    base = os.fsencode(root)
    failure = envelope.get("failure") or {}
    parsed = envelope["stdout"]["parsed"]
    if failure.get("kind") == "guard" or envelope["stdout"].get("parse_error") or (
            failure.get("kind") == "parse" and parsed is None):
        return "refused"
    if not envelope["ok"]:
        raise Wrong(f"not ok: {failure}")
    if cmd == "ls":
        return judge_ls(parsed, base, args)
    if cmd == "find":
        paths = parsed["paths"]
        b64 = parsed.get("paths_b64") or [None] * len(paths)
        got = {_rel(base64.b64decode(b) if b else p.encode()) for p, b in zip(paths, b64)}
        want = _walk(base, files_only="f" in args)
        if "-mindepth" in args:
            want.discard(b".")
        _same(got, want, "find paths")
        return "right"
    if cmd == "du":
        got = {_rel(_exact(r, "path")) for r in parsed["entries"] if not r.get("total")}
        _same(got, _walk(base), "du paths")
        return "right"
    if cmd == "stat":
        follow = "-L" in args
        names = [os.fsencode(a) for a in args[args.index("--") + 1:]]
        files = parsed["files"]
        _same([_exact(r, "file") for r in files], names, "stat names")
        for r in files:
            p = os.path.join(base, _exact(r, "file"))
            st = os.stat(p) if follow else os.lstat(p)
            _same((r.get("size_bytes"), r.get("inode"), r.get("links")), (st.st_size, st.st_ino, st.st_nlink),
                  f"stat {p!r}")
        return "right"
    if cmd == "wc":
        names = [os.fsencode(a) for a in args[args.index("--") + 1:]]
        rows = parsed["entries"]
        _same([_exact(r, "file") for r in rows], names, "wc names")
        for r in rows:
            data = open(os.path.join(base, _exact(r, "file")), "rb").read()
            if "bytes" in r:
                _same(r["bytes"], len(data), f"wc bytes {r['file']!r}")
            if "lines" in r:
                _same(r["lines"], data.count(b"\n"), f"wc lines {r['file']!r}")
        return "right"
    raise AssertionError(cmd)


def run_case(engine: Any, root: Path, cmd: str, args: list[str]) -> tuple[str, str]:
    """(verdict, detail) for one case: right, wrong, refused or crash."""
    try:
        env = engine.run(cmd, args, cwd=str(root), format="json")
        text = env.to_json()
        data = text.encode("utf-8") if isinstance(text, str) else text
        envelope = json.loads(data.decode("utf-8"))
    except Exception as exc:  # noqa: BLE001 — a crash is a verdict here
        return "crash", f"{type(exc).__name__}: {exc}"[:300]
    try:
        return judge(cmd, args, envelope, root), ""
    except Wrong as exc:
        return "wrong", str(exc)[:300]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return "wrong", f"unreadable answer: {type(exc).__name__}: {exc}"[:300]
