"""Public types for parser packs (contract §17; spec decision 6: packs are Python).

A pack is a directory whose module (``parser.py``, or ``__init__.py``) exports ``PACK``, a
:class:`ParserPack`. It is imported only inside its own worker process (``parism/packs/``), so
this module stays free of pydantic and of the engine: a worker imports nothing else of Parism.

The declarations (``accepted_flags`` …) feed the same contract check the built-in parsers use
(``parism/parsers/contract.py``): an argument form the pack does not declare is
``unsupported_format``; ``rows_key`` lets filters, budgets and compact find the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


class UnrecognizedOutputError(Exception):
    """Raise from ``parse`` when the text has data lines but none could be read
    (reported as ``unrecognized_output``, not as a crash)."""


@dataclass(frozen=True)
class PackContext:
    """What ``parse`` gets besides the text: the OS the output came from and the row cap."""

    os: str = "linux"
    max_items: int = 0


@dataclass(frozen=True)
class Fixture:
    input: str
    args: Sequence[str] = ()
    expected: Any = None


@dataclass(frozen=True)
class ParserPack:
    """One external parser.

    ``schema`` is a pydantic model class or a JSON Schema dict (validated in the worker when
    ``parsers.strict_schemas`` is on, and always by ``parism test``). ``accepted_flags`` maps a
    flag to a tokenizer kind (``bool``, ``value``, ``number`` …); ``accepted_positionals`` is
    ``{"max": N}`` (and optionally ``"min"``). ``supports(args) -> str | None`` may refuse a form
    with a reason. ``noise`` is a regex (a string) of lines that are not data.
    """

    name: str
    parse: Callable[[str, list[str], PackContext], Any]
    schema: Any = None
    fixtures: Sequence[Fixture] = ()
    accepted_flags: Mapping[str, str] = field(default_factory=dict)
    accepted_positionals: Mapping[str, int] = field(default_factory=lambda: {"max": 0})
    supports: Callable[[list[str]], str | None] | None = None
    header_lines: int = 0
    noise: str | None = None
    rows_key: str | None = None
    row_fields: Sequence[str] = ()
    single_dash_long: bool = False  # "-br" is one flag (ip, find), not -b -r
    version: str = "0.1.0"
