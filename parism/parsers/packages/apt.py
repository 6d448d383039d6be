"""apt list / search / policy / show (Debian, Ubuntu).

Schemas::

    list    {"packages": [{"name", "suite", "suites": [str], "version", "arch",
                           "status": [str]}]}            # status: installed, automatic, upgradable…
    search  {"packages": [{"name", "suite", "suites", "version", "arch", "status", "description"}]}
    policy  {"packages": [{"name", "installed": str|None, "candidate": str|None,
                           "versions": [{"version", "installed": bool, "priority": int,
                                         "sources": [{"priority": int, "source": str}]}]}]}
    show    {"packages": [{<Field>: <value>, ...}]}      # RFC 822 fields, continuation lines joined

The name and its suites are split at the ``/`` (contract §22 #47: v1 kept ``name/suite`` as the name);
``now`` in the suite list means installed and is kept in ``suites``. Plain ``apt list`` lines
without a ``[status]`` are read too. ``Listing...``/``Sorting...``/``Full Text Search...`` (and
their Korean forms) are noise.
"""

from __future__ import annotations

import re
from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized

_NOISE = re.compile(r"^(Listing|Sorting|Full Text Search|나열 중|정렬 중|전체 텍스트 검색)|^WARNING: apt does not")
_ROW = re.compile(r"^(?P<name>[^\s/]+)/(?P<suites>\S+) (?P<version>\S+) (?P<arch>\S+)(?: \[(?P<status>[^\]]*)\])?\s*$")


def _row(line: str) -> dict[str, Any] | None:
    m = _ROW.match(line)
    if not m:
        return None
    suites = m.group("suites").split(",")
    status = [s.strip() for s in (m.group("status") or "").split(",") if s.strip()]
    return {"name": m.group("name"), "suite": suites[0], "suites": suites, "version": m.group("version"),
            "arch": m.group("arch"), "status": status}


def _packages(text: str, descriptions: bool) -> dict[str, Any]:
    """``name/suite version arch [status]`` rows; with ``descriptions`` (apt search) the
    indented lines under a row are its description."""
    packages: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line.strip() or _NOISE.match(line):
            continue
        if descriptions and line.startswith(" ") and packages:
            desc = packages[-1].get("description")
            packages[-1]["description"] = (desc + "\n" if desc else "") + line.strip()
            continue
        row = _row(line.rstrip())
        if row is None:
            raise Unrecognized(f"not a 'name/suite version arch [status]' line: {line[:60]!r}")
        packages.append(row)
    return {"packages": packages}


def parse_list(text: str, pin: ParseInput) -> dict[str, Any]:
    return _packages(text, descriptions=False)


def parse_search(text: str, pin: ParseInput) -> dict[str, Any]:
    return _packages(text, descriptions=True)


def parse_policy(text: str, pin: ParseInput) -> dict[str, Any]:
    packages: list[dict[str, Any]] = []
    version: dict[str, Any] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" ") and line.rstrip().endswith(":"):
            packages.append({"name": line.strip()[:-1], "installed": None, "candidate": None, "versions": []})
            version = None
            continue
        if not packages:
            raise Unrecognized("no 'package:' header")
        pkg = packages[-1]
        s = line.strip()
        if m := re.match(r"^(Installed|Candidate): (.*)$", s):
            pkg[m.group(1).lower()] = None if m.group(2) == "(none)" else m.group(2)
        elif s == "Version table:":
            continue
        elif m := re.match(r"^(\*\*\* )?(\S+) (-?\d+)$", s):
            version = {"version": m.group(2), "installed": bool(m.group(1)), "priority": int(m.group(3)),
                       "sources": []}
            pkg["versions"].append(version)
        elif (m := re.match(r"^(-?\d+) (.+)$", s)) and version is not None:
            version["sources"].append({"priority": int(m.group(1)), "source": m.group(2)})
    return {"packages": packages}


def parse_show(text: str, pin: ParseInput) -> dict[str, Any]:
    packages: list[dict[str, str]] = []
    current: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        if not line.strip():
            if current:
                packages.append(current)
                current, key = {}, None
            continue
        if line[0] in " \t" and key:
            current[key] += "\n" + line.strip()
            continue
        k, sep, v = line.partition(":")
        if not sep or " " in k:
            raise Unrecognized(f"not an RFC 822 field: {line[:60]!r}")
        key = k
        current[key] = v.strip()
    if current:
        packages.append(current)
    return {"packages": packages}


_ROWS = ("name", "suite", "suites", "version", "arch", "status")
PARSER = Parser(
    id="apt", contract=Contract(),
    subcommands={
        "list": Parser(id="apt-list", parse=parse_list, rows_key="packages", row_fields=_ROWS, noise=_NOISE.pattern,
                       contract=Contract(flags={"--installed": "bool", "--upgradable": "bool", "-a": "bool",
                                                "--all-versions": "bool", "--manual-installed": "bool"})),
        "search": Parser(id="apt-search", parse=parse_search, rows_key="packages", noise=_NOISE.pattern,
                         row_fields=(*_ROWS, "description"),
                         contract=Contract(flags={"--names-only": "bool", "--full": "bool"}, min_positionals=1)),
        "policy": Parser(id="apt-policy", parse=parse_policy, rows_key="packages",
                         row_fields=("name", "installed", "candidate", "versions"), contract=Contract()),
        "show": Parser(id="apt-show", parse=parse_show, rows_key="packages", noise=_NOISE.pattern,
                       contract=Contract(flags={"-a": "bool", "--all-versions": "bool"}, min_positionals=1)),
    },
    os=frozenset({"linux"}),
    examples=(("list", "--installed"), ("search", "bubblewrap"), ("policy", "git"), ("show", "git")),
)
