"""``git branch``: plain, ``-v`` and ``-vv`` listings (local, ``-r`` and ``-a``).

Schema::

    {branches: [{name: str, current: bool, detached?: true, worktree?: true, hash?: str,
                 upstream?: str, ahead?: int, behind?: int, gone?: true, message?: str,
                 points_to?: str}]}

The first two columns are the marker (``*`` current, ``+`` checked out in another worktree).
``--show-current`` gives one row (none when HEAD is detached).
A detached HEAD row ``(HEAD detached at abc)`` is kept (``detached: true``, name as printed).

Which branch has an upstream is not read from the text: a subject may begin with
``[fake: ahead 5]``.  A run knows it from the configuration git read (``ParseInput.repo``,
``guard/git/upstream.py``): ``-vv`` prints ``[<upstream>…]`` exactly when the branch has an
upstream, so only a block that begins with one of the printed forms of that branch's real
upstream (``origin/main``, ``remotes/origin/main``, ``refs/remotes/origin/main`` — git shortens
it as far as it is unambiguous) is read as tracking; on any other branch (a remote-tracking row,
a detached HEAD, a branch without upstream) the whole text after the hash is the message.  A
tracking branch whose block is missing or malformed is ``unrecognized_output``; a branch whose
upstream the configuration cannot name (``RepoFacts.undecided``) with a message that starts
with ``[`` is ``unsupported_format`` (hint: ``-v`` without the ambiguity is not possible, so the
hint drops the verbosity).  ``-v`` prints only ``[ahead N, behind M]``/``[gone]`` and only when
the branch has an upstream that is not in sync: a branch without upstream never has a block;
on a tracking branch in sync a subject that begins with such a block would still be read as
one (use ``-vv``, which names the upstream).

Saved text (``parse_output``, no repository): the block is read by its form as before —
``-v``: ``[ahead N, behind M]``/``[gone]``; ``-vv``: ``[<upstream>]`` or ``[<upstream>: ahead N…]``
with an upstream that contains ``/`` or is followed by ``:`` — so ``[WIP]`` stays the message,
but a subject imitating tracking cannot be told apart without the repository.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, RepoFacts, Unrecognized, Unsupported
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


def short_forms(ref: str) -> tuple[str, ...]:
    """Every name git may print for the full ref ``ref`` (``shorten_unambiguous_ref`` picks the
    shortest that is unambiguous among its rev-parse rules)."""
    forms = [ref]
    for prefix in ("refs/", "refs/tags/", "refs/heads/", "refs/remotes/"):
        if ref.startswith(prefix) and len(ref) > len(prefix):
            forms.append(ref[len(prefix):])
    if ref.startswith("refs/remotes/") and ref.endswith("/HEAD") and len(ref) > len("refs/remotes//HEAD"):
        forms.append(ref[len("refs/remotes/"):-len("/HEAD")])
    return tuple(sorted(set(forms), key=len, reverse=True))


def _known(msg: str, ref: str, very_verbose: bool, b: Branch, line: str) -> str:
    """The message after the tracking block of a branch whose upstream is ``ref``."""
    if not very_verbose:  # -v: a block only when not in sync, never naming the upstream
        if msg.startswith("["):
            end = msg.find("]")
            if end > 0 and _TRACK.match(msg[1:end]):
                _tracking(msg[1:end], False, b)
                return msg[end + 1:].lstrip(" ")
        b.ahead, b.behind = 0, 0
        return msg
    for form in short_forms(ref):
        head = "[" + form
        if not msg.startswith(head):
            continue
        rest = msg[len(head):]
        if rest.startswith("]"):
            b.upstream, b.ahead, b.behind = form, 0, 0
            return rest[1:].lstrip(" ")
        if rest.startswith(": "):
            end = rest.find("]")
            m = _TRACK.match(rest[2:end]) if end > 0 else None
            if m is None:
                break
            _tracking(rest[2:end], False, b)
            b.upstream = form
            return rest[end + 1:].lstrip(" ")
    raise Unrecognized(f"git branch -vv: the branch '{b.name}' tracks '{ref}' but its line does not "
                       f"begin with that upstream: {line[:80]!r}")


def _row(line: str, verbose: bool, very_verbose: bool, facts: RepoFacts | None = None,
         remotes: str = "") -> Branch:
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
    if facts is not None:
        b.message = _by_facts(msg, b, facts, very_verbose, remotes, line)
        return b
    if msg.startswith("["):
        end = msg.find("]")
        if end > 0 and _tracking(msg[1:end], very_verbose, b):
            msg = msg[end + 1:].lstrip(" ")
    b.message = msg
    return b


def _by_facts(msg: str, b: Branch, facts: RepoFacts, very_verbose: bool, remotes: str, line: str) -> str:
    """The message of a ``-v``/``-vv`` row, with the tracking block read only where git prints
    one: on a local branch that has an upstream in the repository's configuration."""
    name = b.name
    if b.detached or remotes == "all":  # -r: every row is a remote-tracking branch
        return msg
    if remotes == "some" and name.startswith("remotes/"):
        local = name in facts.upstreams or name in facts.undecided
        if local and msg.startswith("["):  # a local 'remotes/x' and a remote both print so
            raise Unsupported(f"git branch -a: '{name}' names a local branch and a remote-tracking one",
                              hint_args=["-vv"])
        if not local:
            return msg
    if name in facts.undecided and msg.startswith("["):
        raise Unsupported(f"git branch -v: the upstream of '{name}' is not named by the repository's "
                          "configuration alone, so its '[…]' cannot be told from the message",
                          hint_args=[])
    ref = facts.upstreams.get(name)
    return msg if ref is None else _known(msg, ref, very_verbose, b, line)


def parse(text: str, pin: ParseInput) -> BranchResult:
    t = pin.tokens
    if t.has("--show-current"):
        names = [ln for ln in split_lines(text)[0] if ln]
        if len(names) > 1 or any(" " in n for n in names):
            raise Unrecognized("git branch --show-current: expected one branch name")
        return BranchResult(branches=[Branch(name=n, current=True) for n in names])
    count = sum(1 for tok in t.flags if tok.name in ("-v", "--verbose"))  # -vv is two tokens
    verbose, very = count >= 1, count >= 2
    remotes = ("all" if t.has("-r", "--remotes") and not t.has("-a", "--all")
               else "some" if t.has("-a", "--all") else "")
    return BranchResult(branches=[_row(ln, verbose, very, pin.repo, remotes)
                                  for ln in split_lines(text)[0] if ln])


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
