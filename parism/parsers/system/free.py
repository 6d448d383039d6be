"""free — memory and swap usage (procps on Linux, toybox; C, German and French output).

Schema::

    {"unit": "KiB"|"bytes"|"MiB"|"GiB"|"TiB"|"PiB"|"kB"|"MB"|"GB"|"TB"|"PB"|"human",
     "unit_bytes": int|None,                 # bytes per unit; None for -h/--human
     "mem":  Row, "swap": Row|None, "total"?: Row, "low"?: Row, "high"?: Row, "comm"?: Row,
     "buffers_cache"?: {"used", "free"},     # the "-/+ buffers/cache:" row (toybox, old procps)
     "implementation"?: "toybox", "locale"?: "de"|"fr"}
    Row = {"total", "used", "free", "shared", "buff_cache" | ("buffers", "cache"), "available"}

Values are integers in ``unit`` exactly as printed: plain procps ``free`` prints KiB, toybox
``free`` prints bytes (its header ``total used free shared buffers`` has no cache column, which
old procps always printed) — the unit says which.  With ``-h``/``--human`` the printed text is kept
(``"3.7G"``, German ``"8,7Mi"``) and each value also gets ``<field>_bytes_approx`` (1024
multipliers, or 1000 with ``--si``): the text was rounded by ``free``, so the byte figure is
approximate and its name says so.  The language is read from the header itself (procps
translates the column titles and row labels); other languages are refused with an
``LC_ALL=C`` hint.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized, Unsupported, always
from parism.parsers.l10n import C_LOCALE_HINT
from parism.parsers.table import human_to_bytes, to_int

_UNITS: dict[str, tuple[str, int]] = {
    "-b": ("bytes", 1), "--bytes": ("bytes", 1),
    "-k": ("KiB", 1024), "--kibi": ("KiB", 1024), "--kilo": ("kB", 1000),
    "-m": ("MiB", 1024**2), "--mebi": ("MiB", 1024**2), "--mega": ("MB", 1000**2),
    "-g": ("GiB", 1024**3), "--gibi": ("GiB", 1024**3), "--giga": ("GB", 1000**3),
    "--tebi": ("TiB", 1024**4), "--tera": ("TB", 1000**4),
    "--pebi": ("PiB", 1024**5), "--peta": ("PB", 1000**5),
}
# toybox: bytes unless -k/-m/-g, and -t is tebibytes there (procps: the total row)
_TOYBOX_UNITS = {"-b": ("bytes", 1), "-k": ("KiB", 1024), "-m": ("MiB", 1024**2), "-g": ("GiB", 1024**3),
                 "-t": ("TiB", 1024**4)}
# column titles and row labels per language (procps-ng translations, as printed)
_HEADER_NAMES: dict[str, dict[str, str]] = {
    "C": {"total": "total", "used": "used", "free": "free", "shared": "shared", "buff/cache": "buff_cache",
          "buffers": "buffers", "cache": "cache", "cached": "cache", "available": "available"},
    "de": {"gesamt": "total", "benutzt": "used", "frei": "free", "gemns.": "shared", "gemeins.": "shared",
           "Puffer/Cache": "buff_cache", "Puffer": "buffers", "Cache": "cache", "verfügbar": "available"},
    "fr": {"total": "total", "utilisé": "used", "libre": "free", "partagé": "shared", "tamp/cache": "buff_cache",
           "tampons": "buffers", "cache": "cache", "disponible": "available"},
}
_ROWS: dict[str, dict[str, str]] = {
    "C": {"Mem:": "mem", "Swap:": "swap", "Total:": "total", "Low:": "low", "High:": "high", "Comm:": "comm"},
    "de": {"Speicher:": "mem", "Swap:": "swap", "Gesamt:": "total", "Niedrig:": "low", "Hoch:": "high",
           "Comm:": "comm"},
    "fr": {"Mem:": "mem", "Échange:": "swap", "Total:": "total", "Basse:": "low", "Haute:": "high",
           "Dédié:": "comm"},
}
_TOYBOX_HEADER = ["total", "used", "free", "shared", "buffers"]
_BUFFERS_CACHE = "-/+"
_LABELLED_NUMBERS = re.compile(r"\s*\S+:\s+\d+(?:\s+\d+){2,}\s*$")


class Free(BaseModel):
    model_config = ConfigDict(extra="allow")
    unit: str
    unit_bytes: int | None = None
    mem: dict[str, Any]
    swap: dict[str, Any] | None = None


def _header(lines: list[str], pin: ParseInput) -> tuple[str, list[str]]:
    """(language, column titles) of the first line made only of one language's titles."""
    for line in lines:
        words = line.split()
        for lang, names in _HEADER_NAMES.items():
            if len(words) >= 3 and all(w in names for w in words) and names.get(words[1]) == "used":
                return lang, words
    if any(_LABELLED_NUMBERS.match(ln) for ln in lines):
        raise Unsupported("free: the column titles are in a language this parser does not read",
                          hint_args=pin.sub_args, hint_reason=C_LOCALE_HINT)
    raise Unrecognized("no 'total used free' header line")


def _unit(pin: ParseInput, toybox: bool) -> tuple[str, int]:
    table = _TOYBOX_UNITS if toybox else _UNITS
    unit = ("bytes", 1) if toybox else ("KiB", 1024)
    for t in pin.tokens.flags:
        if t.name in table:
            unit = table[t.name]
    return unit


def _row(label: str, values: list[str], cols: list[str], human: bool, base: int) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for name, val in zip(cols, values):
        if human:
            row[name] = val
            row[f"{name}_bytes_approx"] = human_to_bytes(val, base)
        else:
            num = to_int(val)
            if num is None:
                raise Unrecognized(f"non-numeric value {val!r} in {label} row (use -h for suffixed sizes)")
            row[name] = num
    return row


def parse(text: str, pin: ParseInput) -> dict[str, Any]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    lang, titles = _header(lines, pin)
    names = _HEADER_NAMES[lang]
    cols = [names[w] for w in titles]
    toybox = lang == "C" and titles == _TOYBOX_HEADER
    human = pin.tokens.has("-h", "--human")
    base = 1000 if pin.tokens.has("--si") else 1024
    unit, unit_bytes = _unit(pin, toybox)
    out: dict[str, Any] = {"unit": "human" if human else unit, "unit_bytes": None if human else unit_bytes}
    labels = _ROWS[lang]
    for ln in lines:
        label, *values = ln.split()
        if label == _BUFFERS_CACHE and values[:1] == ["buffers/cache:"]:
            out["buffers_cache"] = _row("-/+ buffers/cache:", values[1:], ["used", "free"], human, base)
        elif (key := labels.get(label)) is not None:
            out[key] = _row(label, values, cols, human, base)
    if "mem" not in out:
        raise Unrecognized("no 'Mem:' row")
    out.setdefault("swap", None)
    if toybox:
        out["implementation"] = "toybox"
    if lang != "C":
        out["locale"] = lang
    return out


PARSER = Parser(
    id="free",
    evidence=True,
    contract=Contract(
        flags={f: "bool" for f in (*_UNITS, "-h", "--human", "--si", "-w", "--wide", "-t", "--total",
                                   "-l", "--lohi", "-v", "--committed")},
        max_positionals=0,
        exclusive=((*_UNITS, "-h", "--human"),),
    ),
    parse=parse,
    schema=Free,
    header_lines=1,
    row_fields=("total", "used", "free", "shared", "buff_cache", "buffers", "cache", "available"),
    os=frozenset({"linux"}),
    prints_always=always,
    examples=((), ("-b",), ("-h",), ("-m",)),
)
