"""``df`` — GNU (default, ``-h -H -T -i -P -k -m``), busybox, macOS and FreeBSD layouts.

Schema::

    {filesystems: [{filesystem, type?, mounted_on,
                    size_bytes?, used_bytes?, available_bytes?,            # block output (exact)
                    size?, used?, available?, size_bytes_approx?, ...      # -h/-H (printed text)
                    use_percent?: int|null, inodes?, iused?, ifree?, iused_percent?}],
     block_size?: int, unit: "1K-blocks"|"512-blocks"|"Size"|"Inodes"|..., multiplier?: 1024|1000,
     locale?: "de"|"fr"}

Columns are located by shape, not by splitting on spaces: each row is
``FILESYSTEM [TYPE] NUM NUM NUM PCT [NUM NUM PCT] MOUNT``, where the file system and the mount
point may contain spaces (macOS ``map auto_home``, ``/Volumes/Macintosh HD``).  The number of
value columns comes from the header.  Block counts are multiplied by the unit the header names
(any ``-B``/``--block-size``: ``1B-blocks``, ``4K-blocks``, ``1kB-blocks`` …; with ``-B1`` the
sizes are exact bytes, otherwise df rounds a partial block up)
(macOS prints 512-byte blocks); ``-h`` sizes keep the printed text and add an approximate byte
count (1024 multipliers; 1000 for ``-H``/``--si``).  GNU's wrapped layout (a long device name
alone on its line) is joined.  German and French column titles (``Dateisystem``, ``Sys. de
fichiers``, ``1K-Blöcke``) are read from the header and reported as the C ones (``unit`` is
``1K-blocks`` either way, plus ``locale``); ``-h`` sizes may carry a decimal comma (``4,0K``).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from parism.parsers.contract import (
    Lean,
    UNIX_OS,
    Contract,
    ParseInput,
    Parser,
    Unrecognized,
    Unsupported,
    always,
)
from parism.parsers.fs._common import split_lines
from parism.parsers.hints import drop_args
from parism.parsers.l10n import C_LOCALE_HINT
from parism.parsers.table import human_to_bytes, tokens_with_spans
from parism.argv.tokenize import Tokens

FLAGS: dict[str, str] = {
    **{f: "bool" for f in "-h -H -k -m -T -a -l -P -i -g --si --human-readable --all --local --portability "
       "--print-type --inodes --sync --no-sync --total".split()},
    **{f: "value" for f in "-t --type -x --exclude-type -B --block-size".split()},
}
# GNU's SIZE: an integer and a unit (K = k = 1024, KB = kB = 1000, KiB = 1024, ... Y). A unit
# without a number (-BK) prints every count with the unit's letter, and the thousands-grouping
# "'" prefix groups digits: neither is read
_SIZE = r"[1-9]\d*(?:[kmgtpezyKMGTPEZY](?:i?B)?)?"
VALUES = {"-B": _SIZE, "--block-size": _SIZE}

_PCT = r"(?:\d+%|-)"
_NUM = r"(?:\d+(?:[.,]\d+)?(?:[KMGTPEkmgtpe]i?B?|Bi?)?|-)"
_POWERS = "KMGTPEZY"
# the unit title GNU, BSD and busybox print: "1K-blocks", "1kB-blocks" (1000), "1B-blocks",
# "512-blocks", "4K-blocks", "1MB-blocks"
_BLOCK_TITLE_RE = re.compile(r"(\d+)(?:([kKMGTPEZY])(i?B)?|B)?-blocks")


def block_unit(title: str) -> int | None:
    """Bytes per block named by a size column's title, or None when it is not a block unit."""
    m = _BLOCK_TITLE_RE.fullmatch(title)
    if m is None:
        return None
    count, letter, suffix = int(m.group(1)), m.group(2), m.group(3)
    if letter is None:
        return count
    power = _POWERS.index(letter.upper()) + 1
    return count * (1000 if suffix == "B" else 1024) ** power


class DfRow(BaseModel):
    model_config = ConfigDict(extra="forbid")
    filesystem: str
    type: str | None = None
    mounted_on: str
    size_bytes: int | None = None
    used_bytes: int | None = None
    available_bytes: int | None = None
    size: str | None = None
    used: str | None = None
    available: str | None = None
    size_bytes_approx: int | None = None
    used_bytes_approx: int | None = None
    available_bytes_approx: int | None = None
    use_percent: int | None = None
    inodes: int | None = None
    iused: int | None = None
    ifree: int | None = None
    iused_percent: int | None = None


class DfResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    filesystems: list[DfRow]
    unit: str
    block_size: int | None = None
    multiplier: int | None = None
    locale: str | None = None
    warnings: list[str] | None = None


_VALUED = ("-B", "--block-size", "--output")


def _supports(tokens: Tokens) -> str | None:
    if tokens.has("-i", "--inodes") and tokens.has("-h", "-H", "--si", "--human-readable"):
        return "rounded inode counts (-i with -h/-H) are not read"
    return None


def _hint(args: list[str]) -> list[str]:
    """Drop -B/--block-size (and their values); with -i also the rounding flags."""
    inodes = any(a in ("-i", "--inodes") or (a[:1] == "-" and a[1:2] != "-" and "i" in a) for a in args)
    if inodes:
        return drop_args(args, "hH", ("--si", "--human-readable"), valued=_VALUED)
    return drop_args(args, valued=_VALUED)


CONTRACT = Contract(flags=FLAGS, values=VALUES, hint=_hint, supports=_supports)


# coreutils 9.1's German and French column titles → the C ones (block units: "1K-Blöcke",
# "blocs de 1K" → "1K-blocks"); the first title names the language
_TITLES: dict[str, dict[str, str]] = {
    "de": {"Dateisystem": "Filesystem", "Typ": "Type", "Größe": "Size", "Benutzt": "Used", "Verf.": "Avail",
           "Verfügbar": "Available", "Verw%": "Use%", "Kapazität": "Capacity", "IBenutzt": "IUsed",
           "IFrei": "IFree", "Eingehängt auf": "Mounted on"},
    "fr": {"Sys. de fichiers": "Filesystem", "Taille": "Size", "Utilisé": "Used", "Dispo": "Avail",
           "Disponible": "Available", "Uti%": "Use%", "Capacité": "Capacity", "Inœuds": "Inodes",
           "IUtil.": "IUsed", "ILibre": "IFree", "IUti%": "IUse%", "Monté sur": "Mounted on"},
}
_BLOCK_TITLE = {"de": (re.compile(r"(?<!\S)(\S+)-Blöcke(?!\S)"), r"\1-blocks"),
                "fr": (re.compile(r"(?<!\S)blocs de (\S+)(?!\S)"), r"\1-blocks")}
_TITLE_RE = {lang: re.compile(r"(?<!\S)(" + "|".join(map(re.escape, sorted(t, key=len, reverse=True))) + r")(?!\S)")
             for lang, t in _TITLES.items()}


def _c_header(header: str) -> tuple[str, str]:
    """(header with C titles, language) — German and French headers are translated back."""
    for lang, titles in _TITLES.items():
        if header.startswith(next(iter(titles))):
            rx, repl = _BLOCK_TITLE[lang]
            return _TITLE_RE[lang].sub(lambda m: titles[m.group(1)], rx.sub(repl, header)), lang
    return header, "C"


def _layout(header: str, pin: ParseInput, rows: list[str]) -> tuple[str, bool, bool, bool]:
    """(unit word, has type column, has BSD inode columns, inode-only listing) from the header."""
    words = header.split()
    if len(words) < 2 or words[0] != "Filesystem":
        if any(_match(ln, _shape(False), False) for ln in rows[:20]):  # df rows under another language's titles
            raise Unsupported("df: the column titles are in a language this parser does not read",
                              hint_args=pin.sub_args, hint_reason=C_LOCALE_HINT)
        raise Unrecognized("df: the output does not start with a 'Filesystem' header")
    has_type = words[1] == "Type"
    unit = words[2] if has_type else words[1]
    bsd_inodes = "iused" in words
    return unit, has_type, bsd_inodes, unit == "Inodes"


_NUM_RE = re.compile(_NUM)
_PCT_RE = re.compile(_PCT)
_INT_RE = re.compile(r"\d+")


def _shape(bsd_inodes: bool) -> tuple[re.Pattern[str], ...]:
    """The value columns of a row, in order: three sizes and a percentage (+ BSD inode trio)."""
    shape = (_NUM_RE, _NUM_RE, _NUM_RE, _PCT_RE)
    return shape + (_INT_RE, _INT_RE, _PCT_RE) if bsd_inodes else shape


def _match(line: str, shape: tuple[re.Pattern[str], ...], has_type: bool) -> dict[str, object] | None:
    """Leftmost run of tokens that fits ``shape``, with at least one token (the file system,
    plus the type column) before it. Linear in the number of tokens."""
    toks = tokens_with_spans(line)
    k, t = len(shape), 1 if has_type else 0
    for i in range(1 + t, len(toks) - k + 1):
        if all(rx.fullmatch(toks[i + j][2]) for j, rx in enumerate(shape)):
            out: dict[str, object] = {
                "filesystem": line[: toks[i - t][0]].strip(),
                "values": [tok[2] for tok in toks[i:i + k]],
                "mounted_on": line[toks[i + k - 1][1]:].strip(),
            }
            if has_type:
                out["type"] = toks[i - 1][2]
            return out
    return None


def _pct(text: str) -> int | None:
    return int(text[:-1]) if text.endswith("%") else None


def _values(row: dict[str, object], values: list[str], unit: str, human_base: int | None) -> None:
    names = ("size", "used", "available")
    for key, text in zip(names, values[:3]):
        if unit == "Inodes":
            row[{"size": "inodes", "used": "iused", "available": "ifree"}[key]] = int(text) if text.isdigit() else None
        elif human_base is not None:
            row[key] = text
            approx = human_to_bytes(text.removesuffix("Bi"), base=human_base) if text != "-" else None
            if approx is not None:
                row[f"{key}_bytes_approx"] = approx
        elif text.isdigit():
            row[f"{key}_bytes"] = int(text) * (block_unit(unit) or 0)
        elif text != "-":
            raise Unrecognized(f"df: {key} {text[:20]!r} is not a count of {unit}")
    row["iused_percent" if unit == "Inodes" else "use_percent"] = _pct(values[3])
    if len(values) == 7:
        row["iused"], row["ifree"], row["iused_percent"] = int(values[4]), int(values[5]), _pct(values[6])


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    lines = [ln for ln in split_lines(text) if ln.strip()]
    if not lines:
        return {"filesystems": [], "unit": ""}
    header, lang = _c_header(lines[0])
    unit, has_type, bsd_inodes, _ = _layout(header, pin, lines[1:])
    human = unit == "Size"
    if not human and block_unit(unit) is None and unit != "Inodes":
        raise Unsupported(f"df: size column '{unit}' is not a known unit", hint_args=drop_args(pin.sub_args, valued=_VALUED))
    base = (1000 if pin.tokens.has("-H", "--si") else 1024) if human else None
    shape = _shape(bsd_inodes)
    rows: list[dict[str, object]] = []
    warnings: list[str] = []
    pending = ""
    for n, line in enumerate(lines[1:], start=2):
        m = _match((pending + " " + line) if pending else line, shape, has_type)
        if m is None:
            if pending or " " in line.strip():
                warnings.append(f"line {n} does not fit the header layout: {line[:80]!r}")
                pending = ""
            else:
                pending = line.rstrip()  # GNU wraps a long device name onto its own line
            continue
        pending = ""
        values = m.pop("values")
        assert isinstance(values, list)
        _values(m, values, unit, base)
        rows.append(m)
    if not rows:
        raise Unrecognized("df: no row matched the header layout")
    if pending:
        warnings.append(f"last line has no values: {pending[:80]!r}")
    out: dict[str, object] = {"filesystems": rows, "unit": unit}
    if warnings:
        out["warnings"] = warnings
    if (size := block_unit(unit)) is not None:
        out["block_size"] = size
    if base is not None:
        out["multiplier"] = base
    if lang != "C":
        out["locale"] = lang
    return out


PARSER = Parser(
    id="df",
    evidence=True,
    lean=Lean(derived={"size_bytes_approx": "size", "used_bytes_approx": "used", "available_bytes_approx": "available"}),
    contract=CONTRACT,
    parse=parse,
    schema=DfResult,
    rows_key="filesystems",
    row_fields=tuple(DfRow.model_fields),
    header_lines=1,
    os=UNIX_OS,
    prints_always=always,
    examples=((), ("-h",), ("-hT",), ("-P",), ("-i",)),
)
