"""``ps`` — one row per process, columns located from the header (or from ``-o``).

Schema::

    {processes: [{user?, uid?, pid: int, ppid?: int, cpu?: float, mem?: float, vsz?: int,
                  rss?: int, tty?, stat?, start?, time?, elapsed?, nice?: int|null, pri?: int,
                  c?: int, comm?, command?, ... other?: {header word: text}}],
     unparsed?: [str]}

Why header-driven: ``ps aux`` (Linux/macOS), ``ps -ef``, ``-l``, ``-j``, busybox ``ps`` and
``-o`` lists all print a header whose words name the columns.  Every column but the last is one
whitespace token (``lstart`` is five), and the last column (normally the command) is the rest of
the line with its spacing kept.  Values are kept as printed (``?``/``??`` ttys, ``12:10PM``,
``systemd+`` truncated users); only numeric columns are converted.  ``-ef`` prints user names on
Linux and numeric ids on macOS under ``UID``, so ``uid`` stays a string.  With ``-o`` the columns
come from the keywords (procps titles both ``comm`` and ``args`` "COMMAND"): ``comm`` is the
executable name, ``command`` the full argument list; an unknown ``-o`` keyword is refused (its
width is unknown), while header words outside the table (``MAJFL``, ``PENDING``…) from the fixed
formats are single tokens kept under ``other``.  ``-O`` adds columns to the default ones, so its
output is read by header.  Lines that do not fit
the header are listed in ``unparsed`` instead of being dropped silently.  Units: ``vsz``, ``rss``
and ``sz`` are what ps prints (KiB for vsz/rss on Linux and macOS, pages for sz); ``cpu``/``mem``
are percentages; ``time``/``elapsed``/``start`` stay text because their format varies by OS
(``0:03``, ``7:53.61``, ``1-02:03:04``).  BusyBox ``ps`` writes ``{comm} args`` when the
executable's name differs from ``argv[0]``; that marker becomes ``comm`` and leaves ``command``
(BusyBox is told apart by its left-aligned ``PID`` title: procps right-aligns it over the pids).
"""

from __future__ import annotations

import re
from itertools import islice
from math import isfinite
from typing import Any

from pydantic import BaseModel, ConfigDict

from parism.parsers.contract import (
    Lean,
    UNIX_OS,
    Contract,
    ParseInput,
    Parser,
    Unrecognized,
    Unsupported,
)
from parism.parsers.table import to_float, to_int
from parism.argv.tokenize import Tokens

# header word (upper-case) or -o keyword → (field, kind); kind: str | int | float | nice
_COLUMNS: dict[str, tuple[str, str]] = {
    "USER": ("user", "str"), "EUSER": ("user", "str"), "RUSER": ("ruser", "str"),
    "UID": ("uid", "str"), "RUID": ("ruid", "str"), "GROUP": ("group", "str"),
    "PID": ("pid", "int"), "PPID": ("ppid", "int"), "PGID": ("pgid", "int"),
    "SID": ("sid", "int"), "SESS": ("sid", "int"), "TPGID": ("tpgid", "int"),
    "JOBC": ("jobc", "int"), "LWP": ("lwp", "int"), "SPID": ("lwp", "int"), "TID": ("lwp", "int"),
    "NLWP": ("nlwp", "int"), "THCNT": ("nlwp", "int"), "C": ("c", "int"), "CP": ("c", "int"),
    "%CPU": ("cpu", "float"), "PCPU": ("cpu", "float"), "%MEM": ("mem", "float"),
    "PMEM": ("mem", "float"), "CPU": ("cpu_usage", "int"), "PSR": ("psr", "int"),
    "PRI": ("pri", "int"), "NI": ("nice", "nice"), "NICE": ("nice", "nice"),
    "VSZ": ("vsz", "int"), "VSIZE": ("vsz", "int"), "RSS": ("rss", "int"), "RSZ": ("rss", "int"),
    "SZ": ("sz", "int"), "TTY": ("tty", "str"), "TT": ("tty", "str"), "TNAME": ("tty", "str"),
    "STAT": ("stat", "str"), "S": ("stat", "str"), "STATE": ("stat", "str"),
    "START": ("start", "str"), "STIME": ("start", "str"), "STARTED": ("start", "str"),
    "START_TIME": ("start", "str"), "BSDSTART": ("start", "str"), "LSTART": ("start", "lstart"),
    "TIME": ("time", "str"), "CPUTIME": ("time", "str"), "BSDTIME": ("time", "str"),
    "ELAPSED": ("elapsed", "str"), "ETIME": ("elapsed", "str"), "ETIMES": ("elapsed_s", "int"),
    "F": ("flags", "str"), "FLAGS": ("flags", "str"), "ADDR": ("addr", "str"),
    "WCHAN": ("wchan", "str"), "MWCHAN": ("wchan", "str"), "LABEL": ("label", "str"),
    "CMD": ("command", "str"), "COMMAND": ("command", "str"), "ARGS": ("command", "str"),
    "COMM": ("comm", "str"), "UCOMM": ("comm", "str"), "UCMD": ("comm", "str"), "FNAME": ("comm", "str"),
}
# layouts printed when the header is switched off (procps column order)
_NO_HEADER_LAYOUTS = {
    "u": ["USER", "PID", "%CPU", "%MEM", "VSZ", "RSS", "TTY", "STAT", "START", "TIME", "COMMAND"],
    "f": ["UID", "PID", "PPID", "C", "STIME", "TTY", "TIME", "CMD"],
    "": ["PID", "TTY", "TIME", "CMD"],
}
_LSTART_TOKENS = 5
_BSD_WORD = re.compile(r"[aAxXuwfehjlvrcSTmLHn]*o?")  # BSD option word; a final "o" takes a format


class Process(BaseModel):
    model_config = ConfigDict(extra="allow")
    pid: int | None = None
    ppid: int | None = None
    user: str | None = None
    uid: str | None = None
    cpu: float | None = None
    mem: float | None = None
    vsz: int | None = None
    rss: int | None = None
    tty: str | None = None
    stat: str | None = None
    start: str | None = None
    time: str | None = None
    command: str | None = None


class PsResult(BaseModel):
    processes: list[Process]
    unparsed: list[str] | None = None


def _format_keywords(tokens: Tokens) -> list[tuple[str, str]] | None:
    """(-o keyword, header text) pairs in order, from every -o/--format value; None if absent.

    ``-O`` is not here: it adds columns to the default ones, so its output is read by header."""
    specs = tokens.values("-o", "--format") + _bsd_format(tokens)
    if not specs:
        return None
    out: list[tuple[str, str]] = []
    for spec in specs:
        for item in re.split(r"[,\s]+", spec.strip()):
            if not item:
                continue
            kw, eq, header = item.partition("=")
            kw = kw.split(":", 1)[0]  # procps width suffix: user:20
            out.append((kw, header if eq else kw.upper()))
    return out


def _bsd_format(tokens: Tokens) -> list[str]:
    """``ps axo pid,comm``: a BSD word ending in ``o`` takes the next word as its format."""
    pos = [p.text for p in tokens.positionals]
    return [pos[1]] if len(pos) == 2 and pos[0].endswith("o") else []


def _column_key(word: str) -> str | None:
    key = word.upper()
    return key if key in _COLUMNS else None


def _supports(tokens: Tokens) -> str | None:
    for spec in tokens.values("-O"):
        unknown = [kw for kw in re.split(r"[,\s]+", spec.strip()) if kw and _column_key(kw.split("=")[0]) is None]
        if unknown:
            return f"-O column '{unknown[0]}' is not read by this parser"
    pos = [p.text for p in tokens.positionals]
    if pos and not _BSD_WORD.fullmatch(pos[0]):
        return f"positional '{pos[0]}' is not a BSD option word"
    if len(pos) == 2 and not pos[0].endswith("o"):
        return "only a BSD 'o' option takes a second word (ps axo pid,comm)"
    if pos and pos[0].endswith("o") and len(pos) != 2:
        return "BSD 'o' needs a format word"
    fmt = _format_keywords(tokens)
    if fmt is not None:
        unknown = [kw for kw, _ in fmt if _column_key(kw) is None]
        if unknown:
            return f"-o column '{unknown[0]}' is not read by this parser"
    return None


def _hint(args: list[str]) -> list[str]:
    return ["-eo", "pid,ppid,user,%cpu,%mem,stat,etime,args"]


def _no_header(tokens: Tokens) -> bool:
    return tokens.has("--no-headers", "--no-heading") or any(
        "h" in p.text for p in tokens.positionals[:1] if _BSD_WORD.fullmatch(p.text))


def _prints_header(tokens: Tokens) -> bool:
    """Every form but ``--no-headers``/BSD ``h`` prints its header, even when no process matches."""
    return not _no_header(tokens)


def _layout(header: str, pin: ParseInput) -> tuple[list[str], int]:
    """Column keys and how many leading lines are header (``header`` is the first non-blank line)."""
    tokens = pin.tokens
    no_header = _no_header(tokens)
    fmt = _format_keywords(tokens)
    if fmt is not None:
        keys = [_column_key(kw) or kw for kw, _ in fmt]
        has_header = not no_header and any(h for _, h in fmt)
        return keys, 1 if has_header else 0
    if no_header:
        bsd = "".join(p.text for p in tokens.positionals)
        if "u" in bsd:
            return _NO_HEADER_LAYOUTS["u"], 0
        if tokens.has("-f"):
            return _NO_HEADER_LAYOUTS["f"], 0
        if not bsd and not any(t.name in ("-l", "-F", "-j", "-y", "-L", "-T", "-m") for t in tokens.flags):
            return _NO_HEADER_LAYOUTS[""], 0
        raise Unsupported("ps: without a header the columns of this form are unknown",
                          hint_args=[a for a in pin.sub_args if a not in ("--no-headers", "--no-heading")])
    lstart = any("lstart" in spec for spec in tokens.values("-O"))
    keys = []
    for word in header.split():
        key = _column_key(word) or word  # unknown header words (MAJFL, PENDING…) go to ``other``
        keys.append("LSTART" if lstart and key == "STARTED" else key)
    if "PID" not in keys or _COLUMNS.get(keys[-1], ("", ""))[0] not in ("command", "comm"):
        raise Unrecognized("ps: the first line is not a ps header (PID … COMMAND)")
    return keys, 1


class _Rows:
    """Reads lines of one fixed column list into plain dicts (no per-row model or key lookup).

    Every column is one whitespace token, except ``lstart`` (five tokens, spacing kept) and the
    last column (the rest of the line, right-stripped).  Without ``lstart`` a bounded
    ``str.split`` does this (it splits on the same whitespace as ``\\s``); with it (or with no
    column at all), one regex match."""

    def __init__(self, keys: list[str]) -> None:
        cols = [(key, *_COLUMNS.get(key, ("", "str"))) for key in keys]
        kinds = [kind for _, _, kind in cols]
        self.n = len(cols)
        self.rx = None if self.n and "lstart" not in kinds else _columns_regex(kinds)
        # unknown header words all land under "other", which is then replaced by their
        # {header word: text} map (so keys keep the column order)
        self.fields = [field or "other" for _, field, _ in cols]
        self.others = [(i, key.lower()) for i, (key, field, _) in enumerate(cols) if not field]
        self.ints = [i for i, kind in enumerate(kinds) if kind == "int"]
        self.floats = [i for i, kind in enumerate(kinds) if kind == "float"]
        self.nices = [i for i, kind in enumerate(kinds) if kind == "nice"]

    def read(self, line: str) -> dict[str, object] | None:
        """The row, or None when a column is missing or a number column is not a number."""
        parts: list[Any]
        if self.rx is None:
            parts = line.split(None, self.n - 1)
            if len(parts) != self.n:
                return None
        else:
            m = self.rx.match(line)
            if m is None:
                return None
            parts = list(m.groups())
        if parts:
            parts[-1] = parts[-1].rstrip()
        for i in self.ints:  # numbers replace their text in place, then one dict(zip)
            text = parts[i]
            value = int(text) if text.isdecimal() else to_int(text)
            if value is None:
                return None
            parts[i] = value
        for i in self.floats:
            try:  # float() accepting the text means to_float() gives the same value, cheaper
                f: float | None = float(parts[i])
            except ValueError:
                f = to_float(parts[i])  # "12%"
            if f is None or not isfinite(f):
                return None
            parts[i] = f
        for i in self.nices:
            parts[i] = to_int(parts[i])  # "-" (real-time) → null
        row = dict(zip(self.fields, parts))
        if self.others:
            row["other"] = {key: parts[i] for i, key in self.others}
        return row


def _columns_regex(kinds: list[str]) -> re.Pattern[str]:
    """One token per column, five for ``lstart``, the last column to the end of the line."""
    token, five = r"\s*(\S++)", rf"\s*(\S++(?:\s++\S++){{{_LSTART_TOKENS - 1}}})"
    pattern = "".join(five if kind == "lstart" else token for kind in kinds[:-1])
    if kinds:
        pattern += (five if kinds[-1] == "lstart" else token)[:-1] + ".*)"
    return re.compile(pattern)


_BUSYBOX_COMM = re.compile(r"\{(.{1,15}?)\} (.*)", re.DOTALL)
_PID_VALUE = re.compile(r"\s*\d+")


def _busybox(header: str, first_row: str) -> bool:
    """BusyBox left-aligns the ``PID`` title and prints pids right-aligned in five columns, so
    a pid ends past its title; procps right-aligns both (they end in the same column)."""
    title = re.search(r"(?<!\S)PID(?!\S)", header)
    value = _PID_VALUE.match(first_row, title.start()) if title and title.start() == 0 else None
    return value is not None and value.end() > title.end()  # type: ignore[union-attr]


def _strip_comm_marker(rows: list[dict[str, object]]) -> None:
    for row in rows:
        m = _BUSYBOX_COMM.fullmatch(str(row.get("command", "")))
        if m:
            row["command"] = m.group(2)
            row.setdefault("comm", m.group(1))


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    lines = text.splitlines()
    first = next((i for i, ln in enumerate(lines) if ln and not ln.isspace()), None)
    if first is None:
        return {"processes": []}
    keys, skip = _layout(lines[first], pin)
    reader = _Rows(keys)
    rows: list[dict[str, object]] = []
    unparsed: list[str] = []
    for line in islice(lines, first + skip, None):
        if not line or line.isspace():
            continue
        row = reader.read(line)
        if row is None:
            unparsed.append(line)
        else:
            rows.append(row)
    if not rows and unparsed:
        raise Unrecognized(f"ps: no line matched the {len(keys)} columns of the header")
    if skip and rows and "command" in reader.fields:
        first_row = next(ln for ln in islice(lines, first + 1, None) if ln and not ln.isspace())
        if _busybox(lines[first], first_row):
            _strip_comm_marker(rows)
    out: dict[str, object] = {"processes": rows}
    if unparsed:
        out["unparsed"] = unparsed
    return out


PARSER = Parser(
    id="ps",
    evidence=True,
    lean=Lean(),
    contract=Contract(
        flags={
            "-e": "bool", "-A": "bool", "-a": "bool", "-d": "bool", "-N": "bool", "-f": "bool",
            "-F": "bool", "-l": "bool", "-y": "bool", "-j": "bool", "-w": "bool", "-L": "bool",
            "-T": "bool", "-m": "bool", "-Z": "bool", "-H": "bool", "-x": "bool", "-M": "bool", "-c": "bool",
            "-o": "data", "-O": "data", "--format": "data", "-p": "value", "--pid": "value",
            "-q": "value", "--ppid": "value", "-u": "value", "-U": "value", "--user": "value",
            "-g": "value", "-G": "value", "--group": "value", "-C": "value", "-t": "value",
            "--tty": "value", "--sort": "value", "--width": "value", "--cols": "value",
            "--columns": "value", "--no-headers": "bool", "--no-heading": "bool",
            "--headers": "bool", "--cumulative": "bool", "--forest": "bool",
        },
        max_positionals=2,
        supports=_supports,
        hint=_hint,
    ),
    parse=parse,
    schema=PsResult,
    rows_key="processes",
    row_fields=tuple(sorted({f for f, _ in _COLUMNS.values()} | {"other"})),
    header_lines=1,
    os=UNIX_OS,
    prints_always=_prints_header,
    examples=(("aux",), ("-ef",), ("-eo", "pid,ppid,user,%cpu,%mem,stat,etime,args")),
)
