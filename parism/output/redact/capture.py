"""Capture sanitisation: turn one run into text that can be shared as a fixture (contract §19.2).

Why stronger than output redaction: a fixture leaves the machine (a bug report, a pull request),
so besides secrets it must not reveal who and where — the home directory, the user name and the
host name — nor the values of secret-looking arguments. Rules follow contract §19.2: every rule matches
the *original* text, where matches overlap the earlier rule wins, replacements are applied in
one pass, and each rule's hits are tallied in ``redactions`` (the fixture's record of what
masking changed). The author CLI (``parism capture``) builds its manifest from the result.
"""

from __future__ import annotations

import getpass
import os
import socket
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import re2

from parism.output.redact.argv import argv_secrets
from parism.output.redact.engine import compile_re2, merge
from parism.output.redact.redactor import Redactor

RedactionKind = Literal["secret", "home_path", "user_name", "host_name", "argv_secret"]
# Names too common to mask as a word: masking `root` would rewrite every `ls -l` owner column.
_GENERIC_USERS = frozenset({"", "root", "nobody", "user", "admin", "runner", "ubuntu", "debian"})
_GENERIC_HOSTS = frozenset({"", "localhost", "localhost.localdomain"})
_OTHER_HOMES = compile_re2(r"(?:/home|/Users)/(?P<secret>[^/\s:\"']+)")


@dataclass(frozen=True)
class Redaction:
    """One entry of a fixture's ``redactions`` list."""

    kind: RedactionKind
    pattern: str
    count: int

    def to_wire(self) -> dict[str, Any]:
        return {"kind": self.kind, "pattern": self.pattern, "count": self.count}


@dataclass(frozen=True)
class SanitizedCapture:
    """Fixture-safe argv and text; ``withheld_reason`` set means nothing may be saved."""

    command: str
    args: list[str]
    args_redacted: bool
    stdout: str
    stderr: str
    redactions: list[Redaction] = field(default_factory=list)
    withheld_reason: str | None = None


@dataclass(frozen=True)
class _Rule:
    start: int
    end: int
    kind: RedactionKind
    pattern: str
    replacement: str


@dataclass(frozen=True)
class _Identity:
    """What identifies the machine: literal strings with their replacements."""

    home: str
    user: str
    host: str

    @classmethod
    def current(cls) -> _Identity:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):  # no passwd entry for the uid (containers)
            user = ""
        return cls(os.path.expanduser("~"), user, socket.gethostname())

    def rules(self, text: str) -> list[_Rule]:
        rules: list[_Rule] = []
        if self.home.rstrip("/"):
            rules += _literal(text, self.home.rstrip("/"), "home_path", "home", "~", word=False)
        rules += [
            _Rule(*m.span(1), "home_path", "home", "<user>") for m in _OTHER_HOMES.finditer(text)
        ]
        if self.user not in _GENERIC_USERS and len(self.user) >= 3:
            rules += _literal(text, self.user, "user_name", "user", "<user>", word=True)
        hosts = {self.host, self.host.split(".")[0]} - _GENERIC_HOSTS
        for host in sorted(hosts, key=len, reverse=True):
            rules += _literal(text, host, "host_name", "host", "<host>", word=True)
        return rules


def _literal(
    text: str, value: str, kind: RedactionKind, name: str, replacement: str, *, word: bool
) -> list[_Rule]:
    edge = r"\b" if word else ""
    pattern = compile_re2(edge + re2.escape(value) + (edge if word else r"(?:/|\b|$)"))
    return [
        _Rule(m.start(), m.start() + len(value), kind, name, replacement)
        for m in pattern.finditer(text)
    ]


def _secret_rules(redactor: Redactor, text: str) -> list[_Rule] | str:
    """Merged secret hits (named after the first rule that covers them), or a withheld reason."""
    found = redactor.find(text)
    if found.withheld_reason is not None:
        return found.withheld_reason
    rules: list[_Rule] = []
    for start, end in merge([(h.start, h.end) for h in found.hits]):
        name = next(h.name for h in found.hits if h.start < end and h.end > start)
        rules.append(_Rule(start, end, "secret", name, redactor.marker))
    return rules


def _apply(text: str, rules: list[_Rule], tally: Counter[tuple[RedactionKind, str]]) -> str:
    """Earlier rules win overlaps; survivors are replaced in one pass and counted."""
    kept: list[_Rule] = []
    for rule in rules:
        if all(rule.end <= k.start or rule.start >= k.end for k in kept):
            kept.append(rule)
    out = text
    for rule in sorted(kept, key=lambda r: r.start, reverse=True):
        out = out[: rule.start] + rule.replacement + out[rule.end :]
        tally[(rule.kind, rule.pattern)] += 1
    return out


def _sanitize_args(
    cmd: str, args: Sequence[str], redactor: Redactor, identity: _Identity,
    tally: Counter[tuple[RedactionKind, str]],
) -> list[str] | str:
    flagged: dict[int, list[tuple[int, int]]] = {}
    for s in argv_secrets(args, cmd):
        flagged.setdefault(s.index, []).append((s.start, s.end))
    out: list[str] = []
    for i, arg in enumerate(args):
        shaped = redactor.find(arg)
        if shaped.withheld_reason is not None:
            return shaped.withheld_reason
        spans = merge(flagged.get(i, []) + [(h.start, h.end) for h in shaped.hits])
        rules = [_Rule(s, e, "argv_secret", "argv", f"<redacted:{e - s}>") for s, e in spans]
        out.append(_apply(arg, rules + identity.rules(arg), tally))
    return out


def sanitize_capture(
    cmd: str,
    args: Sequence[str],
    stdout: str,
    stderr: str,
    *,
    redactor: Redactor | None = None,
    home: str | None = None,
    user: str | None = None,
    host: str | None = None,
) -> SanitizedCapture:
    """Mask a run for sharing; ``home``/``user``/``host`` default to this machine's."""
    redactor = redactor or Redactor()
    current = _Identity.current()
    identity = _Identity(
        current.home if home is None else home,
        current.user if user is None else user,
        current.host if host is None else host,
    )
    tally: Counter[tuple[RedactionKind, str]] = Counter()
    texts: list[str] = []
    for text in (stdout, stderr):
        secrets = _secret_rules(redactor, text)
        if isinstance(secrets, str):
            return SanitizedCapture(cmd, [], True, "", "", [], secrets)
        texts.append(_apply(text, secrets + identity.rules(text), tally))
    clean_args = _sanitize_args(cmd, args, redactor, identity, tally)
    if isinstance(clean_args, str):
        return SanitizedCapture(cmd, [], True, "", "", [], clean_args)
    redactions = [Redaction(kind, pattern, n) for (kind, pattern), n in tally.items()]
    return SanitizedCapture(
        cmd,
        clean_args,
        tally[("argv_secret", "argv")] > 0,
        texts[0],
        texts[1],
        redactions,
    )
