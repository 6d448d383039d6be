"""yarn (classic, v1) list — the tree printed by ``yarn list``.

Schema::

    {"dependencies": [{"name", "version": str|None, "depth": int, "range"?: true}]}

Nested rows often show the *requested* range (``is-odd@^0.1.2``) rather than a resolved version:
those get ``range: true`` so nobody mistakes a range for an installed version. The
``yarn list vX``/``Done in``/``warning`` lines are noise. yarn is build-profile only.
"""

from __future__ import annotations

import re
from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.packages._tree import split_at_version, tree_lines

_NOISE = re.compile(r"^(yarn list v|Done in |warning |info |\$ )")


def parse(text: str, pin: ParseInput) -> dict[str, Any]:
    lines = [ln for ln in text.splitlines() if ln.strip() and not _NOISE.match(ln)]
    deps = []
    for depth, label in tree_lines(lines, 3):
        name, version = split_at_version(label.strip().split(" ", 1)[0])
        entry: dict[str, Any] = {"name": name, "version": version, "depth": depth}
        if version and not re.match(r"^\d", version):
            entry["range"] = True
        deps.append(entry)
    if lines and not deps:
        raise Unrecognized("no tree rows")
    return {"dependencies": deps}


PARSER = Parser(
    id="yarn", contract=Contract(),
    subcommands={"list": Parser(
        id="yarn-list", parse=parse, rows_key="dependencies", row_fields=("name", "version", "depth", "range"),
        noise=_NOISE.pattern,
        contract=Contract(flags={"--depth": "value", "--pattern": "data", "--json": "bool"},
                          supports=lambda t: "--json prints NDJSON events, read it as JSON" if t.has("--json") else None,
                          hint=lambda a: [x for x in a if x != "--json"]))},
    examples=(("list", "--depth=0"),),
)
