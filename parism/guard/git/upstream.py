"""Each local branch's upstream, from the configuration git itself read (``RepoConfig.entries``).

``git branch -vv`` prints ``[<upstream>: ahead N] subject``, and a subject may begin with text of
that form; the text alone cannot tell them apart.  git prints the block exactly when the branch
has an upstream (``%(if)%(upstream)`` in its format), and the upstream is a function of the
configuration: ``branch.<name>.remote`` and the first ``branch.<name>.merge``, the merge ref
mapped through the remote's ``fetch`` refspecs (git's ``remote.c``: ``set_merge``,
``remote_find_tracking``, ``query_refspecs``; negative refspecs exclude) — or, for the remote
``.``, the merge ref itself.  The guard already asked git for that configuration (and the
sandbox binds the copy it checked over the repository's files), so nothing more is run.

What the configuration cannot decide is named ``undecided`` rather than guessed: a remote with
no ``url`` in it (git then reads a legacy ``.git/remotes`` or ``.git/branches`` file, or takes
the name as a URL) and a ``merge`` value that is not a full ref (git resolves it against the
refs).  The parser refuses a bracket block on such a branch instead of guessing
(``parsers/git/branch.py``).
"""

from __future__ import annotations

from parism.guard.git.repo import Entry, _split_key
from parism.parsers.contract import RepoFacts


def _refspec(spec: str) -> tuple[bool, bool, str, str | None]:
    """(negative, pattern, src, dst) of one fetch refspec (``+`` dropped, no ``:`` → dst None)."""
    negative = spec.startswith("^")
    spec = spec[1:] if negative else spec.removeprefix("+")
    src, colon, dst = spec.partition(":")
    return negative, "*" in src, src, (dst if colon else None)


def _match(pattern: str, name: str) -> str | None:
    """The part of ``name`` the one ``*`` of ``pattern`` stands for (None: no match)."""
    head, _, tail = pattern.partition("*")
    if name.startswith(head) and name.endswith(tail) and len(name) >= len(head) + len(tail):
        return name[len(head):len(name) - len(tail)]
    return None


def tracking(merge: str, fetch: list[str]) -> str | None:
    """The remote-tracking ref ``merge`` is fetched to (git's ``remote_find_tracking``)."""
    specs = [_refspec(s) for s in fetch]
    for negative, pattern, src, _dst in specs:  # omit_name_by_refspec
        if negative and (_match(src, merge) is not None if pattern else src == merge):
            return None
    for negative, pattern, src, dst in specs:
        if negative or dst is None:
            continue
        if pattern:
            middle = _match(src, merge)
            if middle is not None and "*" in dst:
                return dst.replace("*", middle, 1)
        elif src == merge:
            return dst
    return None


def facts(entries: tuple[Entry, ...] | list[Entry]) -> RepoFacts:
    """Every configured branch's upstream (full ref), or ``undecided``."""
    remote_of: dict[str, str] = {}
    merges: dict[str, list[str]] = {}
    fetch: dict[str, list[str]] = {}
    has_url: set[str] = set()
    for _scope, _origin, key, value in entries:
        section, sub, name = _split_key(key)
        if sub is None:
            continue
        if section == "branch" and name == "remote" and value is not None:
            remote_of[sub] = value  # single-valued: the last one wins
        elif section == "branch" and name == "merge" and value is not None:
            merges.setdefault(sub, []).append(value)
        elif section == "remote" and name == "fetch" and value is not None:
            fetch.setdefault(sub, []).append(value)
        elif section == "remote" and name == "url" and value:
            has_url.add(sub)
    upstreams: dict[str, str] = {}
    undecided: set[str] = set()
    for branch, remote in remote_of.items():
        merge = (merges.get(branch) or [None])[0]
        if merge is None:
            continue  # no merge: no upstream (git's set_merge)
        if remote == ".":
            if merge.startswith("refs/"):
                upstreams[branch] = merge
            else:
                undecided.add(branch)  # git resolves a short name against the refs
            continue
        if remote not in has_url:
            undecided.add(branch)
            continue
        dst = tracking(merge, fetch.get(remote, []))
        if dst is not None:
            upstreams[branch] = dst
    return RepoFacts(upstreams=upstreams, undecided=frozenset(undecided))
