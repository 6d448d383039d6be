"""systemctl — units and their states (Linux, systemd).

Schemas by subcommand::

    list-units (default)  {"units": [{"name", "load", "active", "sub", "job"?, "description",
                                      "failed": bool}], "listed"?: int}
    list-unit-files       {"unit_files": [{"name", "state", "preset"?}], "listed"?: int}
    is-active|is-enabled|is-failed  {"states": [{"unit"?, "state"}]}
    show                  {"units": [{<Property>: <value>, ...}]}   (one dict per unit)

Columns are read by the header's positions (LOAD/ACTIVE/SUB are often one space apart, so
splitting on two spaces fails — contract §22 #38). The failed marker (``●``, or ``*`` under a C
locale) becomes ``failed: true``. Without a header (``--no-legend``) rows are whitespace columns
with the description as the rest of the line. ``--output=json`` is passed through as JSON.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.table import HeaderTable, split_row

_LEGEND = re.compile(r"^(LOAD|ACTIVE|SUB|JOB)\s+=|units? listed|unit files listed|To show all installed|"
                     r"^Pass --all to see")
_MARKER = re.compile(r"^([●*×])\s")
_COMMON = {"--no-pager": "bool", "--user": "bool", "--system": "bool", "-a": "bool", "--all": "bool",
           "--failed": "bool", "--plain": "bool", "--no-legend": "bool", "-l": "bool", "--full": "bool",
           "-t": "value", "--type": "value", "--state": "value", "-q": "bool", "--quiet": "bool"}


class Unit(BaseModel):
    name: str
    load: str | None = None
    active: str | None = None
    sub: str | None = None
    job: str | None = None
    description: str | None = None
    failed: bool = False


class Units(BaseModel):
    units: list[Unit]
    listed: int | None = None


def _with_listed(key: str, rows: list[Any], lines: list[str]) -> dict[str, Any]:
    """``{key: rows}``, plus ``listed`` when the footer ("N loaded units listed") gives it."""
    out: dict[str, Any] = {key: rows}
    for ln in lines:
        m = re.match(r"^(\d+) (loaded units|unit files) listed", ln.strip())
        if m:
            out["listed"] = int(m.group(1))
            break
    return out


def _rows(text: str) -> tuple[str | None, list[str], list[str]]:
    """Split into (header, data rows, all lines); data stops at the legend."""
    lines = text.splitlines()
    header, rows = None, []
    for ln in lines:
        if not ln.strip():
            if rows:
                break
            continue
        if _LEGEND.search(ln):
            break
        if header is None and not rows and re.match(r"^\s*UNIT\b", ln):
            header = ln
            continue
        rows.append(ln)
    return header, rows, lines


def _unmark(line: str) -> tuple[str, bool]:
    m = _MARKER.match(line)
    if not m:
        return line, False
    return " " * len(m.group(1)) + line[len(m.group(1)):], True


def parse_units(text: str, pin: ParseInput) -> dict[str, Any]:
    header, rows, lines = _rows(text)
    table = HeaderTable.from_header(header) if header else None
    units = []
    for raw in rows:
        line, failed = _unmark(raw)
        if table is not None:
            cells = table.read(line)
            unit = {"name": cells.get("UNIT", ""), "load": cells.get("LOAD"), "active": cells.get("ACTIVE"),
                    "sub": cells.get("SUB"), "description": cells.get("DESCRIPTION")}
            if "JOB" in cells:
                unit["job"] = cells["JOB"] or None
        else:
            parts = split_row(line.strip(), 5) or (line.split() + [""] * 5)[:5]
            unit = dict(zip(("name", "load", "active", "sub", "description"), parts))
        if not unit["name"] or not unit.get("load"):
            raise Unrecognized(f"unreadable unit row: {raw.strip()[:80]!r}")
        unit["failed"] = failed
        units.append(unit)
    if not units and any(ln.strip() and not _LEGEND.search(ln) for ln in rows):
        raise Unrecognized("no unit rows")
    return _with_listed("units", units, lines)


def parse_unit_files(text: str, pin: ParseInput) -> dict[str, Any]:
    header, rows, lines = _rows(text)
    files = []
    if header is not None:
        if not re.match(r"^\s*UNIT FILE\s+STATE\b", header):
            raise Unrecognized("the header is not 'UNIT FILE  STATE'")
        names = ["UNIT FILE", "STATE"] + [n for n in ("VENDOR PRESET", "PRESET") if n in header][:1]
        table = HeaderTable.from_header(header, names)
        for ln in rows:
            c = table.read(ln)
            entry = {"name": c["UNIT FILE"], "state": c["STATE"]}
            if len(names) == 3:
                entry["preset"] = c[names[2]] or None
            files.append(entry)
    else:
        for ln in rows:
            parts = ln.split()
            entry = {"name": parts[0], "state": parts[1] if len(parts) > 1 else None}
            if len(parts) > 2:
                entry["preset"] = parts[2]
            files.append(entry)
    return _with_listed("unit_files", files, lines)


def parse_states(text: str, pin: ParseInput) -> dict[str, Any]:
    words = [ln.strip() for ln in text.splitlines() if ln.strip()]
    units = [t.text for t in pin.tokens.positionals]
    if units and len(units) == len(words):
        return {"states": [{"unit": u, "state": w} for u, w in zip(units, words)]}
    return {"states": [{"state": w} for w in words]}


def parse_show(text: str, pin: ParseInput) -> dict[str, Any]:
    units: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for ln in text.splitlines():
        if not ln.strip():
            if current:
                units.append(current)
                current = {}
            continue
        key, eq, value = ln.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", key):
            raise Unrecognized(f"not a Property=value line: {ln[:60]!r}")
        current[key] = value
    if current:
        units.append(current)
    return {"units": units}


_LIST = Contract(flags=_COMMON, max_positionals=None)
_units = Parser(id="systemctl-list-units", evidence=True, contract=_LIST, parse=parse_units, schema=Units, rows_key="units",
                row_fields=("name", "load", "active", "sub", "job", "description", "failed"),
                header_lines=1, noise=_LEGEND.pattern, os=frozenset({"linux"}))
_files = Parser(id="systemctl-list-unit-files", evidence=True, contract=_LIST, parse=parse_unit_files, rows_key="unit_files",
                row_fields=("name", "state", "preset"), header_lines=1, noise=_LEGEND.pattern,
                os=frozenset({"linux"}))
_states = Parser(id="systemctl-state", contract=Contract(flags=_COMMON, min_positionals=1), parse=parse_states,
                 rows_key="states", row_fields=("unit", "state"), os=frozenset({"linux"}))
_show = Parser(id="systemctl-show", contract=Contract(flags={**_COMMON, "-p": "value", "--property": "value",
                                                             "--value": "bool"},
                                                      supports=lambda t: "--value prints bare values; drop it"
                                                      if t.has("--value") else None,
                                                      hint=lambda a: [x for x in a if x != "--value"]),
               parse=parse_show, rows_key="units", os=frozenset({"linux"}))
_status = Parser(id="systemctl-status", contract=Contract(
    flags=_COMMON, supports=lambda t: "status output is free text; use show",
    hint=lambda a: ["show", *[x for x in a if not x.startswith("-")]], hint_scope="command"),
    os=frozenset({"linux"}))

PARSER = Parser(
    id="systemctl",
    informative_exits={3: "the unit is not active"},
    contract=_LIST,
    leading_flags=_COMMON,
    subcommands={"": _units, "list-units": _units, "list-unit-files": _files, "is-active": _states,
                 "is-enabled": _states, "is-failed": _states, "show": _show, "status": _status},
    os=frozenset({"linux"}),
    examples=(("list-units", "--type=service", "--no-pager"), ("list-unit-files",), ("is-active", "ssh")),
)
