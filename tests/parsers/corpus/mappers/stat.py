"""stat: jc list (one item per file) ↔ Parism ``files[]`` (GNU and BSD one-line formats).

Times are compared as printed text: jc's ``*_epoch`` values are naive (the capturing machine's
local zone, the printed offset ignored), so they are not a reference for the ISO fields."""

from __future__ import annotations

from typing import Any

from tests.parsers.fs.corpus_helpers import rows, same

_GNU = {"file": "file", "size": "size_bytes", "blocks": "blocks", "io_blocks": "io_block", "type": "file_type",
        "inode": "inode", "links": "links", "flags": "permissions", "access": "mode_octal", "uid": "uid",
        "user": "uid_name", "gid": "gid", "group": "gid_name", "link_to": "target", "device": "device"}
_BSD = {"file": "file", "inode": "inode", "flags": "permissions", "links": "links", "user": "uid_name",
        "group": "gid_name", "size": "size_bytes", "block_size": "io_block", "blocks": "blocks", "unix_flags": "flags"}
_TIMES = {"access_time": "accessed_raw", "modify_time": "modified_raw", "change_time": "changed_raw",
          "birth_time": "birth_raw"}


def check(parsed: Any, expected: list[dict], entry: dict) -> list[str]:
    problems: list[str] = []
    got = rows(parsed, "files", expected, problems)
    mapping = _GNU if parsed.get("format") == "gnu" else _BSD
    for i, (g, e) in enumerate(zip(got, expected)):
        where = f"file {i} ({e.get('file')!r})"
        for jk, pk in {**mapping, **_TIMES}.items():
            same(problems, where, pk, g.get(pk), e.get(jk))
        if "unix_device" in e:
            same(problems, where, "device", g.get("device"), str(e["unix_device"]))
            same(problems, where, "rdev", g.get("rdev"), str(e["rdev"]))
    return problems
