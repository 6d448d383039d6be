"""ps: jc ``ps`` (aux: user pid cpu_percent …; -ef: uid pid ppid c stime tty time cmd)."""

from __future__ import annotations

from typing import Any

from tests.parsers.corpus.mappers._util import compare_rows, num, placeholder, same

_AUX = [("user", "user", same), ("pid", "pid", num), ("cpu", "cpu_percent", num),
        ("mem", "mem_percent", num), ("vsz", "vsz", num), ("rss", "rss", num),
        ("stat", "stat", same), ("start", "start", same), ("time", "time", same),
        ("command", "command", same)]
_EF = [("uid", "uid", same), ("pid", "pid", num), ("ppid", "ppid", num), ("c", "c", num),
       ("start", "stime", same), ("time", "time", same), ("command", "cmd", same)]


def check(parsed: dict[str, Any], expected: list[Any], entry: dict[str, Any]) -> list[str]:
    rows = parsed.get("processes", [])
    is_ef = "-ef" in entry["argv"]
    fields = list(_EF if is_ef else _AUX) + [("tty", "tty" if is_ef or entry["os_family"] != "macos" else "tt", placeholder)]
    if not is_ef and entry["os_family"] == "macos":
        fields = [f if f[0] != "start" else ("start", "started", same) for f in fields]
    return compare_rows("processes", rows, expected, fields)
