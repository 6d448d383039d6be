"""``du`` — ``SIZE<TAB>PATH`` lines (GNU, busybox, macOS, FreeBSD), ``-s -h -a -c -d`` …

Schema::

    {entries: [{path, size: "12K" (as printed), size_bytes?: int (blocks × unit, exact),
                size_bytes_approx?: int (-h/--si), total?: true}],
     unit: "1K-blocks"|"512-byte blocks"|"bytes"|"1M-blocks"|"1G-blocks"|"human", block_size?: int}

Paths are everything after the first TAB, untrimmed (a trailing space is part of the name).
The block unit is du's: 1 KiB on GNU/busybox, **512 bytes on macOS and FreeBSD** unless ``-k``;
``-m`` MiB, ``-b`` bytes (GNU), ``-h`` rounded text with 1024 multipliers (``--si``: 1000).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from parism.parsers.contract import UNIX_OS, Contract, ParseInput, Parser, Unrecognized
from parism.parsers.fs._common import split_lines
from parism.parsers.hints import drop_args
from parism.parsers.table import human_to_bytes
from parism.argv.tokenize import Tokens

FLAGS: dict[str, str] = {
    **{f: "bool" for f in "-s -h -a -c -k -m -g -b -x -S -H -D -P -L -l --summarize --human-readable --all "
       "--total --bytes --one-file-system --separate-dirs --dereference --dereference-args --no-dereference "
       "--count-links --si --apparent-size".split()},
    **{f: "number" for f in ("-d", "--max-depth")},  # du: "invalid maximum depth" otherwise
    **{f: "value" for f in "--exclude -t --threshold -B --block-size -X --exclude-from".split()},
}
VALUES = {"-B": "1|1K|1k|1024|1M|1m|1048576", "--block-size": "1|1K|1k|1024|1M|1m|1048576"}
_BLOCK_VALUES = {"1": 1, "1K": 1024, "1k": 1024, "1024": 1024, "1M": 1048576, "1m": 1048576, "1048576": 1048576}


class DuEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    size: str
    size_bytes: int | None = None
    size_bytes_approx: int | None = None
    total: bool | None = None


class DuResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entries: list[DuEntry]
    unit: str
    block_size: int | None = None
    warnings: list[str] | None = None


CONTRACT = Contract(flags=FLAGS, values=VALUES, hint=lambda a: drop_args(a, long=("--time",), valued=("-B", "--block-size")))


def unit_of(tokens: Tokens, os: str) -> tuple[str, int | None, int | None]:
    """(unit name, bytes per block or None for -h, multiplier for -h)."""
    if tokens.has("-h", "--human-readable", "--si"):
        return "human", None, 1000 if tokens.has("--si") else 1024
    last: tuple[str, int] | None = None
    for t in tokens.flags:  # the last size flag wins, as in du itself
        if t.name == "-k":
            last = ("1K-blocks", 1024)
        elif t.name == "-m":
            last = ("1M-blocks", 1048576)
        elif t.name == "-g":
            last = ("1G-blocks", 1 << 30)
        elif t.name in ("-b", "--bytes"):
            last = ("bytes", 1)
        elif t.name in ("-B", "--block-size") and t.value in _BLOCK_VALUES:
            size = _BLOCK_VALUES[t.value]
            last = ("bytes" if size == 1 else f"{t.value}-blocks", size)
    if last is None:
        last = ("1K-blocks", 1024) if os == "linux" else ("512-byte blocks", 512)
    return last[0], last[1], None


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    unit, block, mult = unit_of(pin.tokens, pin.os)
    totals = pin.tokens.has("-c", "--total")
    entries: list[dict[str, object]] = []
    warnings: list[str] = []
    lines = split_lines(text)
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        size, tab, path = line.partition("\t")
        size = size.strip()
        ok = bool(tab) and (size.isdigit() if block is not None else human_to_bytes(size) is not None)
        if not ok:
            if entries and not tab:  # a path with a newline continues on this line
                entries[-1]["path"] = f"{entries[-1]['path']}\n{line}"
                warnings.append(f"line {n} continues the path above (names with newlines)")
            else:
                warnings.append(f"line {n} is not SIZE<TAB>PATH: {line[:80]!r}")
            continue
        row: dict[str, object] = {"path": path, "size": size}
        if block is not None:
            row["size_bytes"] = int(size) * block
        else:
            row["size_bytes_approx"] = human_to_bytes(size, base=mult or 1024)
        entries.append(row)
    if totals and entries and entries[-1]["path"] == "total":
        entries[-1]["total"] = True
    if not entries and warnings:
        raise Unrecognized("du: no SIZE<TAB>PATH line")
    out: dict[str, object] = {"entries": entries, "unit": unit}
    if block is not None:
        out["block_size"] = block
    if warnings:
        out["warnings"] = warnings
    return out


PARSER = Parser(
    id="du",
    evidence=True,
    contract=CONTRACT,
    parse=parse,
    schema=DuResult,
    rows_key="entries",
    row_fields=tuple(DuEntry.model_fields),
    os=UNIX_OS,
    examples=(("-sh", "."), ("-h", "-d", "1"), ("-a",), ("-sc", "a", "b")),
)
