"""What a repository's own configuration would make git do, read without running git.

The guard decides before any process exists, so it reads ``.git/config`` (and every file that
config includes, whatever the ``includeIf`` condition, plus submodule configs) as text.  Two
facts matter: the clean/smudge filter drivers it declares (their names are free, so they must be
found to be disabled) and whether it moves the work tree (``core.worktree = /`` would let
``git diff`` print files from anywhere).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$')
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*?))?\s*$")
_MAX_CONFIG_BYTES = 1 << 20
_MAX_FILES = 64


@dataclass
class Repo:
    work_dir: str  # the directory holding .git (the default work tree)
    git_dir: str  # the repository data (.git, or where a gitdir: file points)
    filters: list[str] = field(default_factory=list)
    moves_worktree: bool = False


def _git_dir_of(path: str) -> str | None:
    candidate = os.path.join(path, ".git")
    if os.path.isdir(candidate):
        return candidate
    if not os.path.isfile(candidate):
        return None
    try:
        with open(candidate, encoding="utf-8", errors="replace") as fh:
            line = fh.read(4096).strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(path, line[7:].strip()))


def _config_files(git_dir: str) -> list[str]:
    files = [os.path.join(git_dir, "config"), os.path.join(git_dir, "config.worktree")]
    common = os.path.join(git_dir, "commondir")
    if os.path.isfile(common):
        try:
            with open(common, encoding="utf-8", errors="replace") as fh:
                files.append(os.path.join(os.path.normpath(os.path.join(git_dir, fh.read().strip())), "config"))
        except OSError:
            pass
    modules = os.path.join(git_dir, "modules")
    if os.path.isdir(modules):
        for root, _dirs, names in os.walk(modules):
            if "config" in names:
                files.append(os.path.join(root, "config"))
    return files


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(_MAX_CONFIG_BYTES)
    except OSError:
        return None


def _scan(repo: Repo) -> None:
    pending = _config_files(repo.git_dir)
    seen: set[str] = set()
    while pending and len(seen) < _MAX_FILES:
        listed = pending.pop()
        if not os.path.isfile(listed):  # the same answer as for its realpath, one stat instead
            continue  # of a realpath walk (config.worktree and most candidates do not exist)
        path = os.path.realpath(listed)
        if path in seen:
            continue
        seen.add(path)
        text = _read(path)
        section, sub = "", None
        for line in (text or "").splitlines():
            if m := _SECTION.match(line):
                section, sub, line = m.group(1).lower(), m.group(2), m.group(3)
                if sub is None and "." in section:  # legacy [filter.name]
                    section, sub = section.split(".", 1)
                if section == "filter" and sub is not None and sub not in repo.filters:
                    repo.filters.append(sub)
            key = _KEY.match(line)
            if key is None:
                continue
            name, value = key.group(1).lower(), (key.group(2) or "").strip('"')
            if section == "core" and name == "worktree":
                repo.moves_worktree = True
            elif section in ("include", "includeif") and name == "path" and value:
                pending.append(os.path.join(os.path.dirname(path), os.path.expanduser(value)))


def find_repo(start: str) -> Repo | None:
    """The repository governing ``start`` (searching upwards), with its config scanned."""
    path = os.path.abspath(start)
    while True:
        git_dir = _git_dir_of(path)
        if git_dir is not None:
            repo = Repo(work_dir=path, git_dir=git_dir)
            _scan(repo)
            return repo
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent
