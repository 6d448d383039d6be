"""``pwd``: the working directory. Schema: ``{path: str}``.

Only the final newline is removed: a directory name may end in spaces (or contain a newline).
"""

from __future__ import annotations

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized


class PwdResult(BaseModel):
    path: str


def parse(text: str, pin: ParseInput) -> PwdResult:
    path = text[:-1] if text.endswith("\n") else text
    path = path[:-1] if path.endswith("\r") else path
    if not path.startswith(("/", "\\")) and not (len(path) > 2 and path[1] == ":"):
        raise Unrecognized(f"pwd: expected an absolute path, got {path[:80]!r}")
    return PwdResult(path=path)


PARSER = Parser(
    id="pwd",
    contract=Contract(flags={"-L": "bool", "-P": "bool"}, max_positionals=0),
    parse=parse,
    schema=PwdResult,
    examples=((), ("-P",)),
)
