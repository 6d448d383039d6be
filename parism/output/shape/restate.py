"""Does the parse restate the raw text?  Then the default answer leaves raw out (issue #26).

The proof is the one ``tests/unit/shape/test_lean.py`` made for ``ls`` on real fixtures, made
here on every call: every word of every data line (``registry.data_lines``: no header, no
legend) is a word of the answer's parsed value — as printed, without a unit or list mark
(``24%``, ``1,``), ls's attribute mark (``drwxr-xr-x.``), or in a block unit the header states —
or is one of the parser's :data:`GLUE` words (labels that are structure, not values: ``commit``,
``modified:``).  One word missing keeps raw: the check never loses a printed value.  A parse
that reported doubts (``warnings``, ``unresolved``) or a form the rows only partly restate
(:func:`partial_with`) keeps raw without checking.

Parsers whose parse *is* the text (:data:`TEXT_ONLY`: ``cat``'s lines) add nothing raw lacks:
their default answer is raw alone with ``parsed: null``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TYPE_CHECKING

from parism.parsers import registry

if TYPE_CHECKING:
    from pydantic import JsonValue
    from parism.parsers.contract import Parser

def partial_with(parser_id: str) -> tuple[str, ...]:
    """Arguments under which the parser's rows do not restate every printed value, so raw is
    kept (``Parser.lean.partial_with``: ``git log --stat`` prints a binary file's sizes, the rows
    do not; the patch and name forms are not checked word by word against real output)."""
    parser = registry.by_id(parser_id)
    return parser.lean.partial_with if parser is not None and parser.lean is not None else ()

#: Keys of a parsed value that say the parse is not a full restatement of the text.
DOUBTS = ("warnings", "unresolved")

#: Parsers whose parse is the text's lines: the default keeps raw and sends ``parsed: null``.
TEXT_ONLY = frozenset({"cat", "head", "tail"})

_COMMON = frozenset({"->", "-", "|", "<>"})
#: Printed glue that is structure, not a value, per parser (the arrow of a symlink, labels).
GLUE: dict[str, frozenset[str]] = {
    "git-log": frozenset({"commit", "Author:", "Date:", "Commit:", "AuthorDate:", "CommitDate:", "Merge:", "file",
                          "files", "changed,", "insertion(+),", "insertions(+),", "insertion(+)", "insertions(+)",
                          "deletion(-)", "deletions(-)"}),
    # git status's long form: its section titles, hints and the labels xy restates
    "git-status": frozenset({
        "On", "branch", "Changes", "to", "be", "committed:", "not", "staged", "for", "commit:", "Untracked",
        "files:", "(use", '"git', "add", "<file>...\"", "restore", "--staged", "<file>...\"", "to", "unstage)",
        "update", "what", "will", "committed)", "discard", "changes", "in", "working", "directory)", "include",
        "modified:", "new", "file:", "deleted:", "renamed:", "copied:", "typechange:", "nothing", "commit,",
        "tree", "clean", "added", "and/or", "\"git", "-a\")", 'add"', "no", "changes", "commit", "(use", "rm",
        "add/rm", "Your", "is", "up", "date", "with", "ahead", "of", "behind", "by", "commits.", "commit.",
        "(working", "(create/copy", "track)", "present", "but", "untracked", "\"git\""}),
    "free": frozenset({"Mem:", "Swap:", "Total:", "Low:", "High:"}),
    # a patch's headers: the paths, modes, blob ids and counts they print are in the rows
    "git-diff": frozenset({"diff", "--git", "index", "@@", "new", "file", "mode", "deleted", "old", "similarity",
                           "dissimilarity", "rename", "copy", "from", "to", "Binary", "files", "and", "differ",
                           "GIT", "binary", "patch", "\\", "No", "newline", "at", "end", "of", "/dev/null"}),
}

#: Parsers that print several values in one word, with the separator they print between them:
#: ``grep -n``'s ``file:line:text``.
SPLIT: dict[str, re.Pattern[str]] = {
    "grep": re.compile(r"[:\s]+"),  # file:line:text
    "ss": re.compile(r"[:\s]+"),  # address:port
    "ping": re.compile(r"[=():\s]+"),  # icmp_seq=1 ttl=64, 56(84) bytes
    "id": re.compile(r"[=(),\s]+"),  # uid=1000(name) groups=1(a),2(b)
    "env": re.compile(r"[=\s]+"),  # NAME=value
    "lsof": re.compile(r"[()\s]+"),  # (LISTEN)
    "git-diff": re.compile(r"[,\s]+"),  # @@ -1,3 +1,4 @@
}

#: Parsers whose words are compared after this spelling (on both sides): a patch's ``+``/``-``
#: line marks and its ``a/`` ``b/`` path prefixes.
NORMAL: dict[str, Any] = {"git-diff": lambda w: w.lstrip("+-").removeprefix("a/").removeprefix("b/")}

#: Parsers whose ``noise`` lines carry values the check must find too (a diff's ``index`` line).
ALL_LINES = frozenset({"git-diff"})
_SPACE = re.compile(r"\s+")


def doubtful(parsed: JsonValue, parser_id: str, args: Sequence[str]) -> bool:
    partial = partial_with(parser_id)
    if any(a == p or a.startswith(p + "=") for a in args for p in partial):
        return True
    return not isinstance(parsed, dict) or any(parsed.get(k) for k in DOUBTS)


def words_of(value: JsonValue, split: re.Pattern[str] = _SPACE, normal: Callable[[str], str] | None = None) -> set[str]:
    """Every word of every scalar of ``value`` (and the keys of its mappings, which some parsers
    use for printed labels); a table's ``schema`` names are not values, its cells and ``same``
    are."""
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if isinstance(v.get("schema"), list) and isinstance(v.get("rows"), list):
                stack.extend(v["rows"])
                stack.append(v.get("same", {}))
                continue
            out.update(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif v is not None:
            out.update(split.split(str(v)))
    if normal is not None:
        out = set(map(normal, out))
    out.discard("")
    return out


def missing_words(lines: Iterable[str], value: JsonValue, parser_id: str, scales: Iterable[int] = ()) -> set[str]:
    """The printed words of ``lines`` the value does not carry (empty: the value restates them)."""
    split, normal = SPLIT.get(parser_id, _SPACE), NORMAL.get(parser_id)
    have = words_of(value, split, normal)
    glue = GLUE.get(parser_id, frozenset()) | _COMMON
    scales = tuple(scales)
    missing: set[str] = set()
    for line in lines:
        for word in split.split(line):
            if not word or word in glue or (normal(word) if normal else word) in have:
                continue
            bare = word.rstrip("%,:").rstrip("\\").removeprefix("<").removesuffix(">")
            if bare in have or (word[:-1] in have and word[-1] in ".@+") or set(word) <= {"+", "-"}:
                continue
            if bare.isdigit() and any(str(int(bare) * s) in have for s in scales):
                continue
            missing.add(word)
    return missing


#: Parsers whose restatement was proved on their real fixtures and the shared corpus by
#: ``tests/unit/shape/test_lean.py`` (every printed word of a data line in the lean rows): the
#: per-call check is skipped for them — it costs 6 ms on ``ls -la /usr/bin``'s 1,100 rows, most
#: of the call's parse time — and only the doubts are looked at.
PROVEN = frozenset({"ls", "ps", "git-log", "df"})


def lines_of(text: str, parser: Parser) -> list[str]:
    """The lines the check reads: the parser's data lines (``registry.data_lines``: no header,
    no legend), and its ``noise`` lines too for :data:`ALL_LINES`."""
    from parism.parsers.registry import data_lines

    if parser.id in ALL_LINES:
        return [ln for ln in text.splitlines() if ln.strip()][parser.header_lines:]
    return data_lines(text, parser)


def restates(text: str, parsed: JsonValue, value: JsonValue, parser: Parser, args: Sequence[str]) -> bool:
    """May the default answer leave raw out?  ``parsed``: the parser's whole value (before
    ``max_items``), ``value``: the lean form of it whose words are checked."""
    if doubtful(parsed, parser.id, args):
        return False
    if parser.id in PROVEN:
        return True
    scales = {parsed.get("multiplier"), 512, 1024} - {None}
    scales = {s for s in scales if isinstance(s, int) and not isinstance(s, bool)}
    return not missing_words(lines_of(text, parser), value, parser.id, scales)
