"""Read an argv once, the way the target program's option parser would.

The guard (which values are paths, which flags are allowed) and the parser contracts (which
argument forms a parser understands) both look at the same ``Tokens``, so they can never
disagree about what an argument is.

Flag kinds (the value a flag takes):

==========  ===================================================================================
``bool``    no value
``value``   a value, attached (``--x=v``, ``-xV``) or the next argument
``path``    like ``value``; the value is a path and goes through the path check
``data``    like ``value``; an opaque pattern or format string (exempt from ``block_patterns``)
``url``     like ``value``; a URL (host checks apply)
``number``  like ``value``; must be an integer
``attached`` only ``--x=v`` / ``-xV``; never consumes the next argument
``count``   attached, or the next argument only when it looks like ``N``, ``+N`` or ``all``
==========  ===================================================================================

End of options (``FlagSpec.end_of_options``, declared per command policy and tested against the
real programs in ``tests/security/test_end_of_options.py``):

=================  ================================================================================
``getopt``         ``--`` ends the options; options may follow operands (GNU getopt's permutation,
                   cobra, clap, nopt)
``first_operand``  the first operand ends the options, and so does ``--`` (POSIX getopt, Go's
                   ``flag``; node/npx: the rest belongs to the script)
``find``           only find's leading options (``-H -L -P -D opts -O level``) come before the
                   paths and only they end at ``--``; the expression that follows has no end
                   marker, so a later ``--`` is refused like find refuses it (unknown predicate)
``literal``        ``--`` is an ordinary operand and the first operand ends the options (echo)
``none``           the program has no ``--``: it is refused (ps, dig)
=================  ================================================================================

Rules: ``-`` is a positional; short bundles (``-sO``) are split per
letter and the first letter that takes a value consumes the rest of the bundle (``-ofile``) or the
next argument; ``-5`` is the numeric pseudo-flag ``-NUM`` when allowed; with
``single_dash_long`` (find, terraform) ``-name`` is one flag; with ``plus_flags`` (dig) ``+short``
is a flag.  An unknown flag is not guessed at: it is reported in ``Tokens.errors``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

EndOfOptions = Literal["getopt", "first_operand", "find", "literal", "none"]
FlagKind = Literal["bool", "value", "path", "data", "url", "number", "attached", "count"]
VALUE_KINDS: frozenset[str] = frozenset({"value", "path", "data", "url", "number"})
NUMERIC_FLAG = "-NUM"
_COUNT_RE = re.compile(r"^(\+?\d+|all)$")
_NUMERIC_RE = re.compile(r"^-\d+$")


@dataclass(frozen=True)
class Token:
    kind: Literal["flag", "positional", "separator"]
    text: str  # the argv element that starts this token
    index: int  # its position in argv
    name: str | None = None  # declared flag name, e.g. "-n" or "--max-count"
    value: str | None = None  # the flag's value, when it has one
    value_kind: str | None = None  # the flag kind (see module docstring)
    value_index: int | None = None  # argv index of a separate value argument


@dataclass(frozen=True)
class TokenError:
    reason: Literal["unknown_flag", "missing_value", "unexpected_value", "bad_value"]
    arg: str
    index: int
    flag: str | None = None

    def describe(self) -> str:
        if self.reason == "unknown_flag":
            return f"flag '{self.flag or self.arg}' is not allowed"
        if self.reason == "missing_value":
            return f"flag '{self.flag}' needs a value"
        if self.reason == "unexpected_value":
            return f"flag '{self.flag}' takes no value"
        return f"value of '{self.flag}' is not valid in '{self.arg}'"


@dataclass
class Tokens:
    args: list[str]
    tokens: list[Token] = field(default_factory=list)
    errors: list[TokenError] = field(default_factory=list)

    @property
    def flags(self) -> list[Token]:
        return [t for t in self.tokens if t.kind == "flag"]

    @property
    def positionals(self) -> list[Token]:
        return [t for t in self.tokens if t.kind == "positional"]

    def has(self, *names: str) -> bool:
        return any(t.name in names for t in self.tokens if t.kind == "flag")

    def values(self, *names: str) -> list[str]:
        return [t.value for t in self.tokens if t.kind == "flag" and t.name in names and t.value is not None]

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class FlagSpec:
    """What a program accepts: flag name → kind, plus the tokenizer switches."""

    flags: Mapping[str, str] = field(default_factory=dict)
    single_dash_long: bool = False
    numeric_flag: bool = False
    plus_flags: bool = False
    stop_at_positional: bool = False
    end_of_options: EndOfOptions = "getopt"
    leading_flags: Mapping[str, str] = field(default_factory=dict)  # find: before the paths


def tokenize(args: Sequence[str], spec: FlagSpec, *, start: int = 0) -> Tokens:
    """Tokenise ``args`` against ``spec``; ``start`` offsets reported indexes (sub-argv)."""
    out = Tokens(args=list(args))
    flags = spec.flags
    rule = spec.end_of_options
    n = len(args)
    i = _find_head(args, spec, out, start) if rule == "find" else 0
    stop_at_positional = spec.stop_at_positional or rule in ("first_operand", "literal")
    only_positionals = False

    def take_value(name: str, kind: str, attached: str | None, idx: int) -> int:
        """Record flag ``name``; return how many extra argv elements were consumed."""
        arg = args[idx]
        if kind == "bool":
            if attached is not None:
                out.errors.append(TokenError("unexpected_value", arg, start + idx, name))
            out.tokens.append(Token("flag", arg, start + idx, name, None, "bool"))
            return 0
        if attached is not None:
            _record(name, kind, attached, idx, None)
            return 0
        if kind == "attached":
            out.tokens.append(Token("flag", arg, start + idx, name, None, kind))
            return 0
        if kind == "count":
            if idx + 1 < n and _COUNT_RE.match(args[idx + 1]):
                _record(name, kind, args[idx + 1], idx, start + idx + 1)
                return 1
            out.tokens.append(Token("flag", arg, start + idx, name, None, kind))
            return 0
        if idx + 1 >= n:
            out.errors.append(TokenError("missing_value", arg, start + idx, name))
            out.tokens.append(Token("flag", arg, start + idx, name, None, kind))
            return 0
        _record(name, kind, args[idx + 1], idx, start + idx + 1)
        return 1

    def _record(name: str, kind: str, value: str, idx: int, value_index: int | None) -> None:
        if kind == "number" and not re.fullmatch(r"[+-]?\d+", value):
            out.errors.append(TokenError("bad_value", args[idx], start + idx, name))
        out.tokens.append(Token("flag", args[idx], start + idx, name, value, kind, value_index))

    while i < n:
        arg = args[i]
        if only_positionals:
            out.tokens.append(Token("positional", arg, start + i))
            i += 1
            continue
        if arg == "--" and rule != "literal":
            if rule in ("find", "none"):
                out.errors.append(TokenError("unknown_flag", arg, start + i, arg))
                out.tokens.append(Token("flag", arg, start + i, arg, None, None))
            else:
                out.tokens.append(Token("separator", arg, start + i))
                only_positionals = True
            i += 1
            continue
        if spec.plus_flags and arg.startswith("+") and len(arg) > 1:
            name, _, val = arg.partition("=")
            kind = flags.get(name)
            if kind is None:
                out.errors.append(TokenError("unknown_flag", arg, start + i, name))
                out.tokens.append(Token("flag", arg, start + i, name, None, None))
            else:
                i += take_value(name, kind, val if "=" in arg else None, i)
            i += 1
            continue
        if arg == "-" or not arg.startswith("-") or (arg == "--" and rule == "literal"):
            out.tokens.append(Token("positional", arg, start + i))
            if stop_at_positional:
                only_positionals = True
            i += 1
            continue
        if spec.numeric_flag and _NUMERIC_RE.match(arg):
            out.tokens.append(Token("flag", arg, start + i, NUMERIC_FLAG, arg[1:], "number"))
            i += 1
            continue
        if arg.startswith("--") or (spec.single_dash_long and len(arg) > 2 and not _is_bundle(arg, flags)):
            name, eq, val = arg.partition("=")
            kind = flags.get(name)
            if kind is None:
                out.errors.append(TokenError("unknown_flag", arg, start + i, name))
                out.tokens.append(Token("flag", arg, start + i, name, None, None))
                i += 1
                continue
            i += take_value(name, kind, val if eq else None, i) + 1
            continue
        # short option or bundle: -a, -abc, -ofile, -n5
        j = 1
        consumed = 0
        while j < len(arg):
            name = "-" + arg[j]
            kind = flags.get(name)
            if kind is None:
                out.errors.append(TokenError("unknown_flag", arg, start + i, name))
                out.tokens.append(Token("flag", arg, start + i, name, None, None))
                break
            rest = arg[j + 1 :]
            if kind == "bool":
                out.tokens.append(Token("flag", arg, start + i, name, None, "bool"))
                j += 1
                continue
            if kind == "count" and rest and not _COUNT_RE.match(rest):
                out.errors.append(TokenError("bad_value", arg, start + i, name))
                break
            consumed = take_value(name, kind, rest if rest else None, i)
            break
        i += 1 + consumed
    return out


def _find_head(args: Sequence[str], spec: FlagSpec, out: Tokens, start: int) -> int:
    """find's leading options and its paths; return where the expression starts.

    find reads ``-H -L -P -D opts -Olevel`` one per argument (no bundles) until the first other
    word; ``--`` ends them.  Then every word is a path up to the first that starts with ``-`` or
    is ``(`` / ``!`` — the expression, in which ``--`` is an unknown predicate (GNU findutils
    4.9, ``find -- . -exec`` runs the command: the ``--`` did not end the expression)."""
    leading = spec.leading_flags
    i, n = 0, len(args)
    while i < n:
        arg = args[i]
        if arg == "--":
            out.tokens.append(Token("separator", arg, start + i))
            i += 1
            break
        name = arg[:2] if arg.startswith("-O") else arg
        if not (arg[:1] == "-" and len(arg) > 1 and (name in _FIND_LEADING)):
            break
        kind = leading.get(name)
        if kind is None:
            out.errors.append(TokenError("unknown_flag", arg, start + i, name))
            out.tokens.append(Token("flag", arg, start + i, name, None, None))
        elif name == "-O":
            out.tokens.append(Token("flag", arg, start + i, name, arg[2:], kind))
        elif name == "-D":
            if i + 1 >= n:
                out.errors.append(TokenError("missing_value", arg, start + i, name))
                out.tokens.append(Token("flag", arg, start + i, name, None, kind))
            else:
                out.tokens.append(Token("flag", arg, start + i, name, args[i + 1], kind, start + i + 1))
                i += 1
        else:
            out.tokens.append(Token("flag", arg, start + i, name, None, "bool"))
        i += 1
    while i < n and not (args[i].startswith("-") and len(args[i]) > 1) and args[i] not in ("(", "!"):
        out.tokens.append(Token("positional", args[i], start + i))
        i += 1
    return i


_FIND_LEADING = frozenset({"-H", "-L", "-P", "-D", "-O"})


def _is_bundle(arg: str, flags: Mapping[str, str]) -> bool:
    """With single-dash long flags, ``-abc`` is still a bundle when ``-abc`` is not declared
    but its first letter is a declared short flag (``find -P``, ``terraform -v``)."""
    name = arg.partition("=")[0]
    return name not in flags and ("-" + arg[1]) in flags and len(arg) == 2
