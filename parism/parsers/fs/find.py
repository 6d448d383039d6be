"""``find`` — one path per line, or NUL-separated records with ``-print0``.

Schema::

    {paths: [str], errors?: [str], warnings?: [str], hint_args?: [str]}

Paths are kept byte-exact (no trimming: ``'a '`` keeps its space).  With ``-print0`` records are
split on NUL and names containing newlines come out exactly.  Without it, a line that does not
start with one of the starting points cannot be a new result (every result starts with one), so
it continues the path above — the join is reported in ``warnings`` with a ``-print0`` hint —
unless it is a ``find: …`` diagnostic (stderr merged into a saved capture), kept in ``errors``.
Output-changing actions (``-ls``, ``-printf``, ``-exec`` …) are outside the contract.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from parism.parsers.contract import Contract, ParseInput, Parser, UNIX_OS
from parism.parsers.fs._common import split_lines

_VALUE = ("-name -iname -type -xtype -maxdepth -mindepth -path -ipath -wholename -iwholename -size -mtime -mmin "
          "-atime -amin -ctime -cmin -newer -anewer -cnewer -user -group -uid -gid -perm -regex -iregex -regextype "
          "-links -inum -samefile -lname -ilname -used -fstype")
_BOOL = ("-empty -print -print0 -not -o -a -and -or -prune -P -L -H -true -false -nouser -nogroup -xdev -mount "
         "-follow -depth -daystart -noleaf -readable -writable -executable -quit")
FLAGS: dict[str, str] = {**{f: "data" for f in _VALUE.split()}, **{f: "bool" for f in _BOOL.split()}}


class FindResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    paths: list[str]
    errors: list[str] | None = None
    warnings: list[str] | None = None
    hint_args: list[str] | None = None


CONTRACT = Contract(flags=FLAGS, single_dash_long=True,
                    hint=lambda a: [x for x in a if x not in ("-ls", "-fls", "-printf", "-fprint")] + ["-print0"])


def _starts(pin: ParseInput) -> list[str]:
    """Starting points: positionals before the first expression token (default ``.``)."""
    first = min((t.index for t in pin.tokens.tokens if t.kind != "positional" and t.name not in ("-P", "-L", "-H")),
                default=len(pin.sub_args))
    starts = [t.text for t in pin.tokens.positionals if t.index < first and t.text not in ("!", "(", ")")]
    return starts or ["."]


def _is_result(line: str, starts: list[str]) -> bool:
    return any(line == s or line.startswith(s if s.endswith("/") else s + "/") for s in starts)


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    if pin.tokens.has("-print0"):
        records = text.split("\0")
        if records and records[-1] == "":
            records.pop()
        return {"paths": records}
    starts = _starts(pin)
    paths: list[str] = []
    errors: list[str] = []
    joined = 0
    for line in split_lines(text):
        if line.startswith("find: ") and not _is_result(line, starts):
            errors.append(line)
        elif paths and not _is_result(line, starts):
            paths[-1] = f"{paths[-1]}\n{line}"
            joined += 1
        else:
            paths.append(line)
    out: dict[str, object] = {"paths": paths}
    if errors:
        out["errors"] = errors
    if joined:
        out["warnings"] = [f"names_with_newlines: {joined} line(s) do not start with a starting point "
                           "and were joined to the path above; rerun with -print0 to read names exactly"]
        out["hint_args"] = [*pin.sub_args, "-print0"]
    return out


PARSER = Parser(
    id="find",
    contract=CONTRACT,
    parse=parse,
    schema=FindResult,
    rows_key="paths",
    os=UNIX_OS,
    examples=((".",), (".", "-name", "*.py"), (".", "-type", "f", "-print0"), ("/tmp", "-maxdepth", "1")),
)
