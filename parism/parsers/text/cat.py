"""``cat``: file content as lines. Schema: see ``parism.parsers.text._content``.

Accepted: -n/--number and -b/--number-nonblank (lines become ``{number, text}``),
-s/--squeeze-blank, -u, any files. Display transforms (-A -E -T -v -e -t) change the
content itself and are out of range; the hint drops them.
"""

from __future__ import annotations

from parism.parsers.contract import Contract, ParseInput, Parser
from parism.parsers.hints import drop_flags
from parism.parsers.text._common import split_lines
from parism.parsers.text._content import Content, parse_numbered

DISPLAY = {"-A", "--show-all", "-E", "--show-ends", "-T", "--show-tabs", "-v", "--show-nonprinting",
           "-e", "-t"}


def parse(text: str, pin: ParseInput) -> Content:
    lines, crlf = split_lines(text)
    if pin.tokens.has("-n", "--number", "-b", "--number-nonblank"):
        return Content(lines=parse_numbered(lines), crlf=crlf or None)
    return Content(lines=lines, crlf=crlf or None)


PARSER = Parser(
    id="cat",
    contract=Contract(
        flags={"-n": "bool", "--number": "bool", "-b": "bool", "--number-nonblank": "bool",
               "-s": "bool", "--squeeze-blank": "bool", "-u": "bool"},
        hint=lambda args: drop_flags(args, DISPLAY),
    ),
    parse=parse,
    schema=Content,
    rows_key="lines",
    examples=(("README.md",), ("-n", "src/main.py")),
)
