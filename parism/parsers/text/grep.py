"""``grep``: matching lines, counts or file names (GNU and BSD grep).

Schema::

    {matches: [{file?: str, line?: int, byte_offset?: int, text?: str, context?: true,
                count?: int, binary?: true}]}

One row kind per output form, chosen from the flags: match and context lines (``text``;
``context: true`` marks ``-A/-B/-C`` lines), ``-c`` counts (``count``), ``-l``/``-L`` names
(``file`` only), and binary notices (``binary: true``). ``file`` is present only when grep
prints names (``-H``, ``-r``, several files; never with ``-h``).

File names may contain ``:`` and ``-``: names given as arguments are matched first; ``-Z``
(``--null``) ends each name with NUL and is always exact; otherwise the first ``:N:`` field
(with ``-n``) or the first ``:`` splits, and context lines reuse the names of the match lines
of their group.  ``--`` lines between context groups are separators, not data. With ``-Z`` and
no ``-n``/``-b``, context lines cannot be told from matches (no ``context`` key). On macOS and
FreeBSD ``-Z`` means "decompress"; ``--null`` is the NUL form there.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.hints import drop_flags
from parism.parsers.table import to_int
from parism.parsers.text._common import split_lines, split_records

_BINARY = re.compile(r"^(?:grep: (.*): binary file matches|Binary file (.*) matches)$")
CONTEXT_FLAGS = ("-A", "-B", "-C", "--after-context", "--before-context", "--context", "-NUM")


class GrepRow(BaseModel):
    file: str | None = None
    line: int | None = None
    byte_offset: int | None = None
    text: str | None = None
    context: bool | None = None
    count: int | None = None
    binary: bool | None = None


class GrepResult(BaseModel):
    matches: list[GrepRow]


Row = dict[str, Any]
"""A ``GrepRow`` as plain JSON (keys in field order, None left out): large outputs would
otherwise spend most of their time building and dumping pydantic rows."""
_SEP_RX = {":": re.compile(":"), ":-": re.compile("[:-]")}


class _Form:
    """What the flags say about each output line."""

    def __init__(self, pin: ParseInput):
        t = pin.tokens
        # BSD grep (macOS, FreeBSD): -Z means --decompress; only --null ends names with NUL there
        self.null = t.has("--null") or (t.has("-Z") and pin.os in ("linux", "windows"))
        self.numbered = t.has("-n", "--line-number")
        self.offsets = t.has("-b", "--byte-offset")
        self.context = t.has(*CONTEXT_FLAGS)
        pos = [p.text for p in t.positionals]
        files = pos if t.has("-e", "--regexp", "-f", "--file") else pos[1:]
        recursive = t.has("-r", "-R", "--recursive", "--dereference-recursive")
        self.named = t.has("-H", "--with-filename") or (
            not t.has("-h", "--no-filename") and (recursive or len(files) > 1))
        # longest first so that "a:b" wins over "a"
        self.known = sorted({f for f in files if f != "-"}, key=len, reverse=True)


_FIELD = re.compile(r"[0-9]+(?=[:-])")


def _prefix_fields(rest: str, form: _Form, pos: int = 0) -> tuple[list[int], str, str] | None:
    """Read ``N<sep>`` fields (line number, byte offset) at ``rest[pos:]`` (no copy: this is
    tried at many positions of a line).

    Returns (numbers, separator, text) where separator is ':' (match) or '-' (context). ASCII
    digits are read by one regex; any other text takes the character loop (``str.isdigit``)."""
    want = int(form.numbered) + int(form.offsets)
    nums: list[int] = []
    sep = ""
    for _ in range(want):
        m = _FIELD.match(rest, pos)
        if m is not None:
            end = m.end()
        else:
            end = pos
            while end < len(rest) and rest[end].isdigit():
                end += 1
        if end == pos or end >= len(rest) or rest[end] not in ":-":
            return None
        if sep and rest[end] != sep:
            return None
        sep = rest[end]
        nums.append(int(rest[pos:end]))
        pos = end + 1
    return nums, sep, rest[pos:]


def _split_name(line: str, form: _Form, seps: str, group_files: list[str]) -> tuple[str, str] | None:
    """Split ``name<sep>rest`` (rest keeps the separator) without -Z: names of the group and
    of the arguments first, then the first separator after which the number fields read."""
    numbers = form.numbered or form.offsets
    for name in [*group_files, *form.known]:
        if line.startswith(name) and len(line) > len(name) and line[len(name)] in seps:
            if not numbers or _prefix_fields(line, form, len(name) + 1):
                return name, line[len(name):]
    for m in _SEP_RX[seps].finditer(line):
        i = m.start()
        if not numbers or _prefix_fields(line, form, i + 1):
            return line[:i], line[i:]
    return None


def _row(file: str | None, rest: str, form: _Form, lead_sep: bool) -> Row | None:
    """Build a row from the text after the name; ``lead_sep``: rest starts with ':' or '-'."""
    sep = ""
    if lead_sep:
        sep, rest = rest[0], rest[1:]
    nums: list[int] = []
    if form.numbered or form.offsets:
        got = _prefix_fields(rest, form)
        if got is None:
            return None
        nums, sep, rest = got
    row: Row = {} if file is None else {"file": file}
    if form.numbered:
        row["line"] = nums.pop(0)
    if form.offsets:
        row["byte_offset"] = nums.pop(0)
    row["text"] = rest
    if sep == "-":
        row["context"] = True
    return row


def _groups(lines: list[str], form: _Form) -> list[list[str]]:
    """Context output comes in groups separated by ``--``; other output is one group."""
    if not form.context:
        return [lines]
    groups: list[list[str]] = [[]]
    for line in lines:
        if line == "--":
            groups.append([])
        else:
            groups[-1].append(line)
    return groups


def _group_files(group: list[str], form: _Form) -> list[str]:
    """Names of the match (``:``) lines of a context group, to split its context lines."""
    if not (form.context and form.named) or form.null:
        return []
    names: list[str] = []
    for line in group:
        split = _split_name(line, form, ":", [])
        if split and split[0] not in names:
            names.append(split[0])
            if len(names) >= 8:
                break
    return names


def _parse_line(line: str, form: _Form, group_files: list[str]) -> Row:
    b = _BINARY.match(line)
    if b:
        name = b.group(1) or b.group(2)
        return {"binary": True} if name is None else {"file": name, "binary": True}
    file: str | None = None
    rest = line
    if form.named and form.null:
        file, nul, rest = line.partition("\0")
        if not nul:
            raise Unrecognized(f"grep: expected a NUL after the file name: {line[:80]!r}")
    elif form.named:
        split = _split_name(line, form, ":-" if form.context else ":", group_files)
        if split is None:
            raise Unrecognized(f"grep: cannot find the file name in {line[:80]!r}")
        file, rest = split
    row = _row(file, rest, form, lead_sep=form.named and not form.null)
    if row is None:
        raise Unrecognized(f"grep: expected line-number/offset fields in {line[:80]!r}")
    return row


def _parse_lines(lines: list[str], form: _Form) -> list[Row]:
    rows: list[Row] = []
    for group in _groups(lines, form):
        files = _group_files(group, form)
        rows.extend(_parse_line(line, form, files) for line in group)
    return rows


def _parse_counts(text: str, form: _Form) -> list[Row]:
    rows: list[Row] = []
    for line in split_lines(text)[0]:
        if not line:
            continue
        if form.named:
            name, sep, num = (line.partition("\0") if form.null else line.rpartition(":"))
            count = to_int(num) if sep else None
            if count is None:
                raise Unrecognized(f"grep -c: expected 'file:count' in {line[:80]!r}")
            rows.append({"file": name, "count": count})
        else:
            count = to_int(line)
            if count is None:
                raise Unrecognized(f"grep -c: expected a count in {line[:80]!r}")
            rows.append({"count": count})
    return rows


def parse(text: str, pin: ParseInput) -> dict[str, list[Row]]:
    form = _Form(pin)
    t = pin.tokens
    if t.has("-l", "--files-with-matches", "-L", "--files-without-match"):
        names = split_records(text) if form.null else split_lines(text)[0]
        return {"matches": [{"file": n} for n in names if n]}
    if t.has("-c", "--count"):
        return {"matches": _parse_counts(text, form)}
    return {"matches": _parse_lines(split_lines(text)[0], form)}


_BOOL = (
    "-i -y --ignore-case --no-ignore-case -v --invert-match -w --word-regexp -x --line-regexp "
    "-n --line-number -c --count -l --files-with-matches -L --files-without-match -H --with-filename "
    "-h --no-filename -r --recursive -R --dereference-recursive -o --only-matching -s --no-messages "
    "-q --quiet --silent -b --byte-offset -Z --null -a --text -I -E --extended-regexp -F --fixed-strings "
    "-G --basic-regexp -P --perl-regexp -U --binary --line-buffered"
).split()
FLAGS: dict[str, str] = {f: "bool" for f in _BOOL} | {
    "-e": "data", "--regexp": "data", "-f": "path", "--file": "path",
    "-A": "number", "-B": "number", "-C": "number",
    "--after-context": "number", "--before-context": "number", "--context": "number",
    "-m": "number", "--max-count": "number",
    "--include": "data", "--exclude": "data", "--exclude-dir": "data", "--exclude-from": "path",
    "--binary-files": "value", "--label": "value", "--color": "attached", "--colour": "attached",
}

PARSER = Parser(
    id="grep",
    evidence=True,
    informative_exits={1: "no line matched"},
    contract=Contract(
        flags=FLAGS,
        values={"--color": "never|auto|", "--colour": "never|auto|",
                "--binary-files": "binary|text|without-match"},
        numeric_flag=True,
        supports=lambda t: None if (t.positionals or t.has("-e", "--regexp", "-f", "--file"))
        else "needs a pattern",
        hint=lambda args: drop_flags(args, {"-z", "--null-data", "-T", "--initial-tab", "--color", "--colour"}),
    ),
    parse=parse,
    schema=GrepResult,
    rows_key="matches",
    row_fields=("file", "line", "byte_offset", "text", "context", "count", "binary"),
    noise=r"^--$",
    examples=(("-rn", "TODO", "src"), ("-c", "error", "app.log"), ("-rlZ", "main", ".")),
)
