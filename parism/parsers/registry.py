"""Find the parser for an argv and run it under its contract.

Parsers are imported lazily (first use) so that server start-up stays fast.  The catalogue is
the union of the ``COMMANDS`` maps of the domain packages (``parism.parsers.fs`` ...), command
name → module path; each module exports ``PARSER``.

Outcome rules (contract §10.1, §5.2):
- no parser → JSON passthrough if stdout is JSON, else ``not_found`` (``parser_not_found``);
- arguments outside the contract → ``unsupported_format`` + hint, unless stdout is JSON
  (then the JSON is the result and the error is dropped);
- the parser raised ``ParseFailure`` → that reason; any other exception → ``parser_exception``;
- data lines but an all-default result → ``unrecognized_output`` (never a silent empty success);
- no output at all from a form that always prints something (``Parser.prints_always``: ps's
  header, df's, free's) → ``unrecognized_output``: the command failed, it did not answer "none".
"""

from __future__ import annotations

import gc
import importlib
import json
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from parism.wire.envelope import Hint, ParseError
from parism.parsers import strict
from parism.parsers.contract import Contract, ParseFailure, ParseInput, Parser, RepoFacts
from parism.argv.tokenize import FlagSpec, tokenize

DOMAINS = (
    "fs", "process", "network", "text", "git", "env", "system", "windows", "devops", "packages",
)


@cache
def catalog() -> dict[str, str]:
    """Command name → module path, from every domain package."""
    names: dict[str, str] = {}
    for domain in DOMAINS:
        try:
            mod = importlib.import_module(f"parism.parsers.{domain}")
        except ModuleNotFoundError:
            continue
        names.update(getattr(mod, "COMMANDS", {}))
    return names


@cache
def get_parser(cmd: str) -> Parser | None:
    path = catalog().get(cmd)
    if path is None:
        return None
    return importlib.import_module(path).PARSER


def walk(parser: Parser) -> Iterator[Parser]:
    """A parser and every parser under its subcommands, each once."""
    seen: set[int] = set()
    todo = [parser]
    while todo:
        p = todo.pop()
        if id(p) in seen:
            continue
        seen.add(id(p))
        yield p
        todo.extend(p.subcommands.values())


def command_parsers() -> Iterator[tuple[str, Parser]]:
    """(command, its top-level parser) of every built-in command (imports every parser module:
    for tests, docs and the derived tables' full views, never on a call's path)."""
    for cmd in sorted(catalog()):
        parser = get_parser(cmd)
        if parser is not None:
            yield cmd, parser


@cache
def by_id(parser_id: str) -> Parser | None:
    """The built-in parser with this id. Every id starts with its command's name (``git-log``;
    ``tests/unit/parsers/test_one_home.py`` checks it), so only that command's module is imported."""
    names = [c for c in catalog() if parser_id == c or parser_id.startswith(c + "-")]
    for cmd in sorted(names, key=len, reverse=True):
        parser = get_parser(cmd)
        found = next((p for p in walk(parser) if p.id == parser_id), None) if parser is not None else None
        if found is not None:
            return found
    return None


class PackParsers(Protocol):
    """One engine's parser packs (``parism.packs.table.PackTable``): consulted before the
    built-ins, and only for names the engine's configuration lets a pack take. Each engine passes
    its own, so two engines with two configurations in one process never share packs."""

    def parser_for(self, cmd: str) -> Parser | None: ...

    def names(self) -> Iterable[str]: ...


def lookup(cmd: str, packs: PackParsers | None = None) -> Parser | None:
    ext = packs.parser_for(cmd) if packs is not None else None
    return ext if ext is not None else get_parser(cmd)


def available(packs: PackParsers | None = None) -> list[str]:
    names = set(catalog())
    if packs is not None:
        names.update(packs.names())
    return sorted(names)


@dataclass
class ParseOutcome:
    parsed: Any = None
    parse_error: ParseError | None = None
    parser: Parser | None = None
    not_found: bool = False
    native_json: bool = False

    @property
    def parser_id(self) -> str | None:
        return self.parser.id if self.parser else None


def _leading_count(parser: Parser, args: list[str]) -> tuple[int, str | None]:
    """How many argv elements are leading global flags (before the subcommand word)."""
    if not parser.leading_flags:
        return 0, None
    lead = tokenize(args, FlagSpec(parser.leading_flags, stop_at_positional=True))
    i = len(args)
    for t in lead.tokens:
        if t.kind == "positional":
            i = t.index
            break
        if t.kind == "separator":
            return i, "'--' before the subcommand is not supported"
    if lead.errors and any(e.index < i for e in lead.errors):
        return i, lead.errors[0].describe() + " before the subcommand"
    return i, None


def resolve(parser: Parser, args: list[str]) -> tuple[Parser, list[str], str | None]:
    """Walk leading global flags and subcommand words. Returns (parser, sub_args, problem);
    ``sub_args`` is always a suffix of ``args``."""
    if not parser.subcommands:
        return parser, list(args), None
    i, problem = _leading_count(parser, args)
    if problem is not None:
        return parser, list(args), problem
    rest = args[i:]
    for key in sorted(parser.subcommands, key=lambda k: -len(k.split())):
        words = key.split()
        if rest[: len(words)] == words:
            return parser.subcommands[key], rest[len(words):], None
    shown = " ".join(rest[:2]) or "(none)"
    return parser, list(args), f"subcommand '{shown}' has no parser"


def data_lines(text: str, parser: Parser | None) -> list[str]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if parser is None:
        return lines
    lines = lines[parser.header_lines:]
    if parser.noise:
        rx = re.compile(parser.noise)
        lines = [ln for ln in lines if not rx.search(ln)]
    return lines


def _is_default(value: Any) -> bool:
    if value is None or value is False or value == "" or value == 0:
        return not isinstance(value, bool) or value is False
    if isinstance(value, (list, dict)):
        if isinstance(value, dict):
            return all(_is_default(v) for k, v in value.items() if k not in _IGNORED and not k.startswith("_"))
        return len(value) == 0
    return False


_IGNORED = frozenset({"raw", "resource", "unit", "os", "source"})


def silent_empty(value: Any) -> bool:
    """True when a result carries no information (every value a default)."""
    if isinstance(value, dict):
        vals = [v for k, v in value.items() if k not in _IGNORED and not k.startswith("_")]
        if vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            return False  # a record of only numbers counts as recognised (id -u → {uid: 0})
    return _is_default(value)


def native_json(text: str) -> Any | None:
    """Whole stdout as JSON, or JSON Lines as ``{"rows": [...]}``; else None."""
    s = text.strip()
    if not s or s[0] not in "[{":
        return None
    try:
        return json.loads(s)
    except ValueError:
        pass
    rows = []
    for line in s.splitlines():
        line = line.strip()
        if not line:
            continue
        if line[0] != "{":
            return None
        try:
            rows.append(json.loads(line))
        except ValueError:
            return None
    return {"rows": rows} if rows else None


def parser_for(cmd: str, args: list[str], os: str) -> Parser | None:
    """The parser that will read this call's output, known before it runs: None when there is
    none, the arguments are outside its contract, or they ask for JSON (passthrough decides)."""
    root = get_parser(cmd)
    if root is None:
        return None
    parser, sub_args, problem = resolve(root, args)
    if problem is not None or parser.parse is None or os not in parser.os:
        return None
    if parser.json_output is not None and parser.json_output(list(args)):
        return None
    return parser if parser.contract.check(sub_args)[1] is None else None


def parse(cmd: str, args: list[str], text: str, os: str, *, strict_schemas: bool = False,
          now_year: int | None = None, packs: PackParsers | None = None,
          repo: RepoFacts | None = None) -> ParseOutcome:
    """``packs``: the calling engine's parser packs (None: the built-in parsers only).
    ``repo``: what the guard learnt from git about the repository the call ran in."""
    root = lookup(cmd, packs)
    if root is None:
        js = native_json(text)
        if js is not None:
            return ParseOutcome(parsed=js, native_json=True)
        return ParseOutcome(not_found=True)
    parser, sub_args, problem = resolve(root, args)
    tokens = None
    if problem is None:
        if os not in parser.os:
            problem = f"{parser.id} output is not parsed for os '{os}'"
        else:
            tokens, problem = parser.contract.check(sub_args)
    if problem is None and parser.parse is None:
        problem = "no parser for this form"
    if problem is not None:
        js = native_json(text)
        if js is not None:
            return ParseOutcome(parsed=js, parser=parser, native_json=True)
        return ParseOutcome(parser=parser, parse_error=ParseError(
            reason="unsupported_format", message=f"{cmd}: {problem}",
            hint=_hint(root, parser, args, sub_args)))
    assert tokens is not None and parser.parse is not None
    if parser.prints_always is not None and not text.strip() and parser.prints_always(tokens):
        return ParseOutcome(parser=parser, parse_error=ParseError(
            reason="unrecognized_output", message=f"{parser.id}: the output is empty, but this form always prints "
            "something when it succeeds — the command failed (see its exit code and stderr)"))
    pin = ParseInput(cmd=cmd, args=list(args), sub_args=sub_args, tokens=tokens, os=os, now_year=now_year,
                     repo=repo)
    try:
        with _gc_paused():
            value = parser.parse(text, pin)
    except ParseFailure as exc:
        hint = (Hint(args=_full_args(args, sub_args, exc.hint_args), reason=exc.hint_reason)
                if exc.hint_args is not None else None)
        return ParseOutcome(parser=parser, parse_error=ParseError(reason=exc.reason, message=exc.message, hint=hint))  # type: ignore[arg-type]
    except Exception as exc:  # a parser bug must never take the server down
        return ParseOutcome(parser=parser, parse_error=ParseError(
            reason="parser_exception", message=f"{parser.id}: {type(exc).__name__}: {exc}"[:500]))
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", exclude_none=True)
    if silent_empty(value) and data_lines(text, parser):
        return ParseOutcome(parser=parser, parse_error=ParseError(
            reason="unrecognized_output", message=f"{parser.id}: the output has data lines but none was recognised"))
    if strict_schemas and parser.schema is not None:
        problem = strict.violation(parser.schema, value)
        if problem is not None:
            return ParseOutcome(parser=parser, parse_error=ParseError(
                reason="schema_violation", message=f"{parser.id}: {problem}"))
    return ParseOutcome(parsed=value, parser=parser)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a parser builds ~10⁵ rows that hold no cycles: every
    row stays alive until the parse returns, so each collection their allocation triggers walks
    all of them again (a fifth to a quarter of a long ``ls -l``). Reference counting still frees
    everything. Process-wide, so with concurrent parses a pause may end early — never later."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _full_args(args: list[str], sub_args: list[str], replacement: list[str] | None) -> list[str]:
    """Re-attach leading flags and subcommand words in front of replacement sub-args.

    ``resolve`` always returns ``sub_args`` as a suffix of ``args``."""
    if replacement is None:
        return list(args)
    return list(args[: len(args) - len(sub_args)]) + list(replacement)


def _hint(root: Parser, parser: Parser, args: list[str], sub_args: list[str]) -> Hint | None:
    fn = parser.contract.hint
    if fn is None:
        return None
    try:
        repl = fn(list(sub_args))
    except Exception:
        return None
    if repl is None:
        return None
    if parser.contract.hint_scope == "command":  # the hint names its own subcommand
        full = list(args[: _leading_count(root, args)[0]]) + list(repl)
    else:
        full = _full_args(args, sub_args, repl)
    if full == list(args):
        return None
    # a hint must itself be in range (unless it targets native JSON output)
    p2, s2, problem = resolve(root, full)
    if problem is None:
        _, problem = p2.contract.check(s2)
    if problem is not None and not (p2.json_output and p2.json_output(s2)):
        return None
    return Hint(args=full)


def contract_summary(contract: Contract) -> dict[str, Any]:
    """Compact description for ``describe(cmd)``."""
    if contract.any_args:
        return {"any_args": True}
    out: dict[str, Any] = {}
    if contract.flags:
        out["flags"] = " ".join(contract.flags)
    if contract.values:
        out["values"] = dict(contract.values)
    if contract.required:
        out["requires"] = " | ".join(" ".join(g) for g in contract.required)
    if contract.exclusive:
        out["exclusive"] = " | ".join(" ".join(g) for g in contract.exclusive)
    pos: dict[str, Any] = {"min": contract.min_positionals, "max": contract.max_positionals}
    if contract.positional_pattern:
        pos["pattern"] = contract.positional_pattern
    out["positionals"] = pos
    return out
