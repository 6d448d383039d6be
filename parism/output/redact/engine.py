"""Compiled redaction patterns: RE2 first, a stoppable fallback for what RE2 rejects.

Why two engines (spec decision 7): RE2 matches in time linear in the text, so no pattern and no
output can stall a call. Users sometimes need a construct RE2 refuses (backreferences,
lookaround); such a pattern runs on the ``regex`` package, whose matching functions take a
``timeout`` and raise ``TimeoutError`` when it is exceeded. The caller then withholds the text
(fail closed) instead of returning it half-masked.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import re2
import regex


Span = tuple[int, int]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every rejected pattern on our stderr
_OPTIONS.max_mem = 64 << 20  # room for long alternations; still bounded


class PatternTimeout(Exception):
    """A fallback pattern did not finish within its time budget."""

    def __init__(self, source: str) -> None:
        super().__init__(source)
        self.source = source


class InvalidPattern(ValueError):
    """Neither RE2 nor the fallback engine accepts the pattern."""


def re2_error(exc: Exception) -> str:
    """RE2 reports its errors as bytes; make them a readable sentence."""
    arg = exc.args[0] if exc.args else exc
    return arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)


def compile_re2(pattern: str) -> re2._Regexp:
    """Compile on RE2 or raise ``re2.error``; used for built-in rules that must be RE2."""
    return re2.compile(pattern, _OPTIONS)


class Gate:
    """Which of a fixed list of RE2 sources can match a text — one pass when none can.

    Why: most text contains no secret, and one linear pass that says so is far cheaper than one
    pass per rule. ``select`` first runs one alternation of every source: no match means no
    source matches anywhere. Otherwise an ``re2.Set`` names the sources that match; a Set that
    gives up (its DFA out of memory) answers "none", which cannot be true after the alternation
    matched, so then every source is selected. Each source keeps its inline flags inside its
    ``(?:…)`` (RE2 scopes them to the group); only fixed, tested built-in sources go in, so no
    ``\\Q`` or stray ``)`` can change what another source means. The alternation itself never
    misses: RE2 falls back to its NFA when the DFA runs out of memory.
    """

    def __init__(self, sources: list[str]) -> None:
        self._every = frozenset(range(len(sources)))
        alternation = "|".join(f"(?:{s})" for s in sources)
        try:
            self._any: re2._Regexp | None = compile_re2(alternation)
        except re2.error:
            self._any = None
        self._set: re2.Set | None = re2.Set.SearchSet(_OPTIONS)
        try:
            for source in sources:
                self._set.Add(source)
            self._set.Compile()
        except re2.error:
            self._set = None

    @property
    def complete(self) -> bool:
        """Both passes compiled (otherwise ``select`` errs towards running every rule)."""
        return self._any is not None and self._set is not None

    def select(self, text: str | bytes) -> frozenset[int]:
        """Indices of the sources that may match ``text`` (a superset of those that do); bytes
        are searched as they are (``Redactor.find``'s ``subject``)."""
        if self._any is not None and self._any.search(text) is None:
            return frozenset()
        matched = self._set.Match(text) if self._set is not None else None
        return frozenset(matched) if matched else self._every


@dataclass(frozen=True)
class CompiledPattern:
    """One redaction rule ready to run; ``name`` identifies it in logs and fixture records."""

    name: str
    source: str
    matcher: re2._Regexp | regex.Pattern[str]
    fallback_reason: str | None  # why RE2 could not take it; None when it runs on RE2
    ignore: frozenset[str] = frozenset()  # matched values this rule never masks

    @property
    def secret_groups(self) -> list[int]:
        """Groups named ``secret…``: only they are masked; none means the whole match."""
        return [i for name, i in self.matcher.groupindex.items() if name.startswith("secret")]

    @property
    def on_re2(self) -> bool:
        return self.fallback_reason is None

    def spans(self, text: str, deadline: float, subject: bytes | None = None) -> list[Span]:
        """Spans to mask; a fallback pattern past ``deadline`` raises ``PatternTimeout``.
        ``subject``: ``text``'s bytes, one per character (``text`` is their Latin-1 reading),
        searched by RE2 as they are — its spans are then character spans of ``text`` too, and
        RE2 makes no UTF-8 copy of ``text`` (``parism/output/redact/binary.py``)."""
        groups = self.secret_groups
        if self.on_re2:
            matches = list(self.matcher.finditer(text if subject is None else subject))
        else:
            matches = self._bounded_matches(text, deadline)
        found: list[Span] = []
        for match in matches:
            for start, end in [match.span(i) for i in groups] if groups else [match.span()]:
                if end > start >= 0 and text[start:end].strip().lower() not in self.ignore:
                    found.append((start, end))
        return found


    def _bounded_matches(self, text: str, deadline: float) -> list[Any]:
        """All matches of a fallback pattern, or ``PatternTimeout`` once ``deadline`` passes.

        ``regex`` stops a search that runs past its ``timeout``; checking the clock between
        matches as well bounds a pattern that finds many matches, each one slowly.
        """
        matches: list[Any] = []
        try:
            for match in self.matcher.finditer(text, timeout=max(deadline - time.monotonic(), 0.001)):
                matches.append(match)
                if time.monotonic() > deadline:
                    raise PatternTimeout(self.source)
        except TimeoutError as exc:
            raise PatternTimeout(self.source) from exc
        return matches


def compile_pattern(name: str, source: str, ignore: frozenset[str] = frozenset()) -> CompiledPattern:
    """RE2 when it can; the ``regex`` engine when RE2 refuses; ``InvalidPattern`` otherwise."""
    try:
        return CompiledPattern(name, source, compile_re2(source), None, ignore)
    except re2.error as exc:
        reason = f"RE2 cannot compile it ({re2_error(exc)}); runs on the regex package with a time limit"
    try:
        return CompiledPattern(name, source, regex.compile(source, regex.V0), reason)
    except (regex.error, ValueError, TypeError, OverflowError) as exc:
        raise InvalidPattern(f"invalid regular expression '{source}': {exc}") from exc


def merge(spans: list[Span]) -> list[Span]:
    """Sorted, overlap-free spans (touching or overlapping hits become one mask)."""
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def replace_spans(text: str, spans: list[Span], marker: str) -> str:
    """``text`` with every (merged) span replaced by ``marker``."""
    parts: list[str] = []
    pos = 0
    for start, end in spans:
        parts.append(text[pos:start])
        parts.append(marker)
        pos = end
    parts.append(text[pos:])
    return "".join(parts)
