"""ls: jc ``filename/link_to/flags/links/owner/group/size/date/epoch/parent`` ↔ Parism entries."""

from __future__ import annotations

from typing import Any

from tests.parsers.fs.corpus_helpers import collapse, iso_epoch, rows, same

_TYPES = {"d": "directory", "l": "symlink", "-": "file"}


def check(parsed: Any, expected: list[dict], entry: dict) -> list[str]:
    problems: list[str] = []
    if "unresolved" in parsed:
        # names with newlines in a name list: Parism reports the printed lines, not entries
        if not any("names_with_newlines" in w for w in parsed.get("warnings", [])):
            problems.append("unresolved lines without a names_with_newlines warning")
        same(problems, "unresolved", "lines", parsed["unresolved"], [e["filename"] for e in expected])
        return problems
    human = any("h" in a for a in entry["argv"][1:] if a.startswith("-") and not a.startswith("--"))
    got = rows(parsed, "entries", expected, problems)
    for i, (g, e) in enumerate(zip(got, expected)):
        where = f"row {i} ({e['filename']!r})"
        same(problems, where, "name", g.get("name"), e["filename"])
        same(problems, where, "target", g.get("target"), e.get("link_to"))
        same(problems, where, "directory", g.get("directory"), e.get("parent"))
        flags = e.get("flags")
        if flags is None:
            continue
        same(problems, where, "mode", g.get("mode"), flags[:10])
        same(problems, where, "type", g.get("type"), _TYPES.get(flags[0], "other"))
        same(problems, where, "links", g.get("links"), e.get("links"))
        same(problems, where, "owner", g.get("owner"), e.get("owner"))
        same(problems, where, "group", g.get("group"), e.get("group"))
        if not human:
            same(problems, where, "size_bytes", g.get("size_bytes"), e.get("size"))
        same(problems, where, "modified_raw", g.get("modified_raw"), collapse(e.get("date")))
        if e.get("epoch") is not None and "-" in e["date"][:5]:
            at = g.get("modified_at")
            same(problems, where, "modified_at epoch", iso_epoch(at) if at else None, e["epoch"])
    return problems
