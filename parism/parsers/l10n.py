"""What the locale-aware parsers share: month names and words of the languages they read.

Parism runs commands under ``LC_ALL=C.UTF-8``, but saved output (``parse_output``) may come from
a German or French terminal.  The language is never passed in: each parser recognises it from
the text (a translated header or label), using the tables here for what several of them print —
month abbreviations (``ls``: ``1. Dez``, ``déc.``), the ``total`` word (``insgesamt``).  The
tables are glibc's ``abmon`` and coreutils' translations as installed on Debian 12 (a test checks
them against the real locale data); any other language is refused with ``C_LOCALE_HINT``.
"""

from __future__ import annotations

import unicodedata

# glibc LC_TIME abmon, in month order
ABMON: dict[str, tuple[str, ...]] = {
    "C": ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
    "de": ("Jan", "Feb", "Mär", "Apr", "Mai", "Jun", "Jul", "Aug", "Sep", "Okt", "Nov", "Dez"),
    "fr": ("janv.", "févr.", "mars", "avril", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc."),
}
# coreutils' "total" (ls -l, wc, du -c)
TOTAL_WORDS: dict[str, str] = {"C": "total", "de": "insgesamt", "fr": "total"}

C_LOCALE_HINT = "rerun with LC_ALL=C (the output is in a language this parser does not read)"


def _key(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


_MONTHS: dict[str, dict[str, int]] = {
    lang: {_key(m): i + 1 for i, m in enumerate(names)} for lang, names in ABMON.items()
}


def month(name: str) -> int | None:
    """1–12 for a month abbreviation of any language read here (``Dez``, ``déc.``), else None.
    The tables do not contradict each other (``mai`` is May in both German and French)."""
    key = _key(name)
    for table in _MONTHS.values():
        if key in table:
            return table[key]
    return None
