"""The long (default) ``git status`` format, read into the short-format codes.

Sections: "Changes to be committed" (index column), "Changes not staged for commit" (worktree
column), "Unmerged paths" (both columns, e.g. ``UU``), "Untracked files" (``??``) and "Ignored
files" (``!!``). Header lines give the branch, detached HEAD and upstream distance.
"""

from __future__ import annotations

import re

from parism.parsers.contract import Unrecognized
from parism.parsers.git._quote import split_arrow, unquote
from parism.parsers.git._status_model import StatusEntry, StatusResult
from parism.parsers.text._common import split_lines

_SECTIONS = {
    "Changes to be committed:": "index",
    "Changes not staged for commit:": "worktree",
    "Unmerged paths:": "unmerged",
    "Untracked files:": "untracked",
    "Ignored files:": "ignored",
}
_LABELS = {"modified": "M", "new file": "A", "deleted": "D", "renamed": "R", "copied": "C",
           "typechange": "T"}
_UNMERGED = {"both modified": "UU", "added by us": "AU", "added by them": "UA", "deleted by us": "DU",
             "deleted by them": "UD", "both added": "AA", "both deleted": "DD"}
_LABELLED = re.compile(r"^\t([a-z ]+):\s+(.*)$")
_SUBMODULE = re.compile(r" \((?:new commits|modified content|untracked content)(?:, [a-z ]+)*\)$")
_UPSTREAM = (
    (re.compile(r"^Your branch is up to date with '(.+)'\.$"), None),
    (re.compile(r"^Your branch is ahead of '(.+)' by (\d+) commits?\.$"), "ahead"),
    (re.compile(r"^Your branch is behind '(.+)' by (\d+) commits?, and can be fast-forwarded\.$"), "behind"),
)
_DIVERGED = re.compile(r"^and have (\d+) and (\d+) different commits each, respectively\.$")


def _header(line: str, res: StatusResult) -> bool:
    """Read a branch/upstream line into ``res``; False when the line is not one."""
    if line.startswith("On branch "):
        res.branch = line[len("On branch "):]
    elif line.startswith(("HEAD detached at ", "HEAD detached from ")):
        res.branch, res.detached = "HEAD", True
        if line.startswith("HEAD detached at "):
            res.detached_at = line[len("HEAD detached at "):]
        else:
            res.detached_from = line[len("HEAD detached from "):]
    elif line == "Not currently on any branch.":
        res.branch, res.detached = "HEAD", True
    elif line in ("No commits yet", "Initial commit"):
        res.no_commits = True
    elif line.startswith("Your branch and '") and line.endswith("' have diverged,"):
        res.upstream = line[len("Your branch and '"):-len("' have diverged,")]
    elif (m := _DIVERGED.match(line)) and res.upstream:
        res.ahead, res.behind = int(m.group(1)), int(m.group(2))
    elif line.startswith("Your branch is based on '") and line.endswith("', but the upstream is gone."):
        res.upstream = line[len("Your branch is based on '"):-len("', but the upstream is gone.")]
        res.upstream_gone = True
    else:
        for rx, field in _UPSTREAM:
            m = rx.match(line)
            if m:
                res.upstream, res.ahead, res.behind = m.group(1), 0, 0
                if field:
                    setattr(res, field, int(m.group(2)))
                return True
        return False
    return True


def _path_entry(section: str, label: str | None, text: str) -> tuple[str, str | None, bool, str]:
    """(path, orig_path, quoted, code letter(s)) of one file line of a section."""
    if section in ("untracked", "ignored"):
        path, q = unquote(text)
        return path, None, q, "??" if section == "untracked" else "!!"
    if section == "unmerged":
        code = _UNMERGED.get(label or "")
    else:
        code = _LABELS.get(label or "")
    if code is None:
        raise Unrecognized(f"git status: unknown change label {label!r}")
    text = _SUBMODULE.sub("", text)
    if code in ("R", "C"):
        orig, new, q = split_arrow(text)
        if orig:
            return new, orig, q, code
    path, q = unquote(text)
    return path, None, q, code


def parse_long(text: str) -> StatusResult:
    res = StatusResult(entries=[])
    by_path: dict[str, StatusEntry] = {}
    section: str | None = None
    recognised = False
    for line in split_lines(text)[0]:
        if line.startswith("diff --git "):
            break  # -v appends the staged diff
        if line in _SECTIONS:
            section, recognised = _SECTIONS[line], True
            continue
        if not line.startswith("\t"):
            if line and not line.startswith(" "):
                recognised = _header(line, res) or recognised
                section = None
            continue
        if section is None:
            continue
        m = _LABELLED.match(line) if section not in ("untracked", "ignored") else None
        if section not in ("untracked", "ignored") and m is None:
            raise Unrecognized(f"git status: expected 'label: path' in {line[:80]!r}")
        label, body = (m.group(1), m.group(2)) if m else (None, line[1:])
        path, orig, quoted, code = _path_entry(section, label, body)
        entry = by_path.get(path)
        if entry is None:
            xy = code if len(code) == 2 else (code + " " if section == "index" else " " + code)
            entry = StatusEntry(xy=xy, index=xy[0], worktree=xy[1], path=path, orig_path=orig,
                                quoted=quoted or None)
            by_path[path] = entry
            res.entries.append(entry)
        elif section == "worktree":
            entry.worktree = code
            entry.xy = entry.index + code
    if not recognised and res.branch is None:
        raise Unrecognized("git status: no branch line and no section header")
    return res
