"""cargo tree (and ``cargo --version``); ``cargo metadata`` passes through as JSON.

Schemas::

    tree     {"root": Crate, "crates": [Crate & {"depth": int}]}
             Crate = {"name", "version": "0.1.0", "proc_macro"?: true, "source"?: str,
                      "duplicate"?: true, "kind"?: "build"|"dev"}
    version  {"version": str, "commit"?: str, "date"?: str}

``(proc-macro)`` and ``(*)`` (already shown above) are flags, never a path (contract §22 #48); the
version drops the printed ``v``. ``[build-dependencies]``/``[dev-dependencies]`` headers set
``kind`` for the rows under them. Unicode and ``--charset ascii`` trees read the same.
"""

from __future__ import annotations

import re
from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.packages._tree import tree_lines

_CRATE = re.compile(r"^(?P<name>\S+) v(?P<version>\S+)(?P<rest>.*)$")
_KIND = re.compile(r"^\s*(?:[│|`├└─\- ]*)\[(build|dev)-dependencies\]\s*$")


def _crate(label: str) -> dict[str, Any]:
    m = _CRATE.match(label.strip())
    if not m:
        raise Unrecognized(f"not a 'name vX.Y.Z' crate line: {label.strip()[:60]!r}")
    crate: dict[str, Any] = {"name": m.group("name"), "version": m.group("version")}
    for part in re.findall(r"\(([^)]*)\)", m.group("rest")):
        if part == "proc-macro":
            crate["proc_macro"] = True
        elif part == "*":
            crate["duplicate"] = True
        else:
            crate["source"] = part
    return crate


def parse_tree(text: str, pin: ParseInput) -> dict[str, Any]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise Unrecognized("empty tree")
    root = _crate(lines[0])
    crates: list[dict[str, Any]] = []
    kinds: dict[int, str] = {}
    for line in lines[1:]:
        if m := _KIND.match(line):
            indent = len(line) - len(line.lstrip("│|` "))
            kinds[indent // 4 + 1] = m.group(1)
            continue
        for depth, label in tree_lines([line], 4):
            crate = _crate(label)
            crate["depth"] = depth
            kinds = {d: k for d, k in kinds.items() if d <= depth}
            if depth in kinds:
                crate["kind"] = kinds[depth]
            crates.append(crate)
    return {"root": root, "crates": crates}


def parse_version(text: str, pin: ParseInput) -> dict[str, Any]:
    m = re.match(r"^cargo (\S+)(?: \((\S+) (\S+)\))?", text.strip())
    if not m:
        raise Unrecognized("not 'cargo X.Y.Z (…)'")
    out = {"version": m.group(1)}
    if m.group(2):
        out.update(commit=m.group(2), date=m.group(3))
    return out


_tree = Parser(id="cargo-tree", parse=parse_tree, rows_key="crates",
               row_fields=("name", "version", "depth", "proc_macro", "source", "duplicate", "kind"),
               contract=Contract(flags={"--depth": "value", "-e": "value", "--edges": "value", "-i": "value",
                                        "--invert": "value", "--charset": "value", "--no-dedupe": "bool",
                                        "--offline": "bool", "--locked": "bool", "--frozen": "bool",
                                        "-p": "value", "--package": "value", "--workspace": "bool",
                                        "--target": "value", "--prefix": "value", "-f": "data", "--format": "data"},
                                 values={"--prefix": "indent"},
                                 supports=lambda t: "--format changes each line" if t.has("-f", "--format") else None,
                                 hint=lambda a: [x for x in a if not x.startswith(("--format", "-f"))]))
_version = Parser(id="cargo-version", parse=parse_version, contract=Contract(max_positionals=0))
PARSER = Parser(id="cargo", contract=Contract(), subcommands={"tree": _tree, "--version": _version, "-V": _version,
                                                              "version": _version},
                examples=(("tree",), ("--version",)))
