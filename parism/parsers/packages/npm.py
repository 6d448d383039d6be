"""npm ls / npm outdated (the tree form that ``npm ls`` prints; ``--json`` passes through).

Schemas::

    ls        {"root": {"name", "version"?, "path"?} | None,
               "dependencies": [{"name", "version": str|None, "depth": int,
                                 "deduped"?: true, "problem"?: "extraneous"|"invalid"|"missing"|
                                 "missing_optional"|"overridden", "detail"?: str, "link"?: str}]}
    outdated  {"packages": [{"name", "current", "wanted", "latest", "location"?, "depended_by"?}]}

Parent rows (``├─┬ a@1.0.0``) are kept (contract §22 #30); status words (``deduped``, ``extraneous``,
``invalid: …``, ``UNMET DEPENDENCY``) are fields, never part of the name; ASCII trees printed
under a C locale read the same as Unicode ones. Depth 1 = a direct dependency.
"""

from __future__ import annotations

import re
from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.packages._tree import split_at_version, tree_lines
from parism.parsers.table import read_table, snake

_UNMET = re.compile(r"^UNMET (OPTIONAL )?DEPENDENCY (\S+)")
_SUFFIX = re.compile(r" (deduped|extraneous|overridden|invalid(?::.*)?)$")


def _entry(depth: int, label: str) -> dict[str, Any]:
    label = label.strip()
    if m := _UNMET.match(label):
        name, version = split_at_version(m.group(2))
        return {"name": name, "version": version, "depth": depth,
                "problem": "missing_optional" if m.group(1) else "missing"}
    entry: dict[str, Any] = {"depth": depth}
    while m := _SUFFIX.search(label):
        word = m.group(1)
        if word == "deduped":
            entry["deduped"] = True
        else:
            entry["problem"] = word.split(":")[0]
            if ":" in word:
                entry["detail"] = word.split(":", 1)[1].strip()
        label = label[: m.start()]
    if " -> " in label:
        label, _, link = label.partition(" -> ")
        entry["link"] = link
    spec = label.split(" ", 1)[0]
    entry["name"], entry["version"] = split_at_version(spec)
    return entry


def parse_ls(text: str, pin: ParseInput) -> dict[str, Any]:
    lines = text.splitlines()
    root = None
    first = next((ln for ln in lines if ln.strip()), "")
    if first and not re.match(r"^[│├└|+`]", first):
        spec, _, path = first.strip().partition(" ")
        name, version = split_at_version(spec)
        root = {"name": name, "version": version, **({"path": path} if path else {})}
    # a direct dependency's prefix ("├── ") is two 2-wide units
    deps = [_entry(d - 1, label) for d, label in tree_lines(lines[1:] if root else lines, 2)]
    if not deps and not root:
        raise Unrecognized("no tree rows")
    return {"root": root, "dependencies": deps}


def parse_outdated(text: str, pin: ParseInput) -> dict[str, Any]:
    if not text.strip():
        return {"packages": []}
    _, rows = read_table(text, "Package", ("Depended by",))
    return {"packages": [{snake(k): (v or None) for k, v in r.items()} for r in rows]}


LS_FLAGS = {"--depth": "value", "--all": "bool", "-a": "bool", "--prod": "bool", "--production": "bool",
            "--omit": "value", "--long": "bool", "-l": "bool", "-g": "bool", "--global": "bool",
            "--json": "bool", "--parseable": "bool", "-p": "bool", "--link": "bool"}


def _no_display(tokens: Any) -> str | None:
    if tokens.has("--json"):
        return "--json output is passed through as JSON"
    if tokens.has("--parseable", "-p", "--long", "-l"):
        return "--parseable/--long change the lines; use --json"
    return None


_ls = Parser(id="npm-ls", parse=parse_ls, rows_key="dependencies",
             row_fields=("name", "version", "depth", "deduped", "problem", "detail", "link"),
             json_output=lambda a: "--json" in a,
             contract=Contract(flags=LS_FLAGS, values={"--depth": r"\d+|Infinity", "--omit": "dev|optional|peer"},
                               supports=_no_display,
                               hint=lambda a: [x for x in a if x not in ("--parseable", "-p", "--long", "-l")]
                               + ["--json"]))
_outdated = Parser(id="npm-outdated", parse=parse_outdated, rows_key="packages",
                   row_fields=("package", "current", "wanted", "latest", "location", "depended_by"), header_lines=1,
                   json_output=lambda a: "--json" in a,
                   contract=Contract(flags={"--all": "bool", "-a": "bool", "-g": "bool", "--global": "bool",
                                            "--json": "bool", "--long": "bool", "-l": "bool"},
                                     supports=lambda t: "--json/--long change the output" if t.has(
                                         "--json", "--long", "-l") else None,
                                     hint=lambda a: [x for x in a if x not in ("--long", "-l")] + ["--json"]))

PARSER = Parser(
    id="npm", contract=Contract(),
    packages={"*": "npm", "brew": "node", "winget": "OpenJS.NodeJS"},
    subcommands={"ls": _ls, "list": _ls, "la": _ls, "ll": _ls, "outdated": _outdated},
    examples=(("ls",), ("ls", "--all"), ("outdated",), ("ls", "--json")),
)
