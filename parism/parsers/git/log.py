"""``git log``: commits in the default (medium), short, full, fuller and oneline formats, the
``--format``/``--pretty=format:`` strings of ``_logformat``, with ``--stat``, ``--shortstat``
and ``--numstat`` sections; ``--graph`` with one line per commit; ``-p`` patches.

Schema::

    {commits: [{hash: str, parents?: [str], merge?: [str], refs?: [str],
                author?: str, author_email?: str, date?: str, date_iso?: str,
                committer?: str, committer_email?: str, commit_date?: str, commit_date_iso?: str,
                tree?: str, message?: str, notes?: str,
                stats?: {files_changed?: int, insertions?: int, deletions?: int,
                         files?: [{path: str, changes?: int, insertions?: int, deletions?: int,
                                   binary?: true}]},
                files?: [{…git diff file…}]}]}                     (with -p: the commit's patch)

``message`` is the full message with git's 4-space indent removed (the subject alone for
oneline formats); ``notes`` holds a ``Notes:`` section the same way. ``merge`` is the
``Merge:`` line (abbreviated parents). Dates keep the printed text; ``*_iso`` is added when
the text is unambiguous. Empty names or emails (``Author:  <>``) stay absent. Decorations are
read from ``commit <hash> (…)`` headers always, and from oneline subjects only with
``--decorate`` (otherwise a subject that starts with ``(`` stays intact).
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from typing import Any

from pydantic import BaseModel

from parism.parsers.contract import (
    Lean,
    Contract,
    ParseInput,
    Parser,
    Unrecognized,
    Unsupported,
)
from parism.parsers.dates import MONTHS, ctime_zone_to_iso, gnu_to_iso
from parism.parsers.git._logformat import (
    FIELDS,
    HINT_FORMAT,
    NAMED,
    LineFormat,
    compile_format,
    split_line,
)
from parism.parsers.git._patch import DiffFile, name_line, parse_files
from parism.parsers.git._quote import split_rename
from parism.parsers.hints import drop_flags
from parism.parsers.text._common import split_lines
from parism.argv.tokenize import Tokens


class FileStat(BaseModel):
    path: str
    orig_path: str | None = None
    shortened: bool | None = None  # git printed only ".../tail" of the path (the stat width)
    changes: int | None = None
    insertions: int | None = None
    deletions: int | None = None
    binary: bool | None = None


class Stats(BaseModel):
    files_changed: int | None = None
    insertions: int | None = None
    deletions: int | None = None
    files: list[FileStat] | None = None


class Commit(BaseModel):
    hash: str
    parents: list[str] | None = None
    merge: list[str] | None = None
    refs: list[str] | None = None
    author: str | None = None
    author_email: str | None = None
    date: str | None = None
    date_iso: str | None = None
    committer: str | None = None
    committer_email: str | None = None
    commit_date: str | None = None
    commit_date_iso: str | None = None
    tree: str | None = None
    message: str | None = None
    notes: str | None = None
    stats: Stats | None = None
    files: list[DiffFile] | None = None


class LogResult(BaseModel):
    commits: list[Commit]


_HEADER = re.compile(r"^commit ([0-9a-f]{7,64})(?: \((.*)\))?$")
_ONELINE = re.compile(r"^([0-9a-f]{4,64})(?: (.*))?$")
_STAT_COUNT = re.compile(r"^ *(?:(\d+)(?: [+-]*)?|Bin(?: \d+ -> \d+ bytes)?)$")
_SUMMARY = re.compile(
    r"^ (\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?$")
_DIFF_START = re.compile(r"^diff --(?:git|cc|combined) ")
_NOTES = re.compile(r"^Notes(?: \(.+\))?:$")
_NUMSTAT = re.compile(r"^(\d+|-)\t(\d+|-)\t(.*)$")


Row = dict[str, Any]
"""A commit (or stats, or file) as plain JSON: the parse builds dicts, keys in the models' field
order and None left out, exactly what ``model_dump(exclude_none=True)`` gave (20k commits would
otherwise spend most of their time in pydantic); the models stay the schema."""

_ORDER = tuple(Commit.model_fields)
_RANK = {k: i for i, k in enumerate(_ORDER)}


def _ordered(row: Row) -> Row:
    """``row`` with its keys in the schema's field order."""
    return {k: row[k] for k in _ORDER if k in row}


def _dump_file(f: DiffFile) -> Row:
    return f.model_dump(mode="json", exclude_none=True)


_MM = {name.capitalize(): f"{num:02d}" for name, num in MONTHS.items()}
_LAST_DAY = {name: str(calendar.monthrange(2001, int(num))[1]) for name, num in _MM.items()}  # non-leap
_PLAIN_DATE = re.compile(  # git's own rendering of its default date: ASCII, no padding
    rf"[A-Z][a-z]{{2}} ({'|'.join(_MM)}) ([1-9]|[12][0-9]|3[01]) ([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9]) "
    r"([1-9][0-9]{3}) ([+-][0-9]{2})([0-9]{2})")


def to_iso(text: str) -> str | None:
    """ISO form of a git date in the default, iso, iso-strict or unix (``%at``) style.

    A default date as git prints it is rebuilt from its matched parts once the day is known to
    exist: the general helper checks every field through ``datetime`` and was most of a log's
    parse time. Every other text goes through ``ctime_zone_to_iso`` (same results either way)."""
    text = text.strip()
    if m := _PLAIN_DATE.fullmatch(text):
        mon, day, hh, mi, ss, year, zh, zm = m.groups()
        if len(day) == 1 or day <= _LAST_DAY[mon] or (day == "29" and calendar.isleap(int(year))):
            return f"{year}-{_MM[mon]}-{day:0>2}T{hh}:{mi}:{ss}{zh}:{zm}"
    if text.isdigit():
        return _dt.datetime.fromtimestamp(int(text), _dt.UTC).isoformat()
    return ctime_zone_to_iso(text) or (gnu_to_iso(text) if text[:4].isdigit() else None)


def refs_of(deco: str) -> list[str]:
    return [r.strip() for r in deco.split(", ") if r.strip()]


def person(value: str) -> tuple[str | None, str | None]:
    """``Name <email>`` → (name, email); empty parts are None (``Author:  <>``)."""
    value = value.strip()
    lt = value.rfind("<")
    if not value.endswith(">") or lt < 0 or ">" in value[lt:-1]:
        return value or None, None
    return value[:lt].strip() or None, value[lt + 1:-1] or None


def read_stat_line(line: str, stats: Row) -> bool:
    """Add one ``--stat``/``--shortstat``/``--numstat`` line to ``stats`` (a ``Stats`` dict,
    keys kept in field order); False if not one."""
    if m := _SUMMARY.match(line):
        files = stats.pop("files", None)
        stats["files_changed"] = int(m.group(1))
        stats["insertions"] = int(m.group(2) or 0)
        stats["deletions"] = int(m.group(3) or 0)
        if files is not None:
            stats["files"] = files
        return True
    path, bar, count = line.rpartition(" | ")
    m = _STAT_COUNT.match(count) if bar and line.startswith(" ") else None
    fs: Row
    if m is not None and path.strip():
        fs = _stat_path(path[1:].rstrip(" "))
        if m.group(1) is not None:
            fs["changes"] = int(m.group(1))
        else:
            fs["binary"] = True
    elif m := _NUMSTAT.match(line):
        fs = _stat_path(m.group(3))
        if m.group(1) == "-":
            fs["binary"] = True
        else:
            fs["insertions"], fs["deletions"] = int(m.group(1)), int(m.group(2))
    else:
        return False
    stats.setdefault("files", []).append(fs)
    return True


class StatPathUnsupported(Unsupported):
    """A stat path that cannot be read exactly; ``exact`` names the form that prints it whole."""

    def __init__(self, message: str, exact: str):
        super().__init__(message)
        self.exact = exact

    def with_hint(self, args: list[str]) -> Unsupported:
        kept = drop_flags(args, {"--stat", "--shortstat", "--numstat", "--stat-width", "--stat-name-width"})
        return Unsupported(str(self), hint_args=[*kept, self.exact])


def _stat_path(text: str) -> Row:
    """``path`` (and ``orig_path`` for a rename) of a stat line, unquoted. A path git shortened
    to ``.../tail`` (or ``... => tail`` inside a rename) to fit the stat width keeps that text with ``shortened: true`` (``--numstat``
    prints whole paths); a name holding `` => `` twice cannot be split and is refused rather
    than guessed (``--name-status`` separates the two paths with a TAB)."""
    if text.startswith("..."):  # only the tail is known: kept as printed, and said so
        return {"path": text, "shortened": True}
    if text.count(" => ") > 1:
        raise StatPathUnsupported(f"git --stat: cannot tell which ' => ' is the rename in {text[:80]!r}",
                                  "--name-status")
    orig, path, _ = split_rename(text)
    return {"path": path} if orig is None else {"path": path, "orig_path": orig}


def _commit_stat(line: str, commit: Row) -> bool:
    stats = commit.get("stats")
    if stats is not None:
        return read_stat_line(line, stats)
    stats = {}
    if not read_stat_line(line, stats):
        return False
    commit["stats"] = stats
    return True


_HEADER_KEYS = {  # header label → (field, second field); every label is free of spaces
    "Merge": ("merge", ""), "Author": ("author", "author_email"), "Commit": ("committer", "committer_email"),
    "Date": ("date", "date_iso"), "AuthorDate": ("date", "date_iso"),
    "CommitDate": ("commit_date", "commit_date_iso"),
}


def _header_value(value: str, keys: tuple[str, str], c: Row) -> None:
    """Store the text after a header label in ``c`` under ``keys`` (from ``_HEADER_KEYS``)."""
    field, second = keys
    if field == "merge":
        c[field] = value.split()
        return
    if second[-4:] == "_iso":
        c[field] = value.strip()
        got = to_iso(value)
    else:
        name, got = person(value)
        if name is None:
            c.pop(field, None)
        else:
            c[field] = name
    if got is None:
        c.pop(second, None)
    else:
        c[second] = got


def _header_line(line: str, c: Row) -> int:
    """Store one header line (``Author:``, ``Date:`` …) in ``c``: the schema rank of the field
    it set (to notice lines out of the usual order), or -1 when it is not a header line."""
    label, colon, value = line.partition(":")
    keys = _HEADER_KEYS.get(label) if colon else None
    if keys is None:
        return -1
    _header_value(value, keys, c)
    return _RANK[keys[0]]


def _finish(c: Row, msg: list[str], notes: list[str], disorder: bool) -> Row:
    """The commit with its message and notes (trailing blank lines dropped), keys in order."""
    while msg and msg[-1] == "":
        msg.pop()
    while notes and notes[-1] == "":
        notes.pop()
    if msg:
        c["message"] = "\n".join(msg)
    if notes:
        c["notes"] = "\n".join(notes)
    if (msg or notes) and ("stats" in c or "files" in c):  # read before the message was complete
        for late in ("stats", "files"):
            if late in c:
                c[late] = c.pop(late)
    return _ordered(c) if disorder else c


def parse_blocks(lines: list[str], prefixed: bool = True, names: str | None = None) -> list[Row]:
    """Read ``commit <hash>`` blocks; a patch (``-p``, ``git show``) after a commit's message runs
    to the next ``commit <hash>`` line (patch lines never start with that) and becomes ``files``,
    as do the path lines of ``--name-only``/``--name-status`` (``names``: "only" | "status").

    The message lines and the header lines of the usual layout are tested first: a large log
    is mostly those."""
    commits: list[Row] = []
    c: Row | None = None
    state = "none"
    msg: list[str] = []
    notes: list[str] = []
    buf: list[str] | None = None  # msg or notes while state is "message" or "notes"
    last = 0  # rank of the last header field set; a lower one means the keys need reordering
    disorder = False
    it = iter(lines)
    for line in it:
        if buf is not None and (line[:4] == "    " or not line):
            buf.append(line[4:])
            continue
        if state == "header" and line[:1] != "c":  # c is set; only "commit …" may start a block
            if not line:
                state, buf = "message", msg
                continue
            rank = _header_line(line, c)  # type: ignore[arg-type]
            if rank < 0:
                raise Unrecognized(f"git log: unexpected header line {line[:80]!r}")
            disorder = disorder or rank <= last
            last = rank
            continue
        if line.startswith("diff --") and _DIFF_START.match(line) and c is not None:
            patch = [line]
            m = None
            for line in it:
                if line.startswith("commit ") and (m := _HEADER.match(line)):
                    break
                patch.append(line)
            c["files"] = [_dump_file(f) for f in parse_files(patch, 0, prefixed)]
            state, buf = "patch", None
            if m is None:
                break
        elif not (line.startswith("commit ") and (m := _HEADER.match(line))):
            if c is None:
                raise Unrecognized(f"git log: expected 'commit <hash>', got {line[:80]!r}")
            if state == "header":  # a line starting with "c" is no header line (labels are capitalised)
                raise Unrecognized(f"git log: unexpected header line {line[:80]!r}")
            if state == "message" and _NOTES.match(line):
                state, buf = "notes", notes
            elif names and line and (state == "message" or state == "names"):
                c.setdefault("files", []).append(_dump_file(name_line(line, names == "status")))
                state, buf = "names", None
            elif line and _commit_stat(line, c):
                state, buf = "stats", None
                disorder = disorder or ("files" in c and next(reversed(c)) == "stats")
            elif line:
                raise Unrecognized(f"git log: unexpected line {line[:80]!r}")
            continue
        if c is not None:
            commits.append(_finish(c, msg, notes, disorder))
            msg.clear()
            notes.clear()
        sha, deco = m.groups()
        c = {"hash": sha}
        if deco:
            c["refs"] = refs_of(deco)
        last = _RANK["refs"] if deco else 0
        state, buf, disorder = "header", None, False
    if c is not None:
        commits.append(_finish(c, msg, notes, disorder))
    return commits


_BLOCK = re.compile(  # one whole commit of the named formats, header lines in git's order
    r"commit ([0-9a-f]{7,64})(?: \((.*)\))?\n"
    r"(?:Merge:(.*)\n)?(?:Author:(.*)\n)?(?:(?:Author)?Date:(.*)\n)?(?:Commit:(.*)\n)?(?:CommitDate:(.*)\n)?"
    r"\n((?:    .*\n|\n)*)")


def parse_plain(text: str) -> list[Row] | None:
    """Commits of a log without stats, notes, names or patches, one regex match per commit;
    None when any part of ``text`` is not such a commit (``parse_blocks`` then reads it, and
    gives the same rows for the texts read here). Most logs are this, and a match per commit
    takes about a third less time than the line-by-line reader."""
    if "\r" in text:
        return None
    if text and text[-1] != "\n":
        text += "\n"
    commits: list[Row] = []
    pos, end = 0, len(text)
    match = _BLOCK.match
    while pos < end:
        m = match(text, pos)
        if m is None:
            return None
        pos = m.end()
        sha, deco, merge, author, date, committer, commit_date, body = m.groups()
        c: Row = {"hash": sha}
        if merge is not None:
            c["merge"] = merge.split()
        if deco:
            c["refs"] = refs_of(deco)
        if author is not None:
            _header_value(author, _HEADER_KEYS["Author"], c)
        if date is not None:
            _header_value(date, _HEADER_KEYS["Date"], c)
        if committer is not None:
            _header_value(committer, _HEADER_KEYS["Commit"], c)
        if commit_date is not None:
            _header_value(commit_date, _HEADER_KEYS["CommitDate"], c)
        if body and (message := ("\n" + body).replace("\n    ", "\n")[1:].rstrip("\n")):
            c["message"] = message
        commits.append(c)
    return commits


_GRAPH_CHARS = frozenset(" |/\\_.-")


def strip_graph(lines: list[str]) -> list[str]:
    """``--graph`` with one line per commit: keep the text after the ``*`` of each commit line
    and drop the lines that only draw the graph (``|\\``, ``|/``)."""
    out: list[str] = []
    for line in lines:
        star = line.find("*")
        if star < 0:
            if any(ch not in _GRAPH_CHARS for ch in line):
                raise Unrecognized(f"git log --graph: unexpected line {line[:80]!r}")
            continue
        if any(ch not in _GRAPH_CHARS for ch in line[:star]):
            raise Unrecognized(f"git log --graph: unexpected text before '*' in {line[:80]!r}")
        i = star + 1
        while i < len(line) and line[i] in _GRAPH_CHARS:
            i += 1
        out.append(line[i:])
    return out


def parse_oneline(lines: list[str], decorate: bool) -> list[Row]:
    commits: list[Row] = []
    for line in lines:
        if not line:
            continue
        m = _ONELINE.match(line)
        if m:
            subject = m.group(2) or ""
            c: Row = {"hash": m.group(1)}
            if decorate and subject.startswith("(") and ") " in subject + " ":
                deco, _, subject = subject[1:].partition(") ") if ") " in subject else (subject[1:-1], "", "")
                c["refs"] = refs_of(deco)
            c["message"] = subject
            commits.append(c)
        elif not (commits and _commit_stat(line, commits[-1])):
            raise Unrecognized(f"git log --oneline: unexpected line {line[:80]!r}")
    return commits


def parse_formatted(lines: list[str], fmt: LineFormat) -> list[Row]:
    commits: list[Row] = []
    for line in lines:
        if not line:
            continue
        got = split_line(line, fmt)
        if got is None:
            if commits and _commit_stat(line, commits[-1]):
                continue
            raise Unrecognized(f"git log --format: line does not fit the format: {line[:80]!r}")
        values: Row = {}
        for code, text in got.items():
            field = FIELDS[code]
            if field == "parents":
                values[field] = text.split()
            elif field == "refs":
                values[field] = refs_of(text.strip().removeprefix("(").removesuffix(")")) or None
            elif field in ("author", "committer", "author_email", "committer_email"):
                values[field] = text or None
            else:
                values[field] = text
            if field in ("date", "commit_date"):
                values[field + "_iso"] = to_iso(text)
        commits.append({k: v for k in _ORDER if (v := values.get(k)) is not None})
    return commits


def _pretty(tokens: Tokens) -> str | None:
    """The last --pretty/--format value ('' for a bare --pretty), or None."""
    vals = [t for t in tokens.flags if t.name in ("--pretty", "--format", "--oneline")]
    if not vals:
        return None
    last = vals[-1]
    return "oneline" if last.name == "--oneline" else (last.value or "medium")


def _supports(tokens: Tokens) -> str | None:
    fmt = _pretty(tokens)
    multi_line = fmt is None or (fmt in NAMED and fmt != "oneline")
    if tokens.has("-p", "-u", "--patch", "--cc", "--name-only", "--name-status") and not multi_line:
        return "-p and --name-only/--name-status are read with the multi-line formats only"
    if tokens.has("--name-only", "--name-status") and tokens.has(
            "--stat", "--shortstat", "--numstat", "-p", "-u", "--patch", "--cc"):
        return "--name-only/--name-status are read without --stat or -p"
    if tokens.has("--graph") and (multi_line or tokens.has(
            "--stat", "--shortstat", "--numstat", "-p", "-u", "--patch")):
        return "--graph is read with one line per commit only (--oneline or --format)"
    if fmt is None or fmt in NAMED:
        return None
    got = compile_format(fmt)
    return got if isinstance(got, str) else None


def parse(text: str, pin: ParseInput) -> dict[str, list[Row]]:
    try:
        return _parse(text, pin)
    except StatPathUnsupported as exc:
        raise exc.with_hint(pin.sub_args) from None


def _parse(text: str, pin: ParseInput) -> dict[str, list[Row]]:
    fmt = _pretty(pin.tokens)
    multi_line = fmt is None or (fmt in NAMED and fmt != "oneline")
    if multi_line and not pin.tokens.has("--graph", "--name-only", "--name-status"):
        if (plain := parse_plain(text)) is not None:
            return {"commits": plain}
    lines = split_lines(text)[0]
    if pin.tokens.has("--graph"):
        lines = strip_graph(lines)
    if fmt == "oneline":
        deco = pin.tokens.values("--decorate")
        decorate = pin.tokens.has("--decorate") and (not deco or deco[-1] != "no")
        return {"commits": parse_oneline(lines, decorate)}
    if fmt is None or fmt in NAMED:
        names = "only" if pin.tokens.has("--name-only") else "status" if pin.tokens.has("--name-status") else None
        return {"commits": parse_blocks(lines, not pin.tokens.has("--no-prefix"), names)}
    compiled = compile_format(fmt)
    if isinstance(compiled, str):
        raise Unsupported(f"git log: {compiled}", hint_args=hint(pin.sub_args))
    return {"commits": parse_formatted(lines, compiled)}


_DISPLAY = {"--pretty", "--format", "--oneline", "--graph", "-p", "-u", "--patch", "--name-only",
            "--name-status", "--raw", "--color", "--source", "-z", "--show-signature"}


def hint(args: list[str]) -> list[str]:
    """Same commits, in the TAB-separated form every version of this parser reads."""
    kept = [a for a in drop_flags(args, _DISPLAY) if not a.startswith(("-U", "--unified"))]
    return [f"--format={HINT_FORMAT}", *kept]


_BOOL = ("--oneline --all --no-merges --merges --reverse --first-parent --abbrev-commit "
         "--no-abbrev-commit --no-decorate --no-color --remotes --shortstat "
         "--numstat --follow --date-order --topo-order --author-date-order --use-mailmap --no-walk "
         "--no-renames -M -C --full-history --simplify-merges --ancestry-path --left-right --cherry-pick "
         "-i --regexp-ignore-case -E --extended-regexp -F --fixed-strings --all-match --invert-grep "
         "--no-patch -s --no-notes --no-mailmap --mailmap --no-ext-diff --no-textconv -p -u --patch "
         "--no-prefix --cc --graph --name-only --name-status").split()
FLAGS: dict[str, str] = {f: "bool" for f in _BOOL} | {
    "--pretty": "attached", "--format": "attached", "--branches": "attached", "--tags": "attached",
    "--decorate": "attached", "--date": "value",
    "-n": "number", "--max-count": "number", "--skip": "number", "--since": "value", "--until": "value",
    "--after": "value", "--before": "value", "--author": "data", "--committer": "data", "--grep": "data",
    "--abbrev": "attached", "--color": "attached", "--max-parents": "number", "--min-parents": "number",
    "--decorate-refs": "data", "--decorate-refs-exclude": "data", "-S": "data", "-G": "data",
    "--stat-width": "number", "--stat-name-width": "number", "--stat": "attached",
}

PARSER = Parser(
    id="git-log",
    evidence=True,
    lean=Lean(derived={"date_iso": "date", "commit_date_iso": "commit_date"}, partial_with=(
        # git log --stat prints a binary file's sizes ("Bin 2700 -> 0 bytes"), the rows do not; the
        # patch and name forms are not checked word by word against real output (yet), so raw stays
        "--stat", "-p", "--patch", "-u", "--numstat", "--name-status", "--name-only", "--raw", "--graph", "--cc",
        "--full-diff", "--notes", "--show-notes")),
    contract=Contract(
        flags=FLAGS,
        values={"--decorate": "|short|full|no|auto", "--color": "never|",
                "--date": "default|iso|iso8601|iso-strict|iso8601-strict|unix|rfc|rfc2822|short|local|relative|raw",
                "--stat": r"|\d+(?:,\d+)?"},
        numeric_flag=True,
        supports=_supports,
        hint=hint,
    ),
    parse=parse,
    schema=LogResult,
    rows_key="commits",
    row_fields=tuple(Commit.model_fields),
    examples=(("-n", "5"), ("--oneline", "-20"), (f"--format={HINT_FORMAT}", "-n", "10")),
)
