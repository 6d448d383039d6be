"""A directory tree with every name and file kind that breaks naive listing parsers.

Used by the live ground-truth test (real ``ls``/``stat``/``find``/``du``/``wc``/``tree`` checked
against ``os.lstat``/``os.walk``) and by the fixture capture script.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

CHILD_ENV = {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "TZ": "UTC", "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}

LONG_NAME = "L" * 120 + "-long-name-" + "x" * 100
OLD_MTIME = 31_536_000  # 1971-01-01T00:00:00Z
FUTURE_MTIME = 4_102_444_800  # 2100-01-01T00:00:00Z
RECENT_MTIME = 1_700_000_000  # 2023-11-14T22:13:20Z (older than six months: printed with a year)


def build(root: Path) -> list[str]:
    """Create the tree under ``root`` (which must not exist); return the top-level names."""
    root.mkdir(parents=True)
    files = {
        "plain.txt": "hello world\n",
        "with space.txt": "a b c\n",
        "-leading-dash": "dash\n",
        "a -> b": "arrow in a regular name\n",
        "ünïcødé.txt": "ü\n",
        LONG_NAME: "",
        "new\nline": "two\nlines\n",
        "trailing space ": "x\n",
        "tab\there": "t\n",
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "sub dir").mkdir()
    (root / "sub dir" / "inner.txt").write_text("inner\n")
    (root / "sub dir" / "deeper").mkdir()
    (root / "sub dir" / "deeper" / "Makefile").write_text("all:\n")
    os.symlink("plain.txt", root / "link to plain")
    os.symlink("a -> b", root / "arrow -> link")
    os.symlink("missing target", root / "dangling")
    os.mkfifo(root / "fifo")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(root / "sock"))
    finally:
        sock.close()
    for name, mode in (("suid", 0o4755), ("suid_noexec", 0o4644), ("sgid", 0o2755)):
        (root / name).write_text("#!/bin/sh\n")
        os.chmod(root / name, mode)
    for name, mode in (("sticky", 0o1777), ("sticky_noexec", 0o1770)):
        (root / name).mkdir()
        os.chmod(root / name, mode)
    for name, when in (("old", OLD_MTIME), ("future", FUTURE_MTIME), ("recentish", RECENT_MTIME)):
        (root / name).write_text(name)
        os.utime(root / name, (when, when))
    return sorted(os.listdir(root))


def run(argv: list[str], cwd: Path) -> str:
    """Run a real command the way the executor does (C.UTF-8, UTC, no shell)."""
    res = subprocess.run(argv, cwd=cwd, env=CHILD_ENV, capture_output=True, timeout=60, check=False)
    return res.stdout.decode("utf-8", "replace")
