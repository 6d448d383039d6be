"""``env``: the environment as a name → value map.

Schema: ``{vars: {name: value}}`` in output order (a later duplicate wins).

Split at the first ``=`` only (values contain ``=``). A value may span several lines: a line
that does not start with ``NAME=`` continues the previous value (joined with ``\\n``).
``-0``/``--null`` output (NUL-terminated entries) is exact even for values containing a line
that looks like ``NAME=…``; it is the form to use when that matters.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.text._common import split_lines, split_records

_ENTRY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:%%)?)=")


class EnvResult(BaseModel):
    vars: dict[str, str]


def parse(text: str, pin: ParseInput) -> dict[str, dict[str, str]]:
    """The map is returned as is (an ``EnvResult`` would only copy it through pydantic)."""
    out: dict[str, str] = {}
    if pin.tokens.has("-0", "--null"):
        for rec in split_records(text):
            name, eq, value = rec.partition("=")
            if not eq or not name:
                raise Unrecognized(f"env -0: entry without '=': {rec[:80]!r}")
            out[name] = value
        return {"vars": out}
    last: str | None = None
    more: list[str] = []  # continuation lines of ``last``, joined once (a long value stays linear)
    for line in split_lines(text)[0]:
        m = _ENTRY.match(line)
        if m:
            if more and last is not None:
                out[last] = "\n".join([out[last], *more])
                more.clear()
            last = m.group(1)
            out[last] = line[m.end():]
        elif last is not None:
            more.append(line)
        elif line.strip():
            raise Unrecognized(f"env: expected NAME=value, got {line[:80]!r}")
    if more and last is not None:
        out[last] = "\n".join([out[last], *more])
    return {"vars": out}


PARSER = Parser(
    id="env",
    evidence=True,
    contract=Contract(
        flags={"-0": "bool", "--null": "bool", "-u": "value", "--unset": "value",
               "-i": "bool", "--ignore-environment": "bool"},
        positional_pattern=r"[^=]+=.*",
    ),
    parse=parse,
    schema=EnvResult,
    examples=((), ("-0",)),
)
