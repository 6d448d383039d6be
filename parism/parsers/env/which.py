"""``which``: where commands are found on PATH.

Schema: ``{paths: [str], not_found?: [str]}``.

``which`` prints one path per line for every name it finds (all matches with ``-a``) and nothing
on stdout for a name it does not find (GNU which writes its "no X in (...)" note to stderr).
``not_found`` lists the argument names that no printed path ends with.
"""

from __future__ import annotations

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.text._common import split_lines


class WhichResult(BaseModel):
    paths: list[str]
    not_found: list[str] | None = None


def _names_of(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def parse(text: str, pin: ParseInput) -> WhichResult:
    paths = [ln for ln in split_lines(text)[0] if ln.strip()]
    for p in paths:
        if "/" not in p and "\\" not in p:
            raise Unrecognized(f"which: expected a path, got {p[:80]!r}")
    if pin.tokens.has("-s"):
        return WhichResult(paths=paths)  # -s prints nothing either way: found or not is the exit status
    found = {_names_of(p) for p in paths}
    missing = [t.text for t in pin.tokens.positionals if _names_of(t.text) not in found]
    return WhichResult(paths=paths, not_found=missing or None)


PARSER = Parser(
    id="which",
    contract=Contract(flags={"-a": "bool", "-s": "bool"}, min_positionals=1),
    parse=parse,
    schema=WhichResult,
    rows_key="paths",
    examples=(("python3",), ("-a", "python3")),
)
