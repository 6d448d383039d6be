"""``ls`` — long listings (``-l``, ``-la``, ``-lah``, ``-lR``, ``--full-time`` …) and name lists
(plain ``ls`` into a pipe, ``-1``, ``-R``), GNU, busybox, macOS and FreeBSD.

Schema::

    {entries: [{name, type?: file|directory|symlink|other, file_kind?, target?, directory?,
                mode?: "drwxr-xr-x", attr?: "."|"@"|"+", permissions?: {owner, group, other},
                mode_octal?: "0755", setuid?, setgid?, sticky?, links?, owner?, group?,
                size_bytes?, size?: "4.0K", size_bytes_approx?, major?, minor?, inode?, blocks?,
                context?: "?"|"system_u:object_r:…" (-lZ),
                modified_raw?: "Mar  6 09:23" (whitespace collapsed), modified_at?: ISO (the mtime only;
                -u: accessed_raw/accessed_at, -c: changed_raw/changed_at, --time=birth: birth_*),
                indicator?: "/"|"*"|"@"|"|"|"=", stat_failed?: true (ls printed "?" fields)}],
     totals?: [{directory?, total}], warnings?: [str], unresolved?: [str], hint_args?: [str],
     time_zone?: the zone the times were printed in (a run; docs/envelope.md, "Time rule")}

Which flag changes which column, and how each is read or refused: :data:`COLUMN_FLAGS`.

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
    strip_target_indicator,
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


#: The flags that rename, move or remove a long listing's columns or decorate its names, and how
#: the parse reads each one (docs/parsers.md, "ls"). Each row has a live test against the kernel
#: (``os.lstat``): tests/parsers/fs/test_ls_flags_live.py. A flag not read right is refused.
COLUMN_FLAGS: dict[str, str] = {
    "-u, --time=atime|access|use": "the time column is the access time: accessed_raw, accessed_at",
    "-c, --time=ctime|status": "the time column is the status change time: changed_raw, changed_at",
    "--time=birth|creation": "the time column is the birth time: birth_raw, birth_at",
    "--time=mtime|modification": "the modification time (the default): modified_raw, modified_at, "
                                 "which are only ever the mtime; the last of -u, -c, --time wins, as in ls",
    "-g": "no owner column: the one id column is the group",
    "-o, -G, --no-group": "no group column: the one id column is the owner (-go, -gG: none)",
    "-n, --numeric-uid-gid": "owner and group hold the numeric ids as printed (\"0\"), never names; the "
                             "host-side id correction keeps them numbers",
    "devices": "major, minor from 'MAJ, MIN' in the size column, with as many id columns as printed",
    "-F, --classify, --indicator-style=classify": "long: only the indicator the entry's mode implies is "
        "stripped (/ directory, * executable, | FIFO, = socket, > door); a symlink's target loses its "
        "indicator only when its length is the link's size plus one; names only: refused unless C-quoted",
    "--file-type, --indicator-style=file-type": "as -F without *",
    "-p, --indicator-style=slash": "only / after directories (no name holds one); targets get none",
    "-R, several operands": "'dir:' headers; a name's newline lines are joined to it, but a line ending in ':' "
                            "among them cannot be told from the header of a directory whose name a newline "
                            "split: refused without -b",
    "names only (no -l)": "one name per line; a blank line or a break of the C name order shows a "
                          "name with a newline: no entry is reported (unresolved, hint -b). A newline whose "
                          "two parts keep the order is invisible in the text: after a run the host looks "
                          "each name up (output/listed.py: one that is not there, or is listed twice, "
                          "refuses the list); saved text cannot be checked: -b (or -l) is the exact form",
    "-b, --escape, -Q, --quote-name, --quoting-style=escape|c": "names and targets decoded to their exact bytes",
    "-i, -s": "inode and blocks columns before the mode",
    "-Z, --context": "a security-context column after the group (long listings only)",
}

_TIME_FIELD = {"-u": "accessed", "-c": "changed"}
_TIME_VALUES = {"atime": "accessed", "access": "accessed", "use": "accessed", "ctime": "changed",
                "status": "changed", "birth": "birth", "creation": "birth", "mtime": "modified",
                "modification": "modified"}


def time_field(tokens: Tokens) -> str:
    """Which time a long row shows: the last of -u, -c and --time wins."""
    field = "modified"
    for t in tokens.flags:
        if t.name in _TIME_FIELD:
            field = _TIME_FIELD[t.name]
        elif t.name == "--time" and t.value in _TIME_VALUES:
            field = _TIME_VALUES[t.value]
    return field


def _indicator(tokens: Tokens) -> str | None:
    """The indicator style: the last of -F, -p, --file-type, --indicator-style wins."""
    style: str | None = None
    for t in tokens.flags:
        if t.name in ("-F", "--classify"):
            style = "classify"
        elif t.name == "-p":
            style = "slash"
        elif t.name == "--file-type":
            style = "file-type"
        elif t.name == "--indicator-style" and t.value is not None:
            style = None if t.value == "none" else t.value
    return style


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
        if _indicator(tokens) in ("classify", "file-type") and not _style(tokens).c_quoted:
            return ("a name list's indicator (* @ | = >) cannot be told from the name's own last character; "
                    "add --quoting-style=c (the indicator then follows the quotes), use -p, or a long listing")
    return None


def _custom_time_style(args: list[str]) -> bool:
    return any(a.startswith("--time-style=+") or (a == "--time-style" and b.startswith("+"))
               for a, b in zip(args, [*args[1:], ""]))


def _hint(args: list[str]) -> list[str]:
    """Without the display flags not read; a ``+FORMAT`` time style becomes ``full-iso``
    (the same instants, in a form read exactly); a name list's -F/--file-type gets C quoting."""
    kept = drop_args(args, _DISPLAY_SHORT, _DISPLAY_LONG, valued=("--format", "--time-style", "--quoting-style"))
    if any(a in ("-F", "--classify", "--file-type") or a.startswith("--indicator-style=") for a in args) and \
            not any(a in ("-l", "-n", "-g", "-o") or a.startswith("--format") for a in args):
        kept = [*kept, "--quoting-style=c"]
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
        classify=_indicator(tokens) is not None,
        ids=(0 if tokens.has("-g") else 1) + (0 if tokens.has("-o", "-G", "--no-group") else 1),
        indicator=_indicator(tokens),
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
    """Whether ls sorted by name (its default, or reversed by -r alone), so that the listing must
    be in name order."""
    return not tokens.has(*(f for f in _SORT_FLAGS if f not in ("-r", "--reverse")))


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
        self.printed: list[str] | None = None  # a name list out of name order: its lines (short)
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
                if self.sectioned and row is None and line.endswith(":"):
                    # "./d" then "x:": the header of a directory whose name holds a newline, or a
                    # name's own line; which one the text cannot say
                    raise Unsupported("ls: a line ending in ':' that is not a header follows a name in a "
                                      "listing with 'dir:' headers: a directory name with a newline, or a "
                                      "file name's own line; rerun with -b to read names exactly",
                                      hint_args=drop_args(self.pin.sub_args, add=["-b"]))
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
            # the indicator follows the whole name: put back what the first line lost (-F)
            shown = str(last[self._more_key]) + (str(last.pop("indicator", "")) if self._more_key == "name" else "")
            self._more.append(shown)
        self._more += [""] * blanks
        if text is not None:
            self._more.append(text)

    def _flush(self) -> None:
        if self._more:
            row, joined = self.entries[-1], "\n".join(self._more)
            self._more = []
            if self.style.indicator is None:
                row[self._more_key] = joined
            elif self._more_key == "target":
                row["target"] = strip_target_indicator(joined, self.style, row)
            else:
                mode = row.get("mode")
                row["name"], ind = strip_indicator(joined, self.style, mode if isinstance(mode, str) else None)
                if ind is not None:
                    row["indicator"] = ind

    def short(self) -> list[str] | None:
        """Name lists. Returns the unresolved lines when names are ambiguous, else None."""
        blanks = 0
        ambiguous = False
        printed: list[str] = []
        check_order = not (self.style.escaped or self.style.c_quoted) and _name_sorted(self.pin.tokens)
        previous: bytes | None = None
        out_of_order = False
        reverse = self.pin.tokens.has("-r", "--reverse")
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
            key = name.encode("utf-8", "surrogateescape")  # C.UTF-8 sorts by bytes
            if check_order and previous is not None and (key > previous if reverse else key < previous) \
                    and not out_of_order:
                out_of_order = True
                self.warnings.append(
                    f"possible_names_with_newlines: line {i + 1} breaks the C-locale name order, so a name "
                    "may contain a newline (or the listing was sorted in another locale); no entry is "
                    "reported. Rerun with -b to read names exactly")
            previous = key
            self._add(row)
        if blanks:
            ambiguous = True
        if ambiguous and not (self.style.escaped or self.style.c_quoted):
            self.entries = []
            self.warnings.append(
                "names_with_newlines: blank lines show that some names contain newlines, so where "
                "one name ends is unknown; no entry is reported. Rerun with -b to read names exactly")
            return printed
        if out_of_order:  # no entry unless the names turn out to be shell-quoted words (parse)
            self.printed = printed
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
        name, ind = strip_indicator(text, self.style)  # no mode: only what a name list can hold
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


def _columns(entries: list[dict[str, object]], tokens: Tokens) -> None:
    """What the flags made of the columns (:data:`COLUMN_FLAGS`): the time shown and the one id
    column of -g. One pass, only when a flag applies."""
    when = time_field(tokens)
    group_only = tokens.has("-g") and not tokens.has("-o", "-G", "--no-group")
    if when == "modified" and not group_only:
        return
    for row in entries:
        if when != "modified":
            for old, new in (("modified_raw", f"{when}_raw"), ("modified_at", f"{when}_at")):
                if old in row:
                    row[new] = row.pop(old)
        if group_only and "owner" in row:
            row["group"] = row.pop("owner")


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
    if reader.printed is not None and any(w.startswith("possible_names_with_newlines") for w in reader.warnings):
        reader.entries, unresolved = [], reader.printed  # out of name order: never invent entries
    if _is_long(pin.tokens):
        _columns(reader.entries, pin.tokens)
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
    lean=Lean(derived={"type": "mode", "file_kind": "mode", "permissions": "mode", "mode_octal": "mode", "setuid": "mode", "setgid": "mode", "sticky": "mode", "modified_at": "modified_raw", "size_bytes_approx": "size", "accessed_at": "accessed_raw", "changed_at": "changed_raw", "birth_at": "birth_raw"}),
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
