"""``git status``: long format, short (``-s``), porcelain v1 (with/without ``-z``) and v2.

Schema (every form)::

    {branch?: str, detached?: true, detached_at?: str, detached_from?: str, no_commits?: true,
     upstream?: str, ahead?: int, behind?: int, upstream_gone?: true,
     entries: [{xy: str, index: str, worktree: str, path: str, orig_path?: str, quoted?: true}]}

``xy`` is the two-letter code of ``git status -s`` (``index`` + ``worktree``; ``??`` untracked,
``!!`` ignored); porcelain v2 keeps its ``.`` for "unchanged". The long format is mapped to the
same codes (a file in both "to be committed" and "not staged" is one entry ``MM``), so every
form yields the same path set. ``quoted`` marks a path that git printed C-quoted (now decoded).
Porcelain ``-z``: a rename's original path is the *next* NUL record; without ``-z`` a rename is
``orig -> new``, split at the last `` -> ``.
"""

from __future__ import annotations

import re

from parism.parsers.contract import Contract, Lean, ParseInput, Parser, Unrecognized
from parism.parsers.git._quote import split_arrow, unquote
from parism.parsers.git._status_model import StatusEntry, StatusResult
from parism.parsers.git.status_long import parse_long
from parism.parsers.hints import drop_flags
from parism.parsers.text._common import split_lines, split_records

_AB = re.compile(r"\[(?:(?:ahead (\d+))?(?:, )?(?:behind (\d+))?|(gone))\]$")


def _branch_header(head: str, res: StatusResult) -> None:
    """``## main...origin/main [ahead 1, behind 2]`` and its special forms."""
    if head.startswith("HEAD (no branch)"):
        res.branch, res.detached = "HEAD", True
        return
    for prefix in ("No commits yet on ", "Initial commit on "):
        if head.startswith(prefix):
            res.no_commits = True
            head = head[len(prefix):]
    name, _, rest = head.partition(" ")
    local, dots, upstream = name.partition("...")
    res.branch = local
    if dots:
        res.upstream = upstream
        m = _AB.search(rest)
        if m and m.group(3):
            res.upstream_gone = True
        else:
            res.ahead = int(m.group(1)) if m and m.group(1) else 0
            res.behind = int(m.group(2)) if m and m.group(2) else 0


def _entry(xy: str, path: str, orig: str | None = None, quoted: bool = False) -> StatusEntry:
    return StatusEntry(xy=xy, index=xy[0], worktree=xy[1], path=path, orig_path=orig, quoted=quoted or None)


def _short_line(line: str) -> StatusEntry:
    if len(line) < 4 or line[2] != " ":
        raise Unrecognized(f"git status: expected 'XY path', got {line[:80]!r}")
    xy, rest = line[:2], line[3:]
    if "R" in xy or "C" in xy:
        orig, new, q = split_arrow(rest)
        if orig:
            return _entry(xy, new, orig, q)
    path, q = unquote(rest)
    return _entry(xy, path, quoted=q)


def parse_short(text: str, pin: ParseInput) -> StatusResult:
    res = StatusResult(entries=[])
    if pin.tokens.has("-z", "--null"):
        recs = split_records(text)
        i = 0
        while i < len(recs):
            rec = recs[i]
            i += 1
            if rec.startswith("## "):
                _branch_header(rec[3:], res)
                continue
            if len(rec) < 4 or rec[2] != " ":
                raise Unrecognized(f"git status -z: expected 'XY path', got {rec[:80]!r}")
            xy = rec[:2]
            orig = None
            if ("R" in xy or "C" in xy) and i < len(recs):
                orig = recs[i]
                i += 1
            res.entries.append(_entry(xy, rec[3:], orig))
        return res
    for line in split_lines(text)[0]:
        if line.startswith("## "):
            _branch_header(line[3:], res)
        elif line:
            res.entries.append(_short_line(line))
    return res


def _v2_header(line: str, res: StatusResult) -> None:
    key, _, value = line[2:].partition(" ")
    if key == "branch.head":
        res.branch = "HEAD" if value == "(detached)" else value
        res.detached = True if value == "(detached)" else None
    elif key == "branch.oid" and value == "(initial)":
        res.no_commits = True
    elif key == "branch.upstream":
        res.upstream = value
    elif key == "branch.ab":
        a, _, b = value.partition(" ")
        res.ahead, res.behind = abs(int(a)), abs(int(b))


def parse_v2(text: str, pin: ParseInput) -> StatusResult:
    """Porcelain v2: ``1 XY sub mH mI mW hH hI path``, ``2 … Xscore path<TAB|NUL>orig``,
    ``u XY … path``, ``? path``, ``! path``, ``# branch.*`` headers."""
    res = StatusResult(entries=[])
    nul = pin.tokens.has("-z", "--null")
    recs = split_records(text) if nul else split_lines(text)[0]
    fields = {"1": 8, "2": 9, "u": 10}
    i = 0
    while i < len(recs):
        rec = recs[i]
        i += 1
        if not rec:
            continue
        kind = rec[0]
        if rec.startswith("# "):
            _v2_header(rec, res)
        elif kind in "?!" and rec[1:2] == " ":
            path, q = (rec[2:], False) if nul else unquote(rec[2:])
            res.entries.append(_entry(kind * 2, path, quoted=q))
        elif kind in fields:
            parts = rec.split(" ", fields[kind])
            if len(parts) != fields[kind] + 1 or len(parts[1]) != 2:
                raise Unrecognized(f"git status --porcelain=v2: bad record {rec[:80]!r}")
            xy, rest = parts[1], parts[-1]
            orig = None
            q = False
            if kind == "2":
                if nul:
                    orig = recs[i] if i < len(recs) else None
                    i += 1
                else:
                    rest, _, orig_text = rest.partition("\t")
                    orig, q_orig = unquote(orig_text)
                    q = q_orig
            path, q_path = (rest, False) if nul else unquote(rest)
            res.entries.append(_entry(xy, path, orig, q or q_path))
        else:
            raise Unrecognized(f"git status --porcelain=v2: unknown record {rec[:80]!r}")
    return res


def parse(text: str, pin: ParseInput) -> StatusResult:
    t = pin.tokens
    porcelain = t.values("--porcelain")
    if porcelain and porcelain[-1] in ("v2", "2"):
        return parse_v2(text, pin)
    if t.has("-s", "--short", "--porcelain"):
        return parse_short(text, pin)
    return parse_long(text)


PARSER = Parser(
    id="git-status",
    evidence=True,
    contract=Contract(
        flags={"-s": "bool", "--short": "bool", "--long": "bool", "-b": "bool", "--branch": "bool",
               "--porcelain": "attached", "-z": "bool", "--null": "bool", "-v": "bool", "--verbose": "bool",
               "-u": "attached", "--untracked-files": "attached", "--ignored": "attached",
               "--no-renames": "bool", "--find-renames": "attached", "--ahead-behind": "bool",
               "--no-ahead-behind": "bool", "--show-stash": "bool", "--no-column": "bool"},
        values={"--porcelain": "|v1|v2|1|2", "-u": "|no|normal|all", "--untracked-files": "|no|normal|all",
                "--ignored": "|traditional|no|matching", "--find-renames": r"|\d+%?"},
        exclusive=(("--long", "-s", "--short", "--porcelain"),),
        supports=lambda t: "-z needs --porcelain or -s" if t.has("-z", "--null") and not t.has(
            "-s", "--short", "--porcelain") else None,
        hint=lambda args: drop_flags(args, {"--column", "-z", "--null"}),
    ),
    parse=parse,
    schema=StatusResult,
    rows_key="entries",
    row_fields=("xy", "index", "worktree", "path", "orig_path", "quoted"),
    lean=Lean(derived={"index": "xy", "worktree": "xy"}),
    examples=((), ("--porcelain", "-b"), ("-sz",)),
)
