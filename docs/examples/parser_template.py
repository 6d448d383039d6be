"""``CMD`` — one line saying which forms of CMD this parser reads.

Copy this file to ``parism/parsers/<domain>/<cmd>.py`` and follow docs/adding-a-parser.md.

Schema::

    {rows: [{name, size_bytes?: int, kind}]}
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized

# Every flag the parser reads (or refuses through ``supports``), with the kind the program
# gives it: bool, value (path/data/url: a value too), number, attached, count. The guard's
# policy for the command must read them alike (tests/unit/test_policy_contract.py).
FLAGS: dict[str, str] = {"-a": "bool", "-w": "number"}
HEADER = ("NAME", "SIZE", "KIND")


class Row(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    size_bytes: int | None = None
    kind: str


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rows: list[Row]


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines and tuple(lines[0].split()) == HEADER:
        lines = lines[1:]
    rows: list[dict[str, object]] = []
    for line in lines:
        parts = line.split()
        if len(parts) != 3:
            raise Unrecognized(f"not a CMD row: {line[:80]!r}")  # never a silent {lines: [...]}
        name, size, kind = parts
        row: dict[str, object] = {"name": name, "kind": kind}
        if size.isdigit():
            row["size_bytes"] = int(size)
        rows.append(row)
    return {"rows": rows}


PARSER = Parser(
    id="cmd",  # the command's name; a subcommand's id starts with it ("cmd-list")
    contract=Contract(flags=FLAGS, max_positionals=None),
    parse=parse,
    schema=Result,
    rows_key="rows",
    row_fields=("name", "size_bytes", "kind"),
    header_lines=1,
    os=frozenset({"linux"}),
    examples=((), ("-a",)),
    # the per-command facts, all optional (docs/adding-a-parser.md "What else a parser declares"):
    # informative_exits={1: "nothing matched"}, evidence=True, lean=Lean(derived={...}),
    # packages={"*": "cmd-utils", "dnf": "cmd"}, prints_always=always, json_output=...
)
