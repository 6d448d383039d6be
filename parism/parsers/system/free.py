"""free — memory and swap usage (procps on Linux).

Schema::

    {"unit": "KiB"|"bytes"|"MiB"|"GiB"|"TiB"|"PiB"|"kB"|"MB"|"GB"|"TB"|"PB"|"human",
     "unit_bytes": int|None,                 # bytes per unit; None for -h/--human
     "mem":  Row, "swap": Row|None, "total"?: Row, "low"?: Row, "high"?: Row, "comm"?: Row}
    Row = {"total", "used", "free", "shared", "buff_cache" | ("buffers", "cache"), "available"}

Values are integers in ``unit`` exactly as printed (plain ``free`` prints KiB — the unit says
so).  With ``-h``/``--human`` the printed text is kept (``"3.7G"``) and each value also gets
``<field>_bytes_approx`` (1024 multipliers, or 1000 with ``--si``): the text was rounded by
``free``, so the byte figure is approximate and its name says so.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.table import human_to_bytes, to_int

_UNITS: dict[str, tuple[str, int]] = {
    "-b": ("bytes", 1), "--bytes": ("bytes", 1),
    "-k": ("KiB", 1024), "--kibi": ("KiB", 1024), "--kilo": ("kB", 1000),
    "-m": ("MiB", 1024**2), "--mebi": ("MiB", 1024**2), "--mega": ("MB", 1000**2),
    "-g": ("GiB", 1024**3), "--gibi": ("GiB", 1024**3), "--giga": ("GB", 1000**3),
    "--tebi": ("TiB", 1024**4), "--tera": ("TB", 1000**4),
    "--pebi": ("PiB", 1024**5), "--peta": ("PB", 1000**5),
}
_HEADER_NAMES = {"total": "total", "used": "used", "free": "free", "shared": "shared",
                 "buff/cache": "buff_cache", "buffers": "buffers", "cache": "cache",
                 "available": "available"}
_ROWS = {"Mem:": "mem", "Swap:": "swap", "Total:": "total", "Low:": "low", "High:": "high", "Comm:": "comm"}


class Free(BaseModel):
    model_config = ConfigDict(extra="allow")
    unit: str
    unit_bytes: int | None = None
    mem: dict[str, Any]
    swap: dict[str, Any] | None = None


def parse(text: str, pin: ParseInput) -> dict[str, Any]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    header = next((ln for ln in lines if "total" in ln.split() and "used" in ln.split()), None)
    if header is None:
        raise Unrecognized("no 'total used free' header line")
    cols = [_HEADER_NAMES.get(w, w) for w in header.split()]
    human = pin.tokens.has("-h", "--human")
    si = pin.tokens.has("--si")
    unit, unit_bytes = "KiB", 1024
    for t in pin.tokens.flags:
        if t.name in _UNITS:
            unit, unit_bytes = _UNITS[t.name]
    out: dict[str, Any] = {"unit": "human" if human else unit, "unit_bytes": None if human else unit_bytes}
    for ln in lines:
        label = ln.split(None, 1)[0]
        key = _ROWS.get(label)
        if key is None:
            continue
        values = ln.split()[1:]
        row: dict[str, Any] = {}
        for name, val in zip(cols, values):
            if human:
                row[name] = val
                approx = human_to_bytes(val, 1000 if si else 1024)
                row[f"{name}_bytes_approx"] = approx
            else:
                num = to_int(val)
                if num is None:
                    raise Unrecognized(f"non-numeric value {val!r} in {label} row (use -h for suffixed sizes)")
                row[name] = num
        out[key] = row
    if "mem" not in out:
        raise Unrecognized("no 'Mem:' row")
    out.setdefault("swap", None)
    return out


PARSER = Parser(
    id="free",
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
    examples=((), ("-b",), ("-h",), ("-m",)),
)
