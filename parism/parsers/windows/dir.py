"""dir (Windows cmd) — directory listings, including ``/S`` sections and ``/B`` bare names.

Schema::

    {"volume_label"?: str|None, "volume_serial"?: str,
     "entries": [{"name": str, "type"?: "file"|"directory"|"junction"|"symlink"|"symlink_dir",
                  "size_bytes"?: int|None, "date"?: str, "time"?: str, "modified_at"?: str,
                  "directory"?: str, "target"?: str}],
     "sections": [{"directory": str, "files": int, "bytes": int}],
     "total_files"?: int, "total_bytes"?: int, "total_dirs"?: int, "free_bytes"?: int}

``date``/``time`` keep the printed text; ``modified_at`` (ISO, local time) is added only when
the date layout is unambiguous: ``MM/DD/YYYY`` with an AM/PM clock (en-US), ``DD.MM.YYYY``
(dots: European), ``YYYY-MM-DD``. Bare ``/B`` listings carry names only: the output does not
say which are directories, so no type is invented (contract §22 #51).
"""

from __future__ import annotations

import re
from typing import Any

from parism.parsers.contract import (
    Contract,
    ParseInput,
    Parser,
    Unrecognized,
)
from parism.parsers.table import to_int

_ENTRY = re.compile(
    r"^(?P<date>\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4})\s+(?P<time>\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?)"
    r"\s+(?P<size><DIR>|<JUNCTION>|<SYMLINKD>|<SYMLINK>|[\d,.\u00a0\u202f]+)\s+(?P<name>.+)$")
_DIRECTORY = re.compile(r"^\s*Directory of (?P<path>.+)$")
_FILES = re.compile(r"^\s+(?P<n>[\d,.]+) File\(s\)\s+(?P<b>[\d,.\u00a0\u202f]+) bytes")
_DIRS = re.compile(r"^\s+(?P<n>[\d,.]+) Dir\(s\)\s+(?P<b>[\d,.\u00a0\u202f]+) bytes free")
_LABEL = re.compile(r"^\s*Volume in drive \S+ (?:is (?P<label>.+)|has no label\.)$")
_SERIAL = re.compile(r"^\s*Volume Serial Number is (?P<serial>\S+)")
_TYPES = {"<DIR>": "directory", "<JUNCTION>": "junction", "<SYMLINKD>": "symlink_dir", "<SYMLINK>": "symlink"}
_UNSUPPORTED = {"/W": "wide columns", "/D": "wide columns", "/Q": "an owner column", "/X": "short names",
                "/R": "alternate streams"}


def _number(text: str) -> int | None:
    return to_int(re.sub(r"[,.\u00a0\u202f]", "", text))


def _iso(date: str, time: str) -> str | None:
    t = re.match(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s?([AaPp])?", time)
    if not t:
        return None
    hour, minute, sec = int(t.group(1)), int(t.group(2)), int(t.group(3) or 0)
    ampm = (t.group(4) or "").lower()
    if ampm:
        hour = hour % 12 + (12 if ampm == "p" else 0)
    if m := re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", date):
        if not ampm:
            return None  # D/M or M/D? a 24-hour clock does not say which
        mo, d, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
    elif m := re.fullmatch(r"(\d{1,2})\.(\d{1,2})\.(\d{4})", date):
        d, mo, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
    elif m := re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", date):
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    else:
        return None
    if not (1 <= mo <= 12 and 1 <= d <= 31 and hour < 24):
        return None
    return f"{y:04d}-{mo:02d}-{d:02d}T{hour:02d}:{minute:02d}:{sec:02d}"


def _switches(pin: ParseInput) -> set[str]:
    return {t.text.upper().split(":")[0] for t in pin.tokens.positionals if t.text.startswith("/")}


def parse(text: str, pin: ParseInput) -> dict[str, Any]:
    switches = _switches(pin)
    lines = [ln.rstrip("\r") for ln in text.splitlines()]
    if "/B" in switches:
        names = [ln for ln in lines if ln.strip()]
        return {"entries": [{"name": n} for n in names], "sections": []}
    out: dict[str, Any] = {"entries": [], "sections": []}
    current: str | None = None
    in_totals = False
    for ln in lines:
        if not ln.strip():
            continue
        if m := _LABEL.match(ln):
            out["volume_label"] = m.group("label")
        elif m := _SERIAL.match(ln):
            out["volume_serial"] = m.group("serial")
        elif m := _DIRECTORY.match(ln):
            current = m.group("path").strip()
        elif ln.strip().startswith("Total Files Listed"):
            in_totals = True
        elif m := _FILES.match(ln):
            files, size = _number(m.group("n")), _number(m.group("b"))
            if in_totals:
                out["total_files"], out["total_bytes"] = files, size
            else:
                out["sections"].append({"directory": current, "files": files, "bytes": size})
        elif m := _DIRS.match(ln):
            out["total_dirs"], out["free_bytes"] = _number(m.group("n")), _number(m.group("b"))
        elif m := _ENTRY.match(ln):
            out["entries"].append(_entry(m, current))
        else:
            raise Unrecognized(f"unexpected dir line: {ln.strip()[:70]!r}")
    if not out["entries"] and not out["sections"]:
        raise Unrecognized("no entries and no summary lines")
    if "total_files" not in out and out["sections"]:
        out["total_files"] = sum(s["files"] or 0 for s in out["sections"])
        out["total_bytes"] = sum(s["bytes"] or 0 for s in out["sections"])
    return out


def _entry(m: re.Match[str], directory: str | None) -> dict[str, Any]:
    size, name = m.group("size"), m.group("name")
    kind = _TYPES.get(size, "file")
    entry: dict[str, Any] = {"name": name, "type": kind,
                             "size_bytes": None if size in _TYPES else _number(size),
                             "date": m.group("date"), "time": m.group("time")}
    if kind in ("junction", "symlink", "symlink_dir") and (t := re.match(r"^(.*) \[(.*)\]$", name)):
        entry["name"], entry["target"] = t.group(1), t.group(2)
    iso = _iso(m.group("date"), m.group("time"))
    if iso:
        entry["modified_at"] = iso
    if directory is not None:
        entry["directory"] = directory
    return entry


def _supports(tokens: Any) -> str | None:
    for t in tokens.positionals:
        sw = t.text.upper().split(":")[0]
        if sw in _UNSUPPORTED:
            return f"{sw} prints {_UNSUPPORTED[sw]}; drop it"
    return None


PARSER = Parser(
    id="dir",
    contract=Contract(
        supports=_supports,
        hint=lambda a: [x for x in a if x.upper().split(":")[0] not in _UNSUPPORTED],
    ),
    parse=parse,
    os=frozenset({"windows"}),
    rows_key="entries",
    row_fields=("name", "type", "size_bytes", "date", "time", "modified_at", "directory", "target"),
    examples=((), ("/S",), ("/B",)),
)
