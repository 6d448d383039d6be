"""The sanitised copy of each repository's configuration, bound read-only over the real files.

The ``-c`` settings of ``rewrite.py`` disarm what git reported when the guard asked; the git
that then runs reads the configuration files again, later.  Whatever changed in between — an
included file in the work tree rewritten by a build step, a ``.git/config`` that is a symlink
into the project, a ``config.worktree`` — would name programs the guard never saw.  So the
sandbox does not let git read those files at all: over ``<common dir>/config`` and
``<git dir>/config.worktree`` of every repository git will enter it binds (bwrap
``--ro-bind-data``) a file written here from git's own listing — every entry git read there,
includes already followed, minus every include (their content is already in the copy) and
every key that names a program.  The command then reads exactly what was checked.

Only the file format is written here, never read: each value is quoted with git's escapes and
each subsection quoted, and ``tests/unit/test_gitcopy.py`` reads the copies back with git.
"""

from __future__ import annotations

import os
import re

from parism.guard.git.repo import GIT_FORCED_SETTINGS, Repo, RepoConfig, disarming

ConfigCopy = tuple[str, bytes]  # (a file git reads, what the sandbox shows there instead)
MAX_COPY_BYTES = 1024 * 1024  # all copies of one call together
# Each scope git reads from a repository's own files → the file it lives in.
SCOPE_FILES = {"local": ("common_dir", "config"), "worktree": ("git_dir", "config.worktree")}
_DROPPED_SECTIONS = ("include", "includeif")
_FORCED = frozenset(key.lower() for key, _ in GIT_FORCED_SETTINGS)
_SECTION = re.compile(r"[A-Za-z0-9-]+")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
_VALUE_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\b": "\\b"})
_SUB_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"'})


class CopyProblem(ValueError):
    """A key git reported that this writer cannot spell (never expected from git)."""


def kept(key: str) -> bool:
    """Whether an entry goes into the copy: no include, nothing that names a program (the
    forced settings are given on the command line anyway)."""
    lower = key.lower()
    return (lower.partition(".")[0] not in _DROPPED_SECTIONS and lower not in _FORCED
            and not disarming(key))


def render(entries: list[tuple[str, str | None]]) -> bytes:
    """A config file that git reads back as exactly ``entries`` (key, value), in order."""
    lines: list[str] = []
    header = None
    for key, value in entries:
        section, dot, rest = key.partition(".")
        sub, sub_dot, name = rest.rpartition(".")
        if not (dot and _SECTION.fullmatch(section) and _NAME.fullmatch(name)) or "\n" in sub or "\0" in sub:
            raise CopyProblem(f"cannot write the configuration key {key[:80]!r}")
        this = f'[{section} "{sub.translate(_SUB_ESCAPES)}"]' if sub_dot else f"[{section}]"
        if this != header:
            lines.append(this)
            header = this
        lines.append(f"\t{name}" if value is None else f'\t{name} = "{value.translate(_VALUE_ESCAPES)}"')
    return "".join(f"{line}\n" for line in lines).encode("utf-8", "surrogateescape")


def _for_repo(config: RepoConfig) -> list[ConfigCopy]:
    out: list[ConfigCopy] = []
    for scope, (attr, filename) in SCOPE_FILES.items():
        path = os.path.realpath(os.path.join(getattr(config, attr), filename))
        if not os.path.isfile(path):
            continue  # git reads nothing there (and a file cannot appear in a read-only .git)
        out.append((path, render([(key, value) for s, _origin, key, value in config.entries
                                  if s == scope and kept(key)])))
    return out


def copies(repo: Repo) -> list[ConfigCopy] | CopyProblem:
    """The copy of every configuration file of every repository git will enter (top first)."""
    out: dict[str, bytes] = {}
    try:
        for config in repo.configs:
            out.update(_for_repo(config))
    except CopyProblem as exc:
        return exc
    if sum(len(data) for data in out.values()) > MAX_COPY_BYTES:
        return CopyProblem(f"the repositories' configuration is larger than {MAX_COPY_BYTES} bytes")
    return list(out.items())
