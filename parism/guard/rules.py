"""Reading an argv against a ``CommandPolicy``: which value is what, and what the policy forbids.

``classify`` tokenises once (``parism.argv.tokenize``) and gives every argument value a kind
(``path``, ``data``, ``url``, ``host``, ``any`` …).  The guard's later steps consume that one
classification: the path check sees exactly the path values, the injection check skips exactly
the ``data`` values, and the policy check reports what the policy forbids.  Nothing is guessed:
an undeclared flag is an error, not a best effort.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from parism.config.model import CommandPolicy
from parism.argv.tokenize import FlagSpec, Token, Tokens, tokenize


@dataclass(frozen=True)
class Value:
    """One argument value the later checks look at."""

    text: str  # the value proper (without ``--flag=``)
    kind: str  # path | data | url | host | any | value | number | count | flag
    arg: str  # the whole argv element it came from (for messages)
    index: int
    flag: str | None = None  # the flag it belongs to, if any


@dataclass(frozen=True)
class Violation:
    """A policy refusal (reason ``arg_not_allowed``)."""

    arg: str
    detail: str
    hint: str | None = None


@dataclass
class Classified:
    tokens: Tokens
    subcommand: str | None = None
    values: list[Value] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)


def _spec(policy: CommandPolicy, flags: Mapping[str, str], stop: bool = False) -> FlagSpec:
    """The tokenizer's view of a policy; ``stop``: the head before a subcommand word."""
    return FlagSpec(flags=flags, single_dash_long=policy.single_dash_long, numeric_flag=policy.numeric_flag,
                    plus_flags=policy.plus_flags, stop_at_positional=stop,
                    end_of_options=policy.end_of_options,
                    leading_flags=policy.leading_flags if policy.end_of_options == "find" else {})


def _split_subcommand(args: list[str], policy: CommandPolicy, out: Classified) -> int:
    """Tokenise leading flags and find the subcommand; return the argv index after it."""
    subs = policy.subcommands or []
    if args and args[0] in subs:
        out.subcommand = args[0]
        out.tokens.tokens.append(Token("positional", args[0], 0))
        return 1
    leading = policy.leading_flags or policy.flags
    head = tokenize(args, _spec(policy, leading, stop=True))
    out.tokens.errors.extend(head.errors)
    for tok in head.tokens:
        if tok.kind == "positional":
            out.subcommand = tok.text
            out.tokens.tokens.append(tok)
            if tok.text not in subs:
                out.violations.append(Violation(
                    tok.text, f"subcommand '{tok.text}' is not allowed",
                    f"allowed subcommands: {' '.join(subs)}"))
            return tok.index + 1
        if tok.kind == "separator":
            out.violations.append(Violation(tok.text, "'--' is not allowed before the subcommand"))
            return len(args)
        out.tokens.tokens.append(tok)
    return len(args)


def _positional_kinds(policy: CommandPolicy, sub: str | None, tokens: Tokens) -> tuple[list[str], str]:
    """Kinds of the leading positionals and the kind of the rest."""
    if sub is not None and sub in policy.sub_positionals:
        return [], policy.sub_positionals[sub]
    kinds: list[str] = list(policy.positional_kinds)
    if kinds and policy.pattern_flags and tokens.has(*policy.pattern_flags) and kinds[0] == "data":
        kinds = kinds[1:]
    if kinds:
        return kinds[:-1], kinds[-1]
    return [], policy.positionals


def classify(args: list[str], policy: CommandPolicy) -> Classified:
    """Tokenise ``args`` against ``policy`` and give each value a kind."""
    out = Classified(tokens=Tokens(args=list(args)))
    start = 0
    if policy.subcommands is not None:
        start = _split_subcommand(args, policy, out)
    flags: dict[str, str] = dict(policy.flags)
    if out.subcommand is not None:
        flags.update(policy.sub_flags.get(out.subcommand, {}))
    rest = tokenize(args[start:], _spec(policy, flags), start=start)
    out.tokens.tokens.extend(rest.tokens)
    out.tokens.errors.extend(rest.errors)

    positionals = [t for t in rest.tokens if t.kind == "positional"]
    verbs = policy.sub_verbs.get(out.subcommand or "")
    if verbs is not None:
        if not positionals or positionals[0].text not in verbs:
            got = positionals[0].text if positionals else "(none)"
            out.violations.append(Violation(got, f"'{out.subcommand} {got}' is not allowed",
                                            f"allowed: {' '.join(f'{out.subcommand} {v}' for v in verbs)}"))
        else:
            positionals = positionals[1:]
    head_kinds, rest_kind = _positional_kinds(policy, out.subcommand, out.tokens)
    for n, tok in enumerate(positionals):
        kind = head_kinds[n] if n < len(head_kinds) else rest_kind
        if kind == "none":
            out.violations.append(Violation(tok.text, f"positional argument '{tok.text}' is not allowed"))
            continue
        if policy.positional_prefix and not tok.text.startswith(policy.positional_prefix):
            out.violations.append(Violation(
                tok.text, f"positional argument '{tok.text}' must start with '{policy.positional_prefix}'"))
            continue
        if policy.positional_chars is not None and not set(tok.text) <= set(policy.positional_chars):
            out.violations.append(Violation(
                tok.text, f"positional argument '{tok.text}' may only use the characters '{policy.positional_chars}'"))
            continue
        out.values.append(Value(tok.text, kind, tok.text, tok.index))
    if policy.max_positionals is not None and len(positionals) > policy.max_positionals:
        out.violations.append(Violation(positionals[-1].text, "too many positional arguments"))
    for tok in out.tokens.flags:
        out.values.append(Value(tok.name or tok.text, "flag", tok.text, tok.index, tok.name))
        if tok.value is not None:
            where = tok.index if tok.value_index is None else tok.value_index
            out.values.append(Value(tok.value, tok.value_kind or "value", args[where], where, tok.name))
    # An undeclared flag explains a refusal best ("flag '-c' is not allowed"), so it comes first.
    flag_errors = [Violation(err.arg, err.describe()) for err in out.tokens.errors]
    out.violations = flag_errors + out.violations + _value_rules(policy, out.tokens, out.subcommand)
    return out


def _value_rules(policy: CommandPolicy, tokens: Tokens, sub: str | None) -> list[Violation]:
    """``file_ref_flags``, ``denied_values``, ``allowed_values``, ``never_ends``, ``requires``."""
    found: list[Violation] = []
    never_ends = {**policy.never_ends, **policy.sub_never_ends.get(sub or "", {})}
    for tok in tokens.flags:
        name, value = tok.name or "", tok.value
        if name in never_ends:
            found.append(Violation(tok.text, f"'{name}' never ends (the call would only hit the timeout)",
                                   never_ends[name]))
        if value is None:
            continue
        if name in policy.file_ref_flags and value.startswith("@"):
            found.append(Violation(tok.text, f"'{name}' may not read a file (@...)"))
        for bad in policy.denied_values.get(name, []):
            if bad in value:
                found.append(Violation(tok.text, f"'{bad}' is not allowed in the value of '{name}'"))
        allowed = policy.allowed_values.get(name)
        if allowed is not None and not any(
            value.startswith(a) if a.endswith("=") else value == a for a in allowed
        ):
            found.append(Violation(tok.text, f"value '{value}' is not allowed for '{name}'",
                                   f"allowed: {' '.join(allowed)}"))
    for req in policy.requires + policy.sub_requires.get(sub or "", []):
        if not tokens.has(*req.any_of):
            found.append(Violation(" ".join(tokens.args) or "(no arguments)",
                                   f"needs one of {' '.join(req.any_of)} to end", req.hint))
    return found
