"""``head``: the first lines of files. Schema: see ``parism.parsers.text._content``.

Accepted: -n/--lines N, -c/--bytes N, -NUM, -q/--quiet/--silent, -v/--verbose, any files.
Not accepted: -z (NUL-terminated lines).
"""

from __future__ import annotations

from parism.parsers.contract import Contract, Parser
from parism.parsers.hints import drop_flags
from parism.parsers.text._content import Content, parse_sections

COUNT = r"[+-]?\d+[a-zA-Z]*"
FLAGS = {
    "-n": "value", "--lines": "value", "-c": "value", "--bytes": "value",
    "-q": "bool", "--quiet": "bool", "--silent": "bool", "-v": "bool", "--verbose": "bool",
}
VALUES = {"-n": COUNT, "--lines": COUNT, "-c": COUNT, "--bytes": COUNT}

PARSER = Parser(
    id="head",
    contract=Contract(
        flags=FLAGS,
        values=VALUES,
        numeric_flag=True,
        hint=lambda args: drop_flags(args, {"-z", "--zero-terminated"}),
    ),
    parse=lambda text, pin: parse_sections(text, pin),
    schema=Content,
    rows_key="lines",
    examples=(("-n", "20", "README.md"), ("-5", "a.txt", "b.txt")),
)
