"""``find`` — one path per line, or NUL-separated records with ``-print0``.

Schema::

    {paths: [str], errors?: [str], warnings?: [str], hint_args?: [str]}

Paths are kept byte-exact (no trimming: ``'a '`` keeps its space).  With ``-print0`` records are
split on NUL and names containing newlines come out exactly.  Without it, a line that does not
start with one of the starting points cannot be a new result (every result starts with one), so
it continues the path above — the join is reported in ``warnings`` with a ``-print0`` hint —
unless it is a ``find: …`` diagnostic (stderr merged into a saved capture), kept in ``errors``.

``-printf FORMAT`` (the only output action) is read by its format (``_findfmt.py``): each
directive a typed field of a row in ``entries`` (``path``, ``name``, ``size_bytes``,
``mode_octal``, ``modified_at`` …); ``paths`` then holds each row's ``%p`` (empty when the
format has none).  Why a second list and not objects in ``paths``: one schema for every form —
callers of the plain and ``-print0`` forms keep reading ``paths`` as strings, and the typed
fields of a format have a home that exists only when a format asked for them.  ``-ls`` is read
by its fixed layout into the same ``entries`` (``inode``, ``blocks_1k``, ``permissions``,
``links``, ``owner``, ``group``, ``size_bytes`` or ``device_type``, ``modified_raw`` and
``modified_at`` — minutes, the year inferred as ``ls`` does — ``path``, ``target``): find escapes
every space, newline and unprintable byte of a name (``\\ ``, ``\\n``, ``\\377``), so the names
are exact and a symlink's `` -> `` is the one unescaped one.  ``-exec``, ``-fprint`` … and
``-printf``/``-ls`` beside another action remain outside the contract.

Schema (``-printf``)::

    {paths: [str], entries: [{path?, relative_path?, name?, directory?, target?: str,
     size_bytes?, inode?, links?, uid?, gid?, blocks_1k?, blocks_512?, depth?: int,
     mode_octal?, permissions?, type?, target_type?, owner?, group?: str,
     modified_at?, accessed_at?, changed_at?: str (ISO 8601 UTC)}]}
"""

from __future__ import annotations

from itertools import repeat

from pydantic import BaseModel, ConfigDict

from parism.argv.tokenize import Tokens
from parism.parsers.contract import UNIX_OS, Contract, ParseInput, Parser, Unsupported
from parism.parsers.fs import _findfmt
from parism.parsers.fs._common import split_lines

_VALUE = ("-name -iname -type -xtype -path -ipath -wholename -iwholename -size -mtime -mmin "
          "-atime -amin -ctime -cmin -newer -anewer -cnewer -user -group -uid -gid -perm -regex -iregex -regextype "
          "-links -inum -samefile -lname -ilname -used -fstype")
_BOOL = ("-empty -print -print0 -not -o -a -and -or -prune -P -L -H -true -false -nouser -nogroup -xdev -mount "
         "-follow -depth -daystart -noleaf -readable -writable -executable -quit")
FLAGS: dict[str, str] = {**{f: "data" for f in _VALUE.split()}, **{f: "bool" for f in _BOOL.split()},
                         "-printf": "data", "-ls": "bool",
                         "-maxdepth": "number", "-mindepth": "number"}  # find refuses another value


class FindResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    paths: list[str]
    entries: list[dict[str, str | int]] | None = None
    errors: list[str] | None = None
    warnings: list[str] | None = None
    hint_args: list[str] | None = None


# output-changing actions → how many arguments follow them (-exec … runs to ';' or '+')
_ACTIONS = {"-ls": 0, "-print": 0, "-printf": 1, "-fprint": 1, "-fprint0": 1, "-fls": 1, "-fprintf": 2}
_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _hint(args: list[str]) -> list[str]:
    """The same search printing NUL-separated paths: each output action goes *with its
    arguments* (``-printf FORMAT`` is one unit — the format is not a starting point)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in _ACTIONS:
            i += 1 + _ACTIONS[a]
        elif a in _EXEC:
            i += 1
            while i < len(args) and args[i] not in (";", "+"):
                i += 1
            i += 1
        else:
            out.append(a)
            i += 1
    return [*out, "-print0"] if "-print0" not in out else out


def _supports(tokens: Tokens) -> str | None:
    printf = tokens.values("-printf")
    if len(printf) > 1:
        return "more than one -printf"
    if printf and tokens.has("-print", "-print0", "-ls"):
        return "-printf beside -print/-print0/-ls (their records interleave)"
    if tokens.has("-ls") and (tokens.has("-print", "-print0") or sum(t.name == "-ls" for t in tokens.flags) > 1):
        return "-ls beside another output action (their records interleave)"
    return None


CONTRACT = Contract(flags=FLAGS, single_dash_long=True, hint=_hint, supports=_supports)


def _printf(text: str, pin: ParseInput, fmt_text: str) -> dict[str, object]:
    fmt = _findfmt.compile_format(fmt_text)
    if isinstance(fmt, str):
        hint = None
        if fmt_text.endswith("\\n"):
            i = pin.sub_args.index(fmt_text) if fmt_text in pin.sub_args else -1
            if i >= 0:
                hint = [*pin.sub_args[:i], _findfmt.nul_terminated(fmt_text), *pin.sub_args[i + 1:]]
        raise Unsupported(f"find -printf: {fmt}", hint_args=hint if hint is not None else _hint(pin.sub_args))
    rows = _findfmt.parse(text, fmt)
    return {"paths": [str(r["path"]) for r in rows if "path" in r], "entries": rows}


def _starts(pin: ParseInput) -> list[str]:
    """Starting points: positionals before the first expression token (default ``.``)."""
    first = min((t.index for t in pin.tokens.tokens if t.kind != "positional" and t.name not in ("-P", "-L", "-H")),
                default=len(pin.sub_args))
    starts = [t.text for t in pin.tokens.positionals if t.index < first and t.text not in ("!", "(", ")")]
    return starts or ["."]


def _first_odd(lines: list[str], prefixes: tuple[str, ...], exact: frozenset[str]) -> int | None:
    """Index of the first line that is not a result (None: every line is one, the usual case).

    The prefix test runs at C speed (``map`` over ``str.startswith``); only the lines that fail
    it (a bare starting point such as ``.``, diagnostics, continued names) are looked at here."""
    hits = list(map(str.startswith, lines, repeat(prefixes)))
    i = 0
    for _ in range(hits.count(False)):
        i = hits.index(False, i)
        if lines[i] not in exact:
            return i
        i += 1
    return None


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    printf = pin.tokens.values("-printf")
    if printf:
        return _printf(text, pin, printf[0])
    if pin.tokens.has("-ls"):
        rows = _findfmt.parse_ls(text, pin.now_year)
        return {"paths": [str(r["path"]) for r in rows], "entries": rows}
    if pin.tokens.has("-print0"):
        records = text.split("\0")
        if records and records[-1] == "":
            records.pop()
        return {"paths": records}
    starts = _starts(pin)
    exact = frozenset(starts)
    prefixes = tuple(s if s.endswith("/") else s + "/" for s in starts)
    lines = split_lines(text)
    first_odd = _first_odd(lines, prefixes, exact)
    if first_odd is None:
        return {"paths": lines}
    paths = lines[:first_odd]
    errors: list[str] = []
    joined = 0
    more: list[str] = []  # continuation lines of paths[-1], joined once (not once per line)
    for line in lines[first_odd:]:
        if line.startswith(prefixes) or line in exact:
            if more:
                paths[-1] = "\n".join([paths[-1], *more])
                more = []
            paths.append(line)
        elif line.startswith("find: "):
            errors.append(line)
        elif paths:
            more.append(line)
            joined += 1
        else:
            paths.append(line)
    if more:
        paths[-1] = "\n".join([paths[-1], *more])
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
    evidence=True,
    contract=CONTRACT,
    parse=parse,
    schema=FindResult,
    rows_key="paths",
    os=UNIX_OS,
    examples=((".",), (".", "-name", "*.py"), (".", "-type", "f", "-print0"), ("/tmp", "-maxdepth", "1")),
)
