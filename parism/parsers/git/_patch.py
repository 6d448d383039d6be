"""The unified-diff reader shared by ``git diff``, ``git show`` and ``git log -p`` (the schema
is documented in ``diff``)."""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import Unrecognized
from parism.parsers.git._quote import read_quoted, unquote


class Hunk(BaseModel):
    start_a: int | None = None
    count_a: int | None = None
    start_b: int | None = None
    count_b: int | None = None
    header: str | None = None
    lines: list[str]


class DiffFile(BaseModel):
    path: str
    old_path: str | None = None
    status: str | None = None
    binary: bool | None = None
    quoted: bool | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    similarity: int | None = None
    index: str | None = None  # the ``index`` line's blob ids (and mode): ``de98044..a7bc997 100644``
    insertions: int | None = None
    deletions: int | None = None
    hunks: list[Hunk] | None = None


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_COMBINED = re.compile(r"^@@@+ .* @@@+")
STATUS_LETTER = {"A": "added", "D": "deleted", "M": "modified", "R": "renamed", "C": "copied",
                  "T": "modified"}


_SIDE_PREFIX = re.compile(r' "?([a-z0-9])/')


def has_prefixes(header: str) -> bool:
    """``diff --git a/x b/x`` (or mnemonic ``i/x w/x``): two *different* one-letter prefixes.
    A repository with ``diff.noPrefix`` prints ``diff --git x x``, whose sides share their first
    directory, so nothing is stripped there."""
    rest = header[len("diff --git "):] if header.startswith("diff --git ") else ""
    rest = rest[1:] if rest.startswith('"') else rest
    if len(rest) < 2 or rest[1] != "/":
        return False
    return any(m.group(1) != rest[0] for m in _SIDE_PREFIX.finditer(rest))


class _FileBuilder:
    """Collects the header facts of one ``diff --git`` block before choosing the paths."""

    def __init__(self, header: str, prefixed: bool):
        self.header = header
        self.prefixed = prefixed and has_prefixes(header)
        self.old: str | None = None
        self.new: str | None = None
        self.quoted = False
        self.file = DiffFile(path="", status="modified", hunks=[])
        self.insertions = self.deletions = 0  # counted here: a model attribute set per line is slow

    def strip(self, path: str) -> str:
        if self.prefixed and len(path) > 2 and path[1] == "/" and path != "/dev/null":
            return path[2:]
        return path

    def side(self, text: str, prefixed: bool = True) -> str:
        value, q = unquote(text.split("\t")[0] if not text.startswith('"') else text)
        self.quoted = self.quoted or q
        return self.strip(value) if prefixed else value

    def from_header(self) -> tuple[str, str] | None:
        """Both paths of ``diff --git A B`` when they can be told apart."""
        rest = self.header.split(" ", 2)[2] if self.header.startswith("diff --git ") else ""
        got = read_quoted(rest)
        if got is not None and rest[got[1]:got[1] + 1] == " ":
            self.quoted = True
            b, q = unquote(rest[got[1] + 1:])
            return self.strip(got[0]), self.strip(b)
        if rest.endswith('"'):
            idx = rest.rfind(' "')
            b, q = unquote(rest[idx + 1:])
            if idx > 0 and q:
                self.quoted = True
                return self.strip(rest[:idx]), self.strip(b)
        if len(rest) % 2 == 1:
            half = len(rest) // 2
            a, b = rest[:half], rest[half + 1:]
            if rest[half] == " " and self.strip(a) == self.strip(b):
                return self.strip(a), self.strip(b)
        return None

    def finish(self) -> DiffFile:
        f = self.file
        old, new = self.old, self.new
        if old is None or new is None:
            both = self.from_header()
            if both is None and old is None and new is None:
                raise Unrecognized(f"git diff: cannot tell the paths of {self.header[:80]!r}")
            if both is not None:
                old, new = old or both[0], new or both[1]
        old = None if old == "/dev/null" else old
        new = None if new == "/dev/null" else new
        f.path = new or old or ""
        f.insertions = self.insertions or None
        f.deletions = self.deletions or None
        if old and new and old != new:
            f.old_path = old
        f.quoted = self.quoted or None
        return f


def _extended(line: str, b: _FileBuilder) -> bool:
    """One extended header line (``new file mode``, ``rename from`` …); False if not one."""
    f = b.file
    key_values = (
        ("new file mode ", "added"), ("deleted file mode ", "deleted"),
    )
    for key, status in key_values:
        if line.startswith(key):
            f.status = status
            f.new_mode = line[len(key):] if status == "added" else None
            f.old_mode = line[len(key):] if status == "deleted" else None
            return True
    if line.startswith(("old mode ", "new mode ")):
        setattr(f, "old_mode" if line[0] == "o" else "new_mode", line[9:])
    elif line.startswith(("rename from ", "copy from ")):
        f.status = "renamed" if line[0] == "r" else "copied"
        b.old = b.side(line.split(" ", 2)[2], prefixed=False)
    elif line.startswith(("rename to ", "copy to ")):
        b.new = b.side(line.split(" ", 2)[2], prefixed=False)
    elif line.startswith(("similarity index ", "dissimilarity index ")):
        f.similarity = int(line.rsplit(" ", 1)[1].rstrip("%"))
    elif line.startswith("--- "):
        b.old = b.old or b.side(line[4:])
    elif line.startswith("+++ "):
        b.new = b.new or b.side(line[4:])
    elif line.startswith("Binary files ") or line == "GIT binary patch":
        f.binary = True
    elif line.startswith("index "):
        f.index = line[6:]
    else:
        return False
    return True


def parse_files(lines: list[str], start: int, prefixed: bool) -> list[DiffFile]:
    files: list[DiffFile] = []
    b: _FileBuilder | None = None
    hunk: Hunk | None = None
    rem_a = rem_b = 0
    for line in lines[start:]:
        if hunk is not None and hunk.start_a is None and line[:1] in (" ", "+", "-"):
            hunk.lines.append(line)  # combined (merge) hunk: runs to the next header
            continue
        if hunk is not None and (rem_a > 0 or rem_b > 0 or line.startswith("\\")):
            hunk.lines.append(line)
            tag = line[:1]
            rem_a -= tag in (" ", "-", "")
            rem_b -= tag in (" ", "+", "")
            if tag == "+":
                b.insertions += 1  # type: ignore[union-attr]
            elif tag == "-":
                b.deletions += 1  # type: ignore[union-attr]
            continue
        hunk = None
        if line.startswith(("diff --git ", "diff --cc ", "diff --combined ")):
            if b is not None:
                files.append(b.finish())
            b = _FileBuilder(line, prefixed)
            if not line.startswith("diff --git "):
                b.old = b.new = line.split(" ", 2)[2]
            continue
        if b is None:
            if line:
                raise Unrecognized(f"git diff: expected 'diff --git', got {line[:80]!r}")
            continue
        if m := _HUNK.match(line):
            hunk = Hunk(start_a=int(m.group(1)), count_a=int(m.group(2) or 1), start_b=int(m.group(3)),
                        count_b=int(m.group(4) or 1), header=m.group(5) or None, lines=[])
            rem_a, rem_b = hunk.count_a or 0, hunk.count_b or 0
            b.file.hunks.append(hunk)  # type: ignore[union-attr]
        elif _COMBINED.match(line):
            hunk = Hunk(header=line, lines=[])
            b.file.hunks.append(hunk)  # type: ignore[union-attr]
        elif not _extended(line, b) and b.file.binary is None and line:
            raise Unrecognized(f"git diff: unexpected line {line[:80]!r}")
    if b is not None:
        files.append(b.finish())
    for f in files:
        if f.hunks == []:
            f.hunks = None
    return files


def name_line(line: str, with_status: bool) -> DiffFile:
    """One ``--name-only`` line (a path) or ``--name-status`` line (``R100<TAB>old<TAB>new``)."""
    if not with_status:
        path, q = unquote(line)
        return DiffFile(path=path, quoted=q or None)
    parts = line.split("\t")
    code = parts[0][:1]
    if code not in STATUS_LETTER or len(parts) not in (2, 3):
        raise Unrecognized(f"git --name-status: unexpected line {line[:80]!r}")
    paths = [unquote(p) for p in parts[1:]]
    f = DiffFile(path=paths[-1][0], status=STATUS_LETTER[code], quoted=any(q for _, q in paths) or None)
    if len(paths) == 2:
        f.old_path = paths[0][0]
        f.similarity = int(parts[0][1:]) if parts[0][1:].isdigit() else None
    return f


def parse_names(lines: list[str], with_status: bool) -> list[DiffFile]:
    """``--name-only`` / ``--name-status`` output: one file per non-empty line."""
    return [name_line(line, with_status) for line in lines if line]
