"""``git branch``: plain, ``-v`` and ``-vv`` listings (local, ``-r`` and ``-a``).

Schema::

    {branches: [{name: str, current: bool, detached?: true, worktree?: true, hash?: str,
                 upstream?: str, ahead?: int, behind?: int, gone?: true, message?: str,
                 points_to?: str}]}

The first two columns are the marker (``*`` current, ``+`` checked out in another worktree).
``--show-current`` gives one row (none when HEAD is detached).
A detached HEAD row ``(HEAD detached at abc)`` is kept (``detached: true``, name as printed).
The ``[...]`` block after the hash is read as upstream information only when it has that
form — ``-v``: ``[ahead N, behind M]``/``[gone]``; ``-vv``: ``[<upstream>]`` or
``[<upstream>: ahead N…]`` with an upstream that contains ``/`` or is followed by ``:`` — so a
commit message that starts with ``[WIP]`` stays the message.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.hints import drop_flags
from parism.parsers.text._common import split_lines


class Branch(BaseModel):
    name: str
    current: bool
    detached: bool | None = None
    worktree: bool | None = None
    hash: str | None = None
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    gone: bool | None = None
    message: str | None = None
    points_to: str | None = None


class BranchResult(BaseModel):
    branches: list[Branch]


_TRACK = re.compile(r"^(?:ahead (\d+)(?:, behind (\d+))?|behind (\d+)|gone)$")
_HASH = re.compile(r"^([0-9a-f]{4,64})(?: (.*))?$")


def _tracking(block: str, very_verbose: bool, b: Branch) -> bool:
    """Read ``[…]`` contents into ``b``; False when it is not an upstream block."""
    upstream, colon, track = block.partition(": ") if very_verbose else ("", "", block)
    if very_verbose and not colon:
        upstream, track = block, ""
        if "/" not in upstream or " " in upstream:
            return False
    elif very_verbose and (not upstream or " " in upstream):
        return False
    m = _TRACK.match(track) if track else None
    if track and m is None:
        return False
    b.upstream = upstream or None
    if m is not None and track == "gone":
        b.gone = True
    elif m is not None:
        b.ahead = int(m.group(1) or 0)
        b.behind = int(m.group(2) or m.group(3) or 0)
    elif upstream:
        b.ahead, b.behind = 0, 0
    return True


def _row(line: str, verbose: bool, very_verbose: bool) -> Branch:
    marker, rest = line[:2], line[2:]
    if marker not in ("* ", "  ", "+ "):
        raise Unrecognized(f"git branch: unexpected line {line[:80]!r}")
    if rest.startswith("("):
        end = rest.find(")")
        if end < 0:
            raise Unrecognized(f"git branch: unclosed '(' in {line[:80]!r}")
        name, rest = rest[:end + 1], rest[end + 1:].lstrip(" ")
    else:
        name, _, rest = rest.partition(" ")
        rest = rest.lstrip(" ")
    b = Branch(name=name, current=marker == "* ", worktree=True if marker == "+ " else None,
               detached=True if name.startswith("(") else None)
    if rest.startswith("-> "):
        b.points_to = rest[3:]
        return b
    if not verbose:
        if rest:
            raise Unrecognized(f"git branch: unexpected text after the name in {line[:80]!r}")
        return b
    m = _HASH.match(rest)
    if m is None:
        raise Unrecognized(f"git branch -v: expected a commit hash in {line[:80]!r}")
    b.hash, msg = m.group(1), m.group(2) or ""
    if msg.startswith("["):
        end = msg.find("]")
        if end > 0 and _tracking(msg[1:end], very_verbose, b):
            msg = msg[end + 1:].lstrip(" ")
    b.message = msg
    return b


def parse(text: str, pin: ParseInput) -> BranchResult:
    t = pin.tokens
    if t.has("--show-current"):
        names = [ln for ln in split_lines(text)[0] if ln]
        if len(names) > 1 or any(" " in n for n in names):
            raise Unrecognized("git branch --show-current: expected one branch name")
        return BranchResult(branches=[Branch(name=n, current=True) for n in names])
    count = sum(1 for tok in t.flags if tok.name in ("-v", "--verbose"))  # -vv is two tokens
    verbose, very = count >= 1, count >= 2
    return BranchResult(branches=[_row(ln, verbose, very) for ln in split_lines(text)[0] if ln])


PARSER = Parser(
    id="git-branch",
    evidence=True,
    contract=Contract(
        flags={f: "bool" for f in ("-v", "--verbose", "--no-abbrev", "--no-color", "--list", "-l", "-a",
                                    "--all", "-r", "--remotes", "--no-column", "--omit-empty",
                                    "--show-current")}
        | {"--merged": "attached", "--no-merged": "attached", "--contains": "attached",
           "--no-contains": "attached", "--points-at": "value", "--sort": "value", "--color": "attached",
           "--abbrev": "attached"},
        values={"--color": "never|"},
        supports=lambda t: None if not t.positionals or t.has("--list", "-l") else "branch names need --list",
        hint=lambda args: drop_flags(args, {"--column", "--format", "--color"}),
    ),
    parse=parse,
    schema=BranchResult,
    rows_key="branches",
    row_fields=tuple(Branch.model_fields),
    examples=((), ("-vv",), ("-a",)),
)
