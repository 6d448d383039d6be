"""Secret masking. PLACEHOLDER interface until the redactor lands: masks nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from parism.envelope import RegexEngineReport


@dataclass
class Masked:
    text: str
    count: int = 0
    withheld_reason: str | None = None  # set when a pattern could not finish: text is withheld


class Redactor:
    @classmethod
    def from_config(cls, cfg: Any) -> "Redactor":
        return cls()

    def mask(self, text: str, *, truncated: bool = False) -> Masked:
        return Masked(text)

    def mask_args(self, args: Sequence[str]) -> list[str]:
        return list(args)

    def report(self) -> RegexEngineReport:
        return RegexEngineReport(used="none")
