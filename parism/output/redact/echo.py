"""Masking the echoes of one call: its arguments, cmd, cwd, failure message and hint.

Why an object per call: every echo used to read the argv for secret values again and to run its
own gate pass, and each of those RE2 calls costs tens of microseconds once the call's other
stages have pushed RE2 out of the CPU caches (about 0.4 ms per call in all). An ``Echo`` reads
the argv once, clears the echoes it is told about with one gate pass over all of them
(``Redactor.none_can_match``), and masks each distinct string at most once. What comes out is
exactly what ``mask_args`` / ``mask_text`` give for the same arguments; nothing outlives the
call that made the ``Echo``. An echo is shown text: an argument's bytes that are not UTF-8 (lone
surrogates) are echoed as U+FFFD (``truth.exact.display``), so every echo can be written as JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from parism.wire.envelope import Failure
from parism.output.redact.argv import argv_secrets
from parism.output.exact import display


class MaskedText(Protocol):
    """What ``Redactor.mask`` returns, as far as an echo reads it (``redactor.Masked``)."""

    text: str
    withheld_reason: str | None


class Masks(Protocol):
    """What an ``Echo`` asks of its redactor (``redactor.Redactor``, which builds it): named here so
    this module does not import the redactor that imports it."""

    enabled: bool
    marker: str

    def mask(self, text: str, *, truncated: bool = False) -> MaskedText: ...

    def none_can_match(self, texts: Sequence[str]) -> bool: ...

MIN_LITERAL = 3  # shorter argument values are not searched for in messages (`-p a` ≠ every "a")


class Echo:
    """The masks of one call's echoes; build with ``Redactor.echo``."""

    def __init__(self, redactor: Masks, args: Sequence[str], cmd: str | None = None,
                 expected: Iterable[str] = ()) -> None:
        """``expected``: texts the call will echo through ``text`` (cmd, cwd): cleared, with
        the arguments, in one gate pass."""
        self._redactor = redactor
        self._args = list(args)
        self._masked: dict[str, str] = {}
        if not redactor.enabled:
            return
        secrets = argv_secrets(self._args, cmd)
        marker = redactor.marker
        self._replaced = list(self._args)
        for s in reversed(secrets):
            self._replaced[s.index] = self._replaced[s.index][: s.start] + marker + self._replaced[s.index][s.end :]
        values = (self._args[s.index][s.start : s.end] for s in secrets)
        self._literals = [v for v in values if len(v) >= MIN_LITERAL]
        expected = [self._unquoted(t) for t in expected if t]
        if expected:
            self._clear(self._replaced + expected)

    def args(self) -> list[str]:
        """The arguments as they may be echoed: flag-positioned values and secret shapes masked."""
        if not self._redactor.enabled:
            return [display(arg) for arg in self._args]
        self._clear(self._replaced)
        return [display(self._mask(arg)) for arg in self._replaced]

    def text(self, text: str) -> str:
        """An echo (message, hint, cmd, cwd, audit line) that may quote the arguments: every value
        ``args`` hides is removed literally, then the output patterns apply."""
        if not self._redactor.enabled or not text:
            return display(text)
        return display(self._mask(self._unquoted(text)))

    def failure(self, failure: Failure) -> Failure:
        """A failure's echoes (message, hint) masked: each unquoted once, both cleared in one pass."""
        message, hint = failure.message, failure.hint
        if self._redactor.enabled:
            message, hint = (self._unquoted(t) if t else t for t in (message, hint))
            self._clear([t for t in (message, hint) if t])
            message, hint = (self._mask(t) if t else t for t in (message, hint))
        message, hint = (display(t) if t else t for t in (message, hint))
        return failure.model_copy(update={"message": message, "hint": hint or None})

    def _unquoted(self, text: str) -> str:
        for value in self._literals:
            text = text.replace(value, self._redactor.marker)
        return text

    def _clear(self, texts: list[str]) -> None:
        """Remember as unchanged every text no rule can match, when one pass can tell."""
        todo = [t for t in dict.fromkeys(texts) if t and t not in self._masked]
        if len(todo) > 1 and self._redactor.none_can_match(todo):
            self._masked.update((t, t) for t in todo)

    def _mask(self, text: str) -> str:
        found = self._masked.get(text)
        if found is None:
            masked = self._redactor.mask(text)
            found = self._masked[text] = (self._redactor.marker if masked.withheld_reason is not None
                                          else masked.text)
        return found
