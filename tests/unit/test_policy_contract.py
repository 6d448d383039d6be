"""The guard's flag policy of a command (``profiles/readonly.toml``, ``build.toml``) agrees with
its parser's contract (``parism/parsers/``), for every command with both, in both profiles
(issue #24; docs/adding-a-parser.md).

A flag is written twice: the guard decides whether the call may run, the contract whether the
parser reads its output. They must read argv the same way, or the parser would take a flag's
value for an operand (or the guard a value for a path):

- a flag in both is tokenised alike: the same kind, where the value kinds ``value path data url``
  are one (a value, attached or the next argument; the guard only checks it differently) and a
  contract's ``count`` (``-n`` or ``-n 4``, ping on Linux and Windows) reads both ``bool`` and
  ``number``;
- every flag the guard lets run is one the contract knows (reads, or refuses with its reason),
  except those listed in ``RUNS_UNPARSED`` with why. The contract may know more flags than the
  guard allows: ``parism parse`` reads output captured elsewhere (other systems' ls, BusyBox).

The real programs decided each fix (docs/adding-a-parser.md lists them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from parism.config.model import CommandPolicy
from parism.config.profiles import SHIPPED, load_profile
from parism.parsers import registry
from parism.parsers.contract import Parser

ONE_VALUE = {"value", "path", "data", "url"}

#: flags the guard allows although the parser does not read that form: the call runs and answers
#: raw text with ``unsupported_format``. Each entry says why the guard allows it.
RUNS_UNPARSED: dict[str, dict[str, str]] = {
    "cat": {f: "shows non-printing characters: the text is the answer, no rows to read"
            for f in ("-A", "-E", "-T", "-e", "-t", "-v", "--show-all", "--show-ends", "--show-nonprinting",
                      "--show-tabs")},
    "df": {"--output": "a chosen column list: a layout the parser does not read"},
    "dig": {"+trace": "a delegation trace: one answer per server"},
    "du": {f: "inode counts, NUL-ended records and times: layouts the parser does not read"
           for f in ("--inodes", "--null", "-0", "--time", "--time-style")},
    "free": {"--line": "one-line layout"},
    "grep": {f: "device/directory actions, NUL-separated data and tab alignment"
             for f in ("-D", "--devices", "-d", "--directories", "-z", "--null-data", "-T", "--initial-tab")},
    "head": {f: "NUL-ended lines" for f in ("-z", "--zero-terminated")},
    "tail": {f: "follows until the timeout; NUL-ended lines"
             for f in ("-f", "-F", "--follow", "-z", "--zero-terminated")},
    "id": {f: "the security context and the ignored -a" for f in ("-Z", "--context", "-a")},
    "journalctl": {f: "follows until the timeout" for f in ("-f", "--follow")},
    "tree": {"-J": "tree's own JSON (passed through as JSON when it parses)"},
}

#: flags whose kinds differ because the program's grammar has no tokenizer kind, so neither side
#: can say it exactly. Each reads one form the program reads; none makes a wrong answer.
_LASTARG = ("git's optional argument takes the next word unless it is the last "
            "(`git branch --merged main` and `git branch --merged` both run)")
_FORMAT = ("git reads only --format=F (`git log --format oneline` is 'ambiguous argument'); the guard's "
           "data kind, which exempts a format string from the injection check, also takes the next word")
NO_KIND: dict[str, dict[str, str]] = {
    "git branch": {f: _LASTARG for f in ("--merged", "--no-merged", "--contains", "--no-contains")},
    "git tag": {f: _LASTARG for f in ("--merged", "--no-merged", "--contains", "--no-contains", "--points-at")},
    "git log": {"--format": _FORMAT, "--pretty": _FORMAT},
    "git show": {"--format": _FORMAT, "--pretty": _FORMAT},
    "netstat": {"-A": "Linux's -A FAMILY (the guard) vs BSD's -A (the parser, which takes FAMILY as its "
                      "protocol operand: the same listing)"},
}


def compatible(guard: str, contract: str) -> bool:
    if guard == contract or (guard in ONE_VALUE and contract in ONE_VALUE):
        return True
    return contract == "count" and guard in ("bool", "number")


def _subparsers(parser: Parser, sub: str) -> Iterator[tuple[str, Parser]]:
    for key, p in parser.subcommands.items():
        if key == sub or key.startswith(sub + " "):
            yield key, p


def _pairs() -> Iterator[tuple[str, str, Mapping[str, str], Parser, bool]]:
    """(profile, what, the guard's flags, the parser, whole) of every command both know; ``whole``:
    the guard's flags are all its flags for this parser (not only the subcommand's extra ones)."""
    for name in SHIPPED:
        profile, problems = load_profile(name)
        assert not problems, problems
        for cmd, policy in sorted(profile.commands.items()):
            parser = registry.get_parser(cmd)
            if parser is None:
                continue
            if not parser.subcommands:
                yield name, cmd, policy.flags, parser, True
                continue
            yield from _dispatch(name, cmd, policy, parser)


def _dispatch(name: str, cmd: str, policy: CommandPolicy, parser: Parser) -> Iterator[
        tuple[str, str, Mapping[str, str], Parser, bool]]:
    if policy.leading_flags:
        yield name, f"{cmd} (leading)", policy.leading_flags, _with_flags(parser.leading_flags), False
    for sub, flags in sorted(policy.sub_flags.items()):
        for key, p in _subparsers(parser, sub):
            yield name, f"{cmd} {key}", {**policy.flags, **flags}, p, False


def _with_flags(flags: Mapping[str, str]) -> Parser:
    from parism.parsers.contract import Contract
    return Parser(id="leading", contract=Contract(flags=flags))


PAIRS = list(_pairs())


@pytest.mark.parametrize(("profile", "what", "guard", "parser", "whole"), PAIRS,
                         ids=[f"{p[0]}:{p[1]}" for p in PAIRS])
def test_a_flag_in_both_is_read_alike(profile: str, what: str, guard: Mapping[str, str], parser: Parser,
                                      whole: bool) -> None:
    contract = parser.contract.flags
    exempt = set(NO_KIND.get(what, {}))
    apart = {f: (k, contract[f]) for f, k in guard.items()
             if f in contract and f not in exempt and not compatible(k, contract[f])}
    assert not apart, f"{profile} {what}: flag kinds (guard, parser) differ: {apart}"


@pytest.mark.parametrize(("profile", "what", "guard", "parser", "whole"), [p for p in PAIRS if p[4]],
                         ids=[f"{p[0]}:{p[1]}" for p in PAIRS if p[4]])
def test_every_flag_the_guard_allows_is_known_to_the_parser(profile: str, what: str, guard: Mapping[str, str],
                                                             parser: Parser, whole: bool) -> None:
    if parser.contract.any_args:
        return  # the output does not depend on the flags (pwd, which)
    unknown = set(guard) - set(parser.contract.flags) - set(RUNS_UNPARSED.get(what, {}))
    assert not unknown, f"{profile} {what}: the guard allows flags the parser does not know: {sorted(unknown)}"


def test_the_exceptions_are_not_stale() -> None:
    """An exception whose flag the parser now reads, or the guard no longer allows, is removed."""
    whole = {(p[1], p[0]): (p[2], p[3]) for p in PAIRS if p[4]}
    for cmd, flags in RUNS_UNPARSED.items():
        for profile in SHIPPED:
            guard, parser = whole[(cmd, profile)]
            for flag in flags:
                assert flag in guard and flag not in parser.contract.flags, (profile, cmd, flag)


def test_the_check_can_fail() -> None:
    """The rule tells apart the disagreements it was written for (f4aedb0's ls -w: number in the
    guard, value in the parser) from the kinds that read alike."""
    assert not compatible("number", "value") and not compatible("data", "attached")
    assert not compatible("bool", "value") and not compatible("attached", "value")
    assert compatible("path", "value") and compatible("data", "value") and compatible("number", "count")
