"""pnpm ls / list — top-level packages per section, nested rows drawn with glyphs.

Schema::

    {"root": {"name", "version"?, "path"?} | None,
     "dependencies": [{"name", "version", "depth": int, "section": "dependencies"|
                       "devDependencies"|"optionalDependencies"|...}]}

pnpm prints ``name version`` (a space, not ``@``); a section header (``dependencies:``) starts
each group; the ``Legend:`` line is noise. ``--json`` passes through.
"""

from __future__ import annotations

import re
from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.packages._tree import split_at_version, tree_lines

_SECTION = re.compile(r"^(\w+Dependencies|dependencies):\s*$")
_NOISE = re.compile(r"^Legend:")


def parse(text: str, pin: ParseInput) -> dict[str, Any]:
    root: dict[str, Any] | None = None
    deps: list[dict[str, Any]] = []
    section = None
    for line in text.splitlines():
        if not line.strip() or _NOISE.match(line):
            continue
        if m := _SECTION.match(line):
            section = m.group(1)
            continue
        if section is None:
            spec, _, path = line.strip().partition(" ")
            name, version = split_at_version(spec)
            root = {"name": name, "version": version, **({"path": path} if path else {})}
            continue
        nested = list(tree_lines([line], 2))
        depth, label = nested[0] if nested else (1, line.strip())
        parts = label.split()
        if len(parts) < 2:
            raise Unrecognized(f"expected 'name version': {line.strip()[:60]!r}")
        deps.append({"name": parts[0], "version": parts[1], "depth": depth, "section": section})
    if not deps and root is None:
        raise Unrecognized("no packages")
    return {"root": root, "dependencies": deps}


PARSER = Parser(
    id="pnpm", contract=Contract(),
    subcommands={k: Parser(
        id="pnpm-ls", parse=parse, rows_key="dependencies", row_fields=("name", "version", "depth", "section"),
        noise=_NOISE.pattern, json_output=lambda a: "--json" in a,
        contract=Contract(flags={"--depth": "value", "--json": "bool", "--long": "bool", "--prod": "bool",
                                 "-P": "bool", "--dev": "bool", "-D": "bool", "-r": "bool", "--recursive": "bool",
                                 "-g": "bool", "--global": "bool", "--parseable": "bool"},
                          supports=lambda t: "--json/--long/--parseable change the output"
                          if t.has("--json", "--long", "--parseable") else None,
                          hint=lambda a: [x for x in a if x not in ("--long", "--parseable")] + ["--json"]))
        for k in ("ls", "list")},
    examples=(("ls",), ("ls", "--depth", "2")),
)
