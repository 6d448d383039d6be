"""What a parser declares about itself, and the check that enforces it.

Every built-in parser is one small module exporting ``PARSER = Parser(...)``.  The contract says
which argument forms the parser was written (and tested) for; anything outside that range is
``unsupported_format`` with a ``hint`` naming arguments that give the same information, instead of
a silently wrong result.  Parse functions raise ``Unrecognized`` when data lines exist but no row
could be read; they never return a ``{lines: [...]}`` fallback.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from parism.argv.tokenize import FlagSpec, Tokens, tokenize

ALL_OS: frozenset[str] = frozenset({"linux", "macos", "freebsd", "windows"})
UNIX_OS: frozenset[str] = frozenset({"linux", "macos", "freebsd"})


class ParseFailure(Exception):
    """Base of the failures a parse function may raise on purpose."""

    reason = "parser_exception"

    def __init__(self, message: str, hint_args: Sequence[str] | None = None, hint_reason: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint_args = list(hint_args) if hint_args is not None else None
        self.hint_reason = hint_reason


class Unrecognized(ParseFailure):
    """Data lines exist but nothing in them was recognised."""

    reason = "unrecognized_output"


class Unsupported(ParseFailure):
    """The output (or arguments) are a form this parser does not read; ``hint_args`` may help."""

    reason = "unsupported_format"


@dataclass(frozen=True)
class RepoFacts:
    """What git's own reading of the repository (the guard's, ``guard/git/upstream.py``) says
    about a ``git`` call's output that its text alone cannot tell.

    ``upstreams``: each local branch that has an upstream → that upstream's full ref
    (``refs/remotes/origin/main``; ``refs/heads/x`` for a local one), from the configuration
    the call's git reads (the sandbox binds the copy the guard checked).  ``undecided``:
    branches whose upstream the configuration alone cannot name (a remote without a URL in the
    configuration, a ``merge`` that is not a full ref).  Any other branch has none."""

    upstreams: Mapping[str, str] = field(default_factory=dict)
    undecided: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ParseInput:
    """Everything a parse function may look at besides the text."""

    cmd: str
    args: list[str]  # the whole argv after the command (leading global flags included)
    sub_args: list[str]  # argv after leading flags and subcommand words (what the contract saw)
    tokens: Tokens  # ``sub_args`` tokenised with the contract's flags
    os: str  # linux | macos | freebsd | windows
    now_year: int | None = None  # for year inference in dates without a year (tests pin it)
    repo: RepoFacts | None = None  # git: the repository's facts (None: saved text, not a run)


@dataclass(frozen=True)
class Contract:
    """The accepted argument range of a parser (contract §10.1)."""

    flags: Mapping[str, str] = field(default_factory=dict)  # name -> tokenizer kind
    values: Mapping[str, str] = field(default_factory=dict)  # name -> full-match regex for its value
    min_positionals: int = 0
    max_positionals: int | None = None  # None = unlimited
    positional_pattern: str | None = None  # full-match regex for each positional
    required: Sequence[Sequence[str]] = ()  # each group: at least one of these flags must appear
    exclusive: Sequence[Sequence[str]] = ()  # each group: at most one of these flags may appear
    single_dash_long: bool = False
    numeric_flag: bool = False
    plus_flags: bool = False
    any_args: bool = False  # only for commands whose output does not depend on flags (pwd...)
    supports: Callable[[Tokens], str | None] | None = None  # extra check → reason when unsupported
    hint: Callable[[list[str]], list[str] | None] | None = None  # replacement args for sub_args
    hint_scope: str = "sub_args"  # "command": the hint's args replace the subcommand words too

    def spec(self) -> FlagSpec:
        return FlagSpec(
            flags=self.flags,
            single_dash_long=self.single_dash_long,
            numeric_flag=self.numeric_flag,
            plus_flags=self.plus_flags,
        )

    def check(self, sub_args: list[str]) -> tuple[Tokens, str | None]:
        """Tokenise and return (tokens, reason-or-None)."""
        tokens = tokenize(sub_args, self.spec())
        if self.any_args:
            return tokens, None
        if tokens.errors:
            return tokens, tokens.errors[0].describe() + " by this parser"
        for t in tokens.flags:
            rx = self.values.get(t.name or "")
            if rx is not None and not re.fullmatch(rx, t.value or ""):
                return tokens, f"value '{t.value}' of '{t.name}' is not a supported form"
        pos = tokens.positionals
        if len(pos) < self.min_positionals:
            return tokens, f"needs at least {self.min_positionals} positional argument(s)"
        if self.max_positionals is not None and len(pos) > self.max_positionals:
            return tokens, f"takes at most {self.max_positionals} positional argument(s)"
        if self.positional_pattern is not None:
            for p in pos:
                if not re.fullmatch(self.positional_pattern, p.text):
                    return tokens, f"positional '{p.text}' is not a supported form"
        for group in self.required:
            if not tokens.has(*group):
                return tokens, "requires one of " + " ".join(group)
        for group in self.exclusive:
            if sum(1 for t in tokens.flags if t.name in group) > 1:
                return tokens, "at most one of " + " ".join(group)
        if self.supports is not None:
            reason = self.supports(tokens)
            if reason:
                return tokens, reason
        return tokens, None


ParseFn = Callable[[str, ParseInput], Any]


@dataclass(frozen=True)
class Lean:
    """The lean default answer of a table-shaped parser (``output/shape/lean.py``)."""

    derived: Mapping[str, str] = field(default_factory=dict)  # derived field -> printed field it comes from
    partial_with: tuple[str, ...] = ()  # arguments under which the rows do not restate raw (raw is kept)


def always(_tokens: Tokens) -> bool:
    """``Parser.prints_always`` of a command that prints something in every form."""
    return True


@dataclass(frozen=True)
class Parser:
    """One parser (or one subcommand of a dispatching parser such as ``git``)."""

    id: str  # "ls", "git-status", ...
    contract: Contract
    parse: ParseFn | None = None  # None only for a pure dispatcher
    schema: type[BaseModel] | None = None  # pydantic model of the result (strict_schemas)
    rows_key: str | None = None  # the main list of rows, when there is one
    row_fields: tuple[str, ...] = ()
    header_lines: int = 0  # lines before the data (not counted as data lines)
    noise: str | None = None  # regex of lines that are not data (legends, banners)
    os: frozenset[str] = ALL_OS
    version: str = "1.0.0"
    examples: tuple[tuple[str, ...], ...] = ()
    # dispatch: leading global flags (name -> kind) then subcommand word sequences
    leading_flags: Mapping[str, str] = field(default_factory=dict)
    subcommands: Mapping[str, "Parser"] = field(default_factory=dict)  # "log", "get pods", ""
    json_output: Callable[[list[str]], bool] | None = None  # args ask for JSON (passthrough)
    # this form prints something whenever it succeeds (a header, a total): an empty output is
    # then a failed command, never an empty answer (``registry.parse`` refuses it)
    prints_always: Callable[[Tokens], bool] | None = None
    # What Parism knows about the command besides its grammar: each fact lives here, on its
    # parser, and the central tables (output/envelopes.py INFORMATIVE_EXITS,
    # results/evidence PROVIDERS, output/shape/lean.py DERIVED, availability.py PACKAGES) are
    # derived from the registry (docs/adding-a-parser.md).
    # exit code -> why that non-zero exit still carries an answer (grep 1: no line matched);
    # read on the command's top-level parser
    informative_exits: Mapping[int, str] = field(default_factory=dict)
    evidence: bool = False  # rows or records get evidence spans (docs/results.md)
    lean: Lean | None = None  # the lean default answer applies (no format chosen)
