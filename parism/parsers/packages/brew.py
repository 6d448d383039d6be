"""brew (Homebrew, macOS/Linux) — list, outdated, leaves, deps --tree; ``--json`` passes through.

Schemas::

    list --versions   {"packages": [{"name", "versions": [str]}]}
    list | leaves     {"packages": [{"name"}]}
    outdated          {"packages": [{"name", "installed": [str]|None, "current": str|None,
                                     "pinned"?: str}]}
    deps --tree       {"root": str, "dependencies": [{"name", "depth": int}]}

Every installed version is kept (v1 dropped all but the first, contract §10.3). Homebrew cannot
run on this machine: these forms follow Homebrew's documented output.
"""

from __future__ import annotations

import re
from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.packages._tree import tree_lines

_NAME = re.compile(r"^[A-Za-z0-9@+._/-]+$")
_OUTDATED = re.compile(r"^(?P<name>\S+) \((?P<installed>[^)]*)\) (?:<|!=) (?P<current>\S+)(?: \[pinned at (?P<pin>[^\]]+)\])?$")


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("==>")]


def parse_list(text: str, pin: ParseInput) -> dict[str, Any]:
    versions = pin.tokens.has("--versions")
    packages = []
    for line in _lines(text):
        words = line.split()
        if not _NAME.match(words[0]) or (not versions and len(words) > 1):
            raise Unrecognized(f"unexpected brew list line: {line[:60]!r}")
        packages.append({"name": words[0], "versions": words[1:]} if versions else {"name": words[0]})
    return {"packages": packages}


def parse_outdated(text: str, pin: ParseInput) -> dict[str, Any]:
    packages = []
    for line in _lines(text):
        if m := _OUTDATED.match(line):
            entry: dict[str, Any] = {"name": m.group("name"), "installed": m.group("installed").split(", "),
                                     "current": m.group("current")}
            if m.group("pin"):
                entry["pinned"] = m.group("pin")
            packages.append(entry)
        elif _NAME.match(line):
            packages.append({"name": line, "installed": None, "current": None})
        else:
            raise Unrecognized(f"unexpected brew outdated line: {line[:60]!r}")
    return {"packages": packages}


def parse_deps_tree(text: str, pin: ParseInput) -> dict[str, Any]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise Unrecognized("empty tree")
    deps = [{"name": label.strip(), "depth": d} for d, label in tree_lines(lines[1:], 4)]
    return {"root": lines[0].strip(), "dependencies": deps}


def _p(pid: str, fn: Any, flags: dict[str, str], **kw: Any) -> Parser:
    return Parser(id=pid, parse=fn, rows_key=kw.pop("rows_key", "packages"), json_output=lambda a: any(
        x.startswith("--json") for x in a), contract=Contract(
        flags={**flags, "--json": "attached"},
        supports=lambda t: "--json output is passed through" if t.has("--json") else None, **kw))


_FORMULA = {"--formula": "bool", "--formulae": "bool", "--cask": "bool", "--casks": "bool", "-1": "bool"}
PARSER = Parser(
    id="brew", contract=Contract(),
    subcommands={
        "list": _p("brew-list", parse_list, {**_FORMULA, "--versions": "bool", "--full-name": "bool"}),
        "ls": _p("brew-list", parse_list, {**_FORMULA, "--versions": "bool", "--full-name": "bool"}),
        "leaves": _p("brew-leaves", parse_list, {"-r": "bool", "-p": "bool"}),
        "outdated": _p("brew-outdated", parse_outdated, {**_FORMULA, "-v": "bool", "--verbose": "bool",
                                                         "--greedy": "bool"}),
        "deps": _p("brew-deps", parse_deps_tree, {"--tree": "bool", "--installed": "bool"}, rows_key="dependencies",
                   required=(("--tree",),), hint=lambda a: [*a, "--tree"]),
    },
    os=frozenset({"macos", "linux"}),
    examples=(("list", "--versions"), ("outdated", "--verbose"), ("info", "--json=v2", "git")),
)
