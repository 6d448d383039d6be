"""tasklist (Windows) — processes, from the table, ``/FO CSV`` or ``/FO LIST`` output.

Schema::

    {"processes": [{"name": str, "pid": int, "session_name"?: str, "session_number"?: int,
                    "mem_usage_kb"?: int, "status"?: str, "user_name"?: str, "cpu_time"?: str,
                    "window_title"?: str, "services"?: [str], "modules"?: [str], ...}]}

Every column the output has becomes a snake_case key (``/V``, ``/SVC``, ``/M`` add columns);
the five standard English headers get the stable names above. Table columns come from the
``=====`` separator line (the header words themselves are not aligned), CSV is read with the
csv module (quoted commas stay inside their field, contract §10.3).
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.table import to_int
from parism.parsers.windows._labels import snake

_NAMES = {"image_name": "name", "session": "session_number", "mem_usage": "mem_usage_kb",
          "pid": "pid", "session_name": "session_name"}
_INFO = re.compile(r"^INFO: ")


def _key(header: str) -> str:
    k = snake(header.replace("#", " number"))
    return _NAMES.get(k, k)


def _typed(key: str, value: str) -> Any:
    value = value.strip()
    if key in ("pid", "session_number"):
        return to_int(value)
    if key == "mem_usage_kb":
        return to_int(re.sub(r"[^\d]", "", value)) if re.search(r"\d", value) else None
    if key in ("services", "modules"):
        return [] if value in ("N/A", "") else [v.strip() for v in value.split(",")]
    return value


def _row(keys: list[str], cells: list[str]) -> dict[str, Any]:
    return {k: _typed(k, c) for k, c in zip(keys, cells)}


def _table(lines: list[str]) -> list[dict[str, Any]]:
    sep_i = next(i for i, ln in enumerate(lines) if re.fullmatch(r"[= ]+", ln.strip()) and "=" in ln)
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", lines[sep_i])]
    header = lines[sep_i - 1] if sep_i else ""
    # the header text may spill past a column end: read it between column starts
    starts = [s for s, _ in spans] + [len(header) + 1]
    keys = [_key(header[starts[i]:starts[i + 1]]) for i in range(len(spans))]
    rows = []
    for ln in lines[sep_i + 1:]:
        if not ln.strip():
            continue
        cells = [ln[s:starts[i + 1]] if i + 1 < len(spans) else ln[s:] for i, (s, _) in enumerate(spans)]
        rows.append(_row(keys, cells))
    return rows


def _csv(text: str) -> list[dict[str, Any]]:
    reader = list(csv.reader(io.StringIO(text)))
    reader = [r for r in reader if r]
    if not reader:
        return []
    keys = [_key(h) for h in reader[0]]
    return [_row(keys, r) for r in reader[1:]]


def _list(lines: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for ln in lines:
        if not ln.strip():
            if current:
                rows.append(current)
                current = {}
            continue
        label, _, value = ln.partition(":")
        key = _key(label)
        if key == "name" and current:
            rows.append(current)
            current = {}
        current[key] = _typed(key, value)
    if current:
        rows.append(current)
    return rows


def parse(text: str, pin: ParseInput) -> dict[str, Any]:
    lines = [ln.rstrip("\r") for ln in text.splitlines()]
    if any(_INFO.match(ln) for ln in lines):
        return {"processes": []}  # "INFO: No tasks are running which match the specified criteria."
    body = [ln for ln in lines if ln.strip()]
    if not body:
        return {"processes": []}
    if body[0].startswith('"'):
        rows = _csv("\n".join(body))
    elif any(re.fullmatch(r"[= ]+", ln.strip()) and "=" in ln for ln in body[:3]):
        rows = _table(lines)
    elif ":" in body[0]:
        rows = _list(lines)
    else:
        raise Unrecognized("neither a tasklist table, CSV nor LIST output")
    if not rows or any("name" not in r for r in rows):
        raise Unrecognized("no process rows with an image name")
    return {"processes": rows}


PARSER = Parser(
    id="tasklist",
    contract=Contract(
        supports=lambda t: "/NH removes the header the columns are read from; drop it"
        if any(p.text.upper() == "/NH" for p in t.positionals) else None,
        hint=lambda a: [x for x in a if x.upper() != "/NH"],
    ),
    parse=parse,
    os=frozenset({"windows"}),
    rows_key="processes",
    row_fields=("name", "pid", "session_name", "session_number", "mem_usage_kb"),
    noise=_INFO.pattern,
    examples=((), ("/FO", "CSV"), ("/V",)),
)
