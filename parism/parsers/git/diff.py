"""``git diff`` (and ``git show``): files with old/new paths, status and hunks.

Schema::

    {files: [{path: str, old_path?: str, status?: "added"|"deleted"|"modified"|"renamed"|"copied",
              binary?: true, quoted?: true, old_mode?: str, new_mode?: str, similarity?: int,
              insertions?: int, deletions?: int,
              hunks?: [{start_a?: int, count_a?: int, start_b?: int, count_b?: int,
                        header?: str, lines: [str]}]}],
     commit?: {…git log commit…}, tag?: str}                       (git show only)

``path`` is the new path (the old one for a deleted file); ``old_path`` only when it differs.
Paths come from ``rename from/to``, ``---``/``+++`` and, for binary or mode-only changes, the
``diff --git`` line (split where both halves agree); C-quoted paths are decoded (``quoted``).
Hunk lines are kept as printed (``+``/``-``/space prefix); a hunk ends when its counts are
used up, so content lines such as ``diff --git`` inside a file cannot split it.
``--name-only``, ``--name-status`` and ``--numstat`` give the same rows without hunks (and
without ``status`` where the form does not print it); a ``--numstat`` rename (``a => b``,
``dir/{a => b}/f``) gives ``old_path`` and ``path``. ``--stat`` gives ``stats.files`` with
``path`` and, for a rename, ``orig_path``, unquoted; a path git shortened to ``.../tail`` to fit
the width keeps that text with ``shortened: true`` (``--numstat`` prints whole paths). The
whole diff is not repeated in the result.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.git._patch import DiffFile, parse_files, parse_names
from parism.parsers.git._quote import split_rename
from parism.parsers.git.log import Commit, Stats, StatPathUnsupported, parse_blocks, read_stat_line
from parism.parsers.hints import drop_flags
from parism.parsers.text._common import split_lines


class DiffResult(BaseModel):
    tag: str | None = None
    commit: Commit | None = None
    files: list[DiffFile]
    stats: Stats | None = None


def parse_numstat(lines: list[str]) -> list[DiffFile]:
    """``--numstat``: ``insertions<TAB>deletions<TAB>path`` (``-`` for binary files)."""
    files: list[DiffFile] = []
    for line in lines:
        if not line:
            continue
        parts = line.split("\t", 2)
        if len(parts) != 3 or not all(p.isdigit() or p == "-" for p in parts[:2]):
            raise Unrecognized(f"git diff --numstat: unexpected line {line[:80]!r}")
        if parts[2].count(" => ") > 1:
            raise StatPathUnsupported(f"git diff --numstat: cannot tell which ' => ' is the rename in "
                                      f"{parts[2][:80]!r}", "--name-status")
        old, path, q = split_rename(parts[2])
        binary = parts[0] == "-"
        files.append(DiffFile(path=path, old_path=old, quoted=q or None, binary=binary or None,
                              insertions=None if binary else int(parts[0]),
                              deletions=None if binary else int(parts[1])))
    return files


def parse(text: str, pin: ParseInput) -> DiffResult:
    try:
        return _parse(text, pin)
    except StatPathUnsupported as exc:
        raise exc.with_hint(pin.sub_args) from None


def _parse(text: str, pin: ParseInput) -> DiffResult:
    lines = split_lines(text)[0]
    t = pin.tokens
    if t.has("--name-only"):
        return DiffResult(files=parse_names(lines, False))
    if t.has("--name-status"):
        return DiffResult(files=parse_names(lines, True))
    if t.has("--numstat"):
        return DiffResult(files=parse_numstat(lines))
    if t.has("--stat", "--shortstat"):
        stats: dict[str, Any] = {}
        for line in lines:
            if line and not read_stat_line(line, stats):
                raise Unrecognized(f"git diff --stat: unexpected line {line[:80]!r}")
        return DiffResult(files=[], stats=Stats.model_validate(stats))
    return DiffResult(files=parse_files(lines, 0, not t.has("--no-prefix")))


def parse_show(text: str, pin: ParseInput) -> DiffResult:
    """``git show <commit>``: one commit block (message, stats) and its patch. For an annotated
    tag git first prints the tag object (``tag v1``, ``Tagger:``, its message): ``tag`` keeps
    its name and the tag block is not parsed further."""
    lines = split_lines(text)[0]
    tag = None
    if lines and lines[0].startswith("tag "):
        tag = lines[0][4:]
        start = next((i for i, ln in enumerate(lines) if ln.startswith("commit ")), len(lines))
        lines = lines[start:]
    commits = parse_blocks(lines, not pin.tokens.has("--no-prefix"))
    if len(commits) != 1:
        raise Unrecognized("git show: expected exactly one commit")
    commit = commits[0]
    files = commit.pop("files", None) or []
    return DiffResult(tag=tag, commit=Commit.model_validate(commit), files=files)


_BOOL = ("--cached --staged -w --ignore-all-space -b --ignore-space-change --ignore-blank-lines "
         "--no-color -p --patch -M --no-renames --text -a --binary --no-prefix --name-only --name-status "
         "--numstat -R --minimal --patience --histogram --no-ext-diff --no-textconv --ita-invisible-in-index "
         "--full-index --merge-base --shortstat").split()
FLAGS: dict[str, str] = {f: "bool" for f in _BOOL} | {
    "-U": "attached", "--unified": "attached", "--diff-filter": "value", "--find-renames": "attached",
    "--color": "attached", "--diff-algorithm": "attached", "--relative": "attached",
    "--stat": "attached",
}
_VALUES = {"-U": r"\d+", "--unified": r"\d+", "--diff-filter": r"[ACDMRTUXBacdmrtuxb*]+",
           "--find-renames": r"|\d+%?", "--color": "never|",
           "--diff-algorithm": "default|myers|minimal|patience|histogram",
           # --stat=<width>[,<name-width>]; a third part (count) cuts the list with "...": refused
           "--stat": r"|\d+(?:,\d+)?"}
_EXCLUSIVE = (("--name-only", "--name-status", "--numstat", "--stat", "--shortstat", "-p", "--patch"),)


def hint(args: list[str]) -> list[str]:
    """Display variants (``--stat=W,N,COUNT``, ``--dirstat``, word diffs): ``--numstat`` gives the counts
    in a stable form."""
    drop = {"--stat", "--shortstat", "--dirstat", "--compact-summary", "--summary", "--color-words",
            "--word-diff", "-z", "--color", "--raw"}
    kept = drop_flags(args, drop)
    return [*kept, "--numstat"] if any(a.startswith(("--stat", "--dirstat", "--compact")) for a in args) else kept


PARSER = Parser(
    id="git-diff",
    contract=Contract(flags=FLAGS, values=_VALUES, exclusive=_EXCLUSIVE, hint=hint),
    parse=parse,
    schema=DiffResult,
    rows_key="files",
    row_fields=tuple(DiffFile.model_fields),
    noise=r"^(index |--- |\+\+\+ |@@ )",
    examples=((), ("--cached",), ("HEAD~1", "--", "src")),
)

SHOW_PARSER = Parser(
    id="git-show",
    contract=Contract(
        flags={k: v for k, v in FLAGS.items() if k not in ("--cached", "--staged", "--name-only",
                                                            "--name-status")}
        | {"--no-notes": "bool", "--format": "attached", "--pretty": "attached"},
        values=_VALUES | {"--format": "medium", "--pretty": "medium|"},
        max_positionals=1,
        positional_pattern=r"[^:]+",  # "rev:path" shows file content, not a commit
        hint=hint,
    ),
    parse=parse_show,
    schema=DiffResult,
    rows_key="files",
    row_fields=tuple(DiffFile.model_fields),
    examples=((), ("HEAD~1",)),
)
