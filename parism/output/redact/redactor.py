"""The redactor: masks secrets in command output and in everything that echoes a request.

Why it is built this way:
- patterns are compiled once per configuration (``from_config``), never per call;
- every hit of every rule is collected against the *original* text, overlapping hits are merged
  and replaced in one pass, so one rule can never hide a secret from another by rewriting it;
- text in which no built-in rule can match (most output) costs one RE2 pass (``_GATE``, one
  alternation of every built-in rule, or of its wider ``gate`` source); otherwise an RE2 Set
  picks the built-in rules that may match and only those run; user patterns always run on
  their own;
- the fallback engine is bounded by a time budget per call; when it runs out, the text is
  withheld (``Masked.withheld_reason``) — fail closed, never returned unmasked;
- an invalid user pattern is a configuration problem (``problems()``), not a silent skip; until
  it is fixed every ``mask`` call withholds its text;
- what ``mask`` masked once stays masked: its values are remembered, hashed (``memory.py``), and
  any slice of 12+ characters of them is masked in every later text of the same redactor;
- a text may hold lone surrogates (bytes that are not UTF-8, ``surrogateescape``; an argument a
  shell passed): RE2 reads UTF-8 only, so the rules run on its display form (each surrogate as
  U+FFFD, one code point for one) and the spans found there are masked in the text itself.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TYPE_CHECKING

from parism.wire.envelope import Failure, RegexEngineReport, RegexFallback
from parism.output.redact.echo import Echo
from parism.output.redact.engine import (
    CompiledPattern,
    InvalidPattern,
    PatternTimeout,
    Gate,
    compile_pattern,
    merge,
    replace_spans,
)
from parism.output.redact.kube import KIND_SECRET_SOURCE, secret_data_spans
from parism.output.redact.memory import SecretMemory
from parism.output.redact.patterns import DEFAULT_PATTERNS, TRUNCATED_TAIL_PATTERNS
from parism.output.exact import display

if TYPE_CHECKING:
    from parism.config import LoadedConfig

DEFAULT_MARKER = "[REDACTED]"
FALLBACK_TIME_LIMIT_S = 0.25  # total budget of the fallback patterns for one text
KUBE_RULE = "kubernetes_secret_data"
PatternsMode = Literal["extend", "replace"]


@dataclass
class Masked:
    """Masked text; ``withheld_reason`` set means ``text`` is empty and must not be replaced."""

    text: str
    count: int = 0
    withheld_reason: str | None = None
    fallback_ran: bool = False  # a non-RE2 pattern ran: the envelope carries regex_engine


@dataclass(frozen=True)
class Hit:
    """One rule's match, before merging: ``name`` is the rule (for fixture redaction logs)."""

    start: int
    end: int
    name: str


@dataclass(frozen=True)
class Found:
    hits: list[Hit]
    withheld_reason: str | None
    fallback_ran: bool


def _compile_user(patterns: Sequence[str]) -> tuple[list[CompiledPattern], list[str]]:
    compiled: list[CompiledPattern] = []
    problems: list[str] = []
    for i, source in enumerate(patterns):
        try:
            compiled.append(compile_pattern(source, source))
        except InvalidPattern as exc:
            problems.append(f"guard.secrets.output_patterns[{i}]: {exc}")
    return compiled, problems


_DEFAULTS = [compile_pattern(p.name, p.regex, p.ignore) for p in DEFAULT_PATTERNS]
_TAILS = [compile_pattern(p.name, p.regex, p.ignore) for p in TRUNCATED_TAIL_PATTERNS]
# Sources 0..n-1 are the default rules, source n the Kubernetes Secret test: a rule (or the kube
# rule) the gate does not select cannot yield a hit in the text.
_GATE = Gate([p.gate_source for p in DEFAULT_PATTERNS] + [KIND_SECRET_SOURCE])
_KUBE_SOURCE = len(DEFAULT_PATTERNS)


def validate_output_patterns(patterns: Sequence[str] | None) -> list[str]:
    """Config-time check: one message per pattern that no engine compiles (names the pattern)."""
    return _compile_user(patterns or ())[1]


class Redactor:
    """Masks secrets; build with ``from_config`` (or directly in tests and library code)."""

    def __init__(
        self,
        patterns: Sequence[str] = (),
        *,
        mode: PatternsMode = "extend",
        enabled: bool = True,
        marker: str = DEFAULT_MARKER,
        fallback_time_limit_s: float = FALLBACK_TIME_LIMIT_S,
    ) -> None:
        user, self._problems = _compile_user(patterns)
        self._user = user
        self._patterns = ([] if mode == "replace" else list(_DEFAULTS)) + user
        self._use_builtin_rules = mode != "replace"
        self.enabled = enabled
        self.marker = marker
        self._limit_s = fallback_time_limit_s
        self.memory = SecretMemory()  # one per redactor: per engine, never shared between engines

    @classmethod
    def from_config(cls, cfg: LoadedConfig) -> Redactor:
        """Read ``guard.secrets`` of a ``LoadedConfig`` (``parism.config.model.Secrets``)."""
        secrets = cfg.settings.guard.secrets
        # ``output_patterns = []`` (set, and empty) is the seed's switch for output redaction
        # off: no pattern of the user's and no built-in rule, as "replace" with no patterns.
        off = secrets.output_patterns == []
        return cls(
            secrets.output_patterns or (),
            mode="replace" if off else secrets.output_patterns_mode,
            enabled=secrets.output_redaction_enabled,
            marker=secrets.redaction_marker or DEFAULT_MARKER,
        )

    def problems(self) -> list[str]:
        """Invalid user patterns, each naming its config key and the pattern (config errors)."""
        return list(self._problems)

    def report(self) -> RegexEngineReport:
        """``regex_engine`` for describe: RE2 plus every pattern that had to fall back."""
        if not self.enabled or not self._patterns:
            return RegexEngineReport(used="none")
        fallbacks = [
            RegexFallback(pattern=p.source, reason=p.fallback_reason)
            for p in self._patterns
            if p.fallback_reason is not None
        ]
        return RegexEngineReport(used="re2", fallbacks=fallbacks)

    def find(self, text: str, *, truncated: bool = False, subject: bytes | None = None) -> Found:
        """Every rule's hits in ``text`` (unmerged), or why the text must be withheld.
        ``subject``: the bytes ``text`` was read from as Latin-1 (a stream that is not text),
        which RE2 searches instead of its own UTF-8 copy of ``text`` (``Rule.spans``); the
        fallback engine reads ``text`` itself."""
        if self._problems:
            return Found([], "invalid redaction pattern: " + "; ".join(self._problems), False)
        text = display(text)  # same offsets; what RE2 can read
        chosen = _GATE.select(text if subject is None else subject) if self._use_builtin_rules else frozenset()
        rules = [rule for i, rule in enumerate(_DEFAULTS) if i in chosen] + self._user + (
            _TAILS if truncated and self._use_builtin_rules else [])
        hits: list[Hit] = []
        fallback_ran = False
        spent = 0.0  # the budget is for fallback patterns only: RE2 time does not count
        for rule in rules:
            fallback_ran = fallback_ran or not rule.on_re2
            started = time.monotonic()
            try:
                hits.extend(Hit(s, e, rule.name) for s, e in rule.spans(
                    text, started + self._limit_s - spent, subject if rule.on_re2 else None))
            except PatternTimeout as exc:
                reason = (
                    f"redaction pattern '{exc.source}' did not finish within "
                    f"{int(self._limit_s * 1000)} ms; the text is withheld rather than "
                    "returned unmasked"
                )
                return Found([], reason, True)
            if not rule.on_re2:
                spent += time.monotonic() - started
        if _KUBE_SOURCE in chosen:
            hits.extend(Hit(s, e, KUBE_RULE) for s, e in secret_data_spans(text))
        return Found([h for h in hits if text[h.start : h.end] != self.marker], None, fallback_ran)

    def mask(self, text: str, *, truncated: bool = False, subject: bytes | None = None) -> Masked:
        """Mask ``text``; ``truncated`` also masks a secret cut short at the end of the text;
        ``subject`` as for :meth:`find`."""
        if not self.enabled or not text:
            return Masked(text)
        found = self.find(text, truncated=truncated, subject=subject)
        if found.withheld_reason is not None:
            return Masked("", 0, found.withheld_reason, found.fallback_ran)
        shown = display(text)  # the text the rules read (``find``); its offsets are the text's
        spans = merge([(h.start, h.end) for h in found.hits])
        for start, end in spans:
            self.memory.remember(shown[start:end])
        spans = merge(spans + self.memory.spans(shown))  # slices of what was masked before
        return Masked(replace_spans(text, spans, self.marker), len(spans), None, found.fallback_ran)

    def none_can_match(self, texts: Sequence[str]) -> bool:
        """True when ``mask`` would return every one of ``texts`` unchanged, known from one gate
        pass over them joined by newlines (and one look into the memory of masked values).

        Why that is enough: a rule's match inside one text is still a match in the joined text
        (the newline around it is what ``\\b``, ``(?m)^`` and ``(?m)$`` see at a text's ends; no
        built-in source uses ``\\A`` or a non-multiline ``^``/``$``, and the one ``\\z``, an
        unterminated private key, is still reached through ``[\\s\\S]*?``). User patterns may use
        anything, so with user patterns (or invalid ones) the answer is always False."""
        if self._user or self._problems or not self.enabled:
            return False
        joined = display("\n".join(texts))
        return (not self._use_builtin_rules or not _GATE.select(joined)) and not self.memory.spans(joined)

    def echo(self, args: Sequence[str], cmd: str | None = None, *, expected: Sequence[str] = ()) -> Echo:
        """The masks of one call's echoes (``parism.output.redact.echo``): build once per call."""
        return Echo(self, args, cmd, expected)

    def mask_args(self, args: Sequence[str], *, cmd: str | None = None) -> list[str]:
        """Arguments as they may be echoed: flag-positioned values and secret shapes masked."""
        return Echo(self, args, cmd).args()

    def mask_failure(self, failure: Failure, *, args: Sequence[str] = (), cmd: str | None = None) -> Failure:
        """A failure's echoes (message, hint) masked like any other echo of the call."""
        return Echo(self, args, cmd).failure(failure)

    def mask_text(self, text: str, *, args: Sequence[str] = (), cmd: str | None = None) -> str:
        """Mask an echo (guard/failure message, hint, audit line) that may quote ``args``.

        Besides the output patterns, every value that ``mask_args`` would hide is removed
        literally, so ``--password hunter2`` cannot come back inside a sentence.
        """
        return Echo(self, args, cmd).text(text)
