"""``ls`` — long listings (``-l``, ``-la``, ``-lah``, ``-lR``, ``--full-time`` …) and name lists
(plain ``ls`` into a pipe, ``-1``, ``-R``), GNU, busybox, macOS and FreeBSD.

Schema::

    {entries: [{name, type?: file|directory|symlink|other, file_kind?, target?, directory?,
                mode?: "drwxr-xr-x", attr?: "."|"@"|"+", permissions?: {owner, group, other},
                mode_octal?: "0755", setuid?, setgid?, sticky?, links?, owner?, group?,
                size_bytes?, size?: "4.0K", size_bytes_approx?, major?, minor?, inode?, blocks?,
                context?: "?"|"system_u:object_r:…" (-lZ),
                modified_raw?: "Mar  6 09:23" (whitespace collapsed), modified_at?: ISO,
                indicator?: "/"|"*"|"@"|"|"|"=", stat_failed?: true (ls printed "?" fields)}],
     totals?: [{directory?, total}], warnings?: [str], unresolved?: [str], hint_args?: [str]}

Names with newlines: in long listings a line that is not a row continues the previous name
(the row layout makes that unambiguous unless the continuation itself looks like a row; a
warning says so).  In name lists nothing separates names, so when a blank line shows that a name
contains a newline no entry is invented: the printed lines go to ``unresolved`` and
``hint_args`` names ``-b``, under which names are escaped and decoded exactly.
"""

from __future__ import annotations

import re

from parism.parsers.contract import UNIX_OS, Contract, Lean, ParseInput, Parser, Unrecognized, Unsupported
from parism.parsers.fs._common import split_lines
from parism.parsers.fs._lsmodel import LsEntry, LsResult
from parism.parsers.fs._lsrow import (
    ROWISH,
    RowParser,
    RowStyle,
    decode_name,
    strip_indicator,
)
from parism.parsers import shellquote
from parism.parsers.hints import drop_args
from parism.parsers.l10n import C_LOCALE_HINT, TOTAL_WORDS
from parism.argv.tokenize import Tokens

_BOOL = [
    "-l", "-n", "-g", "-o", "-G", "-a", "-A", "-t", "-r", "-R", "-S", "-1", "-d", "-U", "-X", "-v", "-c",
    "-u", "-k", "-N", "-B", "-F", "-p", "-h", "-H", "-L", "-i", "-s", "-b", "-Q", "-f", "-q", "--all",
    "--almost-all", "--recursive", "--reverse", "--directory", "--inode", "--size", "--numeric-uid-gid",
    "--escape", "--quote-name", "--literal", "--dereference", "--dereference-command-line",
    "--group-directories-first", "--no-group", "--classify", "--file-type", "--human-readable", "--si",
    "--full-time", "--ignore-backups", "--hide-control-chars", "--show-control-chars", "--kibibytes", "-C",
    "-x", "-m", "-Z", "--context", "--author", "-e"
]
_VALUE = [
    "--sort", "--time", "--format", "--time-style", "--indicator-style", "--quoting-style", "-I",
    "--ignore", "--hide", "--block-size"
]
# -T: macOS/BSD "full time" (bool); GNU "-T COLS" tab size (only matters with -C). "attached" reads both.
FLAGS: dict[str, str] = {**{f: "bool" for f in _BOOL}, **{f: "value" for f in _VALUE}, "--color": "attached",
                         "--colour": "attached", "--hyperlink": "attached", "-T": "attached",
                         "-w": "number", "--width": "number"}  # COLS: ls refuses another value
VALUES: dict[str, str] = {
    "--format": "long|verbose|single-column",
    "--time-style": "(?:posix-)?(?:long-iso|full-iso|iso|locale)",
    "--quoting-style": "literal|escape|c",
    "--color": "|never|no|none|auto|tty|if-tty",
    "--colour": "|never|no|none|auto|tty|if-tty",
    "--hyperlink": "|never|no|none|auto|tty|if-tty",
    "--indicator-style": "none|slash|file-type|classify",
    "--sort": "none|size|time|version|extension|width",
    "--time": "atime|access|use|ctime|status|mtime|modification|birth|creation",
    "--block-size": "1|K|1K|KiB|KB|M|1M|MiB|MB|G|1G|GiB|GB",
}
_DISPLAY_SHORT = "CxmZ"
_DISPLAY_LONG = ("--context", "--author", "--format", "--time-style", "--quoting-style", "--color", "--colour",
                 "--hyperlink")


def _supports(tokens: Tokens) -> str | None:
    for name in ("-C", "-x", "-m"):
        if tokens.has(name):
            return f"'{name}' prints names in columns; without it ls prints one name per line"
    if tokens.has("--author"):
        return "the author column is not read; drop it"
    if not _is_long(tokens):
        if tokens.has("-Z", "--context"):
            return "the security context is read in long listings only (ls -lZ)"
        if tokens.has("-e"):
            return "'-e' (BusyBox: full date and time) is read in long listings only (ls -le)"
    return None


def _custom_time_style(args: list[str]) -> bool:
    return any(a.startswith("--time-style=+") or (a == "--time-style" and b.startswith("+"))
               for a, b in zip(args, [*args[1:], ""]))


def _hint(args: list[str]) -> list[str]:
    """Without the display flags not read; a ``+FORMAT`` time style becomes ``full-iso``
    (the same instants, in a form read exactly)."""
    kept = drop_args(args, _DISPLAY_SHORT, _DISPLAY_LONG, valued=("--format", "--time-style", "--quoting-style"))
    return ["--time-style=full-iso", *kept] if _custom_time_style(args) else kept


CONTRACT = Contract(flags=FLAGS, values=VALUES, supports=_supports, hint=_hint)


def _style(tokens: Tokens) -> RowStyle:
    quoting = tokens.values("--quoting-style")
    q = quoting[-1] if quoting else None
    return RowStyle(
        escaped=tokens.has("-b", "--escape") or q == "escape",
        c_quoted=tokens.has("-Q", "--quote-name") or q == "c",
        si=tokens.has("--si"),
        context=tokens.has("-Z", "--context"),
        has_inode=tokens.has("-i", "--inode"),
        has_blocks=tokens.has("-s", "--size"),
        classify=tokens.has("-F", "-p", "--classify", "--file-type")
        or any(v != "none" for v in tokens.values("--indicator-style")),
    )


def _is_long(tokens: Tokens) -> bool:
    fmt = tokens.values("--format")
    if fmt:
        return fmt[-1] in ("long", "verbose")
    return tokens.has("-l", "-n", "-g", "-o", "--numeric-uid-gid", "--full-time")


def _sectioned(tokens: Tokens) -> bool:
    """Whether the output may start with a ``dir:`` header (several operands or -R)."""
    pos = [p.text for p in tokens.positionals]
    return tokens.has("-R", "--recursive") or len(pos) > 1 or any(c in p for p in pos for c in "*?[")


_SORT_FLAGS = ("-t", "-S", "-U", "-f", "-v", "-X", "-r", "-c", "-u", "--sort", "--reverse", "--group-directories-first")


def _name_sorted(tokens: Tokens) -> bool:
    """Whether ls sorted by name (its default), so that the listing must be in name order."""
    return not tokens.has(*_SORT_FLAGS)


_TOTAL_WORDS = "|".join(sorted(set(TOTAL_WORDS.values())))
_TOTAL = re.compile(rf"(?:{_TOTAL_WORDS}) (\S+)")  # "insgesamt 20K" in German
_NAME_PREFIX = re.compile(r"\s*(\d+(?:[.,]\d+)?[KMGTPEZYk]?) (.*)")


class _Reader:
    """Walks the lines once; ``dir:`` headers, ``total`` lines and blank separators are
    recognised by their position, everything else is a row (long) or a name (short)."""

    def __init__(self, lines: list[str], pin: ParseInput) -> None:
        self.lines = lines
        self.pin = pin
        self.style = _style(pin.tokens)
        self.sectioned = _sectioned(pin.tokens)
        self.entries: list[dict[str, object]] = []
        self.totals: list[dict[str, object]] = []
        self.warnings: list[str] = []
        self.directory: str | None = None
        self._more: list[str] = []  # the last long row's name (or target) and its continuation lines
        self._more_key = "name"

    def _is_header(self, i: int, after_blank: bool) -> bool:
        line = self.lines[i]
        if not line.endswith(":") or len(line) < 2:
            return False
        return (i == 0 and self.sectioned) or (after_blank and (self.sectioned or bool(self.entries)))

    def _header(self, line: str) -> None:
        self.directory = decode_name(line[:-1], self.style)

    def _total(self, i: int, line: str) -> bool:
        """``total N`` as the first line of a listing or right after a ``dir:`` header."""
        t = _TOTAL.fullmatch(line)
        if t and (i == 0 or self.lines[i - 1].endswith(":")):
            self.totals.append({"directory": self.directory, "total": t.group(1)})
            return True
        return False

    def _add(self, row: dict[str, object]) -> None:
        if self._more:
            self._flush()
        if self.directory is not None:
            row["directory"] = self.directory
        self.entries.append(row)

    def _single(self, rows: list[dict[str, object] | None]) -> bool:
        """The usual listing, one directory: no blank line, no header, and every line a row but
        a leading ``total``.  Its rows are taken as they are, without walking the lines."""
        lines = self.lines
        missing = rows.count(None)
        if missing > 1 or "" in lines or (lines and self._is_header(0, False)):
            return False
        if missing and (rows[0] is not None or not self._total(0, lines[0])):
            return False
        self.entries.extend(filter(None, rows))  # rows are never empty dicts
        return True

    def long(self) -> None:
        rows = RowParser(self.style, self.pin.now_year).rows(self.lines)
        if self._single(rows):
            return
        entries = self.entries
        blanks = 0
        continued = 0
        for i, line in enumerate(self.lines):
            if line == "":
                blanks += 1
                continue
            if line[-1] == ":" and self._is_header(i, blanks > 0):
                blanks = 0
                self._header(line)
                continue
            row = rows[i]
            if row is not None and not blanks:  # the common case: a row right after a row
                if self._more:
                    self._flush()
                if self.directory is not None:
                    row["directory"] = self.directory
                entries.append(row)
                continue
            if row is None and not blanks and self._total(i, line):
                continue
            if row is None and ROWISH.match(line):
                self.warnings.append(f"line {i + 1} looks like a row but its layout is not read: {line[:80]!r}")
                blanks = 0
                continue
            if self.entries and not self.style.escaped and not self.style.c_quoted:
                self._continue(blanks, None if row is not None else line)
                continued += 1
            elif row is None:
                self.warnings.append(f"line {i + 1} is not an ls row: {line[:80]!r}")
            blanks = 0
            if row is not None:
                self._add(row)
        if blanks and self.entries:
            self._continue(blanks, None)
            continued += 1
        self._flush()
        if continued:
            self.warnings.append(
                "names_with_newlines: lines that are not rows were joined to the name above; "
                "rerun with -b to read names exactly")

    def _continue(self, blanks: int, text: str | None) -> None:
        """Append ``blanks`` empty lines (+ ``text``) to the last name (or symlink target).

        The lines are collected and joined once by ``_flush``: re-joining the growing name at
        every line would be quadratic in a name that spans many lines."""
        if not self._more:
            last = self.entries[-1]
            self._more_key = "target" if "target" in last else "name"
            self._more.append(str(last[self._more_key]))
        self._more += [""] * blanks
        if text is not None:
            self._more.append(text)

    def _flush(self) -> None:
        if self._more:
            self.entries[-1][self._more_key] = "\n".join(self._more)
            self._more = []

    def short(self) -> list[str] | None:
        """Name lists. Returns the unresolved lines when names are ambiguous, else None."""
        blanks = 0
        ambiguous = False
        printed: list[str] = []
        check_order = not (self.style.escaped or self.style.c_quoted) and _name_sorted(self.pin.tokens)
        previous: str | None = None
        for i, line in enumerate(self.lines):
            if line == "":
                blanks += 1
                continue
            if self._is_header(i, blanks > 0):
                blanks = 0
                previous = None
                self._header(line)
                continue
            if self.style.has_blocks and self._total(i, line):
                continue
            if blanks:
                ambiguous = True
            blanks = 0
            printed.append(line)
            row = self._name_row(line)
            name = str(row["name"])
            if check_order and previous is not None and name < previous and not self.warnings:
                self.warnings.append(
                    f"possible_names_with_newlines: line {i + 1} breaks the C-locale name order, so a name "
                    "may contain a newline (or the listing was sorted in another locale); rerun with -b to be sure")
            previous = name
            self._add(row)
        if blanks:
            ambiguous = True
        if ambiguous and not (self.style.escaped or self.style.c_quoted):
            self.entries = []
            self.warnings.append(
                "names_with_newlines: blank lines show that some names contain newlines, so where "
                "one name ends is unknown; no entry is reported. Rerun with -b to read names exactly")
            return printed
        return None

    def _name_row(self, line: str) -> dict[str, object]:
        row: dict[str, object] = {}
        text = line
        if self.style.has_inode or self.style.has_blocks:
            for key in (("inode",) if self.style.has_inode else ()) + (("blocks",) if self.style.has_blocks else ()):
                m = _NAME_PREFIX.fullmatch(text)
                if m is None:
                    break
                row[key] = int(m.group(1)) if key == "inode" else m.group(1)
                text = m.group(2)
        name, ind = strip_indicator(text, self.style)
        row["name"] = decode_name(name, self.style)
        if ind is not None:
            row["indicator"] = ind
            row["type"] = {"/": "directory", "@": "symlink", "*": "file"}.get(ind, "other")
        return row


def _unquote(reader: _Reader) -> None:
    """uutils ``ls`` (and GNU ``ls`` on a terminal) print names in shell quoting: decode them
    when the listing's names say so (``shellquote.shell_quoted``), section headers included.
    Every printed name was then one complete word, so none spans lines: the order check's
    warning (made on the quoted text) no longer applies."""
    if not shellquote.unquote_rows(reader.entries, "name", "target"):
        return
    reader.warnings = [w for w in reader.warnings if not w.startswith("possible_names_with_newlines")]
    for item in (*reader.entries, *reader.totals):
        if isinstance(item.get("directory"), str):
            item["directory"] = shellquote.decode(str(item["directory"]))
    reader.warnings.append(shellquote.WARNING)


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    lines = split_lines(text)
    reader = _Reader(lines, pin)
    unresolved = None
    if _is_long(pin.tokens):
        reader.long()
        if not reader.entries and reader.warnings:
            if any(ROWISH.match(ln) for ln in lines):  # rows, but dates in another language
                raise Unsupported("ls: the rows' dates are in a form this parser does not read (another "
                                  "language?)", hint_args=pin.sub_args, hint_reason=C_LOCALE_HINT)
            raise Unrecognized("ls: no line matched the long-listing row layout")
    else:
        unresolved = reader.short()
    if not (reader.style.escaped or reader.style.c_quoted) and ("'" in text or '"' in text):
        _unquote(reader)
    out: dict[str, object] = {"entries": reader.entries}
    if reader.totals:
        out["totals"] = reader.totals
    if reader.warnings:
        out["warnings"] = reader.warnings
    if unresolved is not None:
        out["unresolved"] = unresolved
    if unresolved is not None or any("newlines" in w for w in reader.warnings):
        out["hint_args"] = drop_args(pin.sub_args, add=["-b"])
    return out


PARSER = Parser(
    id="ls",
    evidence=True,
    lean=Lean(derived={"type": "mode", "file_kind": "mode", "permissions": "mode", "mode_octal": "mode", "setuid": "mode", "setgid": "mode", "sticky": "mode", "modified_at": "modified_raw", "size_bytes_approx": "size"}),
    contract=CONTRACT,
    parse=parse,
    schema=LsResult,
    rows_key="entries",
    row_fields=tuple(LsEntry.model_fields),
    noise=rf"^(?:{_TOTAL_WORDS}) \S+$|^\S.*:$",
    os=UNIX_OS,
    prints_always=_is_long,  # a long listing prints "total N" even for an empty directory
    examples=(("-la",), ("-l",), ("-lah",), ("-alR", "/usr"), ("-1",), (), ("-l", "--time-style=full-iso")),
)
