"""``tail``: the last lines of files. Schema: see ``parism.parsers.text._content``.

Accepted: -n/--lines [+]N, -c/--bytes [+]N, -NUM, -q/--quiet/--silent, -v/--verbose, any files.
Never accepted: -f/-F/--follow (it does not terminate; the guard refuses it too), -z.
"""

from __future__ import annotations

from parism.parsers.contract import Contract, Parser
from parism.parsers.hints import drop_flags
from parism.parsers.text._content import Content, parse_sections
from parism.parsers.text.head import FLAGS, VALUES

PARSER = Parser(
    id="tail",
    contract=Contract(
        flags=FLAGS,
        values=VALUES,
        numeric_flag=True,
        hint=lambda args: drop_flags(args, {"-f", "-F", "--follow", "--retry", "-s", "--sleep-interval",
                                            "--pid", "-z", "--zero-terminated"}),
    ),
    parse=lambda text, pin: parse_sections(text, pin),
    schema=Content,
    rows_key="lines",
    examples=(("-n", "50", "app.log"), ("-n", "+10", "data.csv")),
)
