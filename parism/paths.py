"""Path resolution for the guard: lexical *and* through symlinks (contract §8.3 [rec]).

A value passes only when both its lexical form and its realpath are inside an allowed root, so
neither ``../`` tricks nor a symlink inside the project that points at ``/etc`` get through.  A
path that does not exist yet is resolved through its nearest existing parent (a symlinked parent
directory still counts).
"""

from __future__ import annotations

import os

# A cwd that is one of these or an ancestor of one would expose the host's system tree when the
# sandbox binds the working directory last (sandbox-notes §2.1).
SYSTEM_DIRS = ("/bin", "/boot", "/dev", "/etc", "/lib", "/proc", "/run", "/sbin", "/sys",
               "/usr/bin", "/usr/lib", "/usr/sbin", "/var/lib", "/var/run")


def expand(value: str, cwd: str) -> str:
    """``~`` expanded, made absolute against ``cwd``, normalised lexically (no symlinks)."""
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(value)))


def real(path: str) -> str:
    """``realpath`` of an absolute path; for a missing path, of its nearest existing parent."""
    head, tail = path, ""
    while not os.path.lexists(head):
        parent = os.path.dirname(head)
        if parent == head:
            break
        tail = os.path.join(os.path.basename(head), tail) if tail else os.path.basename(head)
        head = parent
    resolved = os.path.realpath(head)
    return os.path.normpath(os.path.join(resolved, tail)) if tail else resolved


def is_within(path: str, root: str) -> bool:
    """Component-wise containment (``/home/user2`` is not inside ``/home/user``)."""
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


class Roots:
    """The allowed roots in both forms, computed once per check."""

    def __init__(self, allowed: list[str]) -> None:
        self.lexical = [os.path.normpath(os.path.expanduser(p)) for p in allowed]
        self.real = [real(os.path.abspath(p)) for p in self.lexical]

    def contains(self, value: str, cwd: str) -> bool:
        lexical = expand(value, cwd)
        resolved = real(lexical)
        lex_ok = any(is_within(lexical, r) for r in self.lexical + self.real)
        real_ok = any(is_within(resolved, r) for r in self.real)
        return lex_ok and real_ok


def is_system_ancestor(path: str) -> bool:
    """True for ``/`` and for any directory that is, or contains, a system directory."""
    return path == "/" or any(is_within(d, path) for d in SYSTEM_DIRS)


def looks_like_path(value: str, cwd: str) -> bool:
    """2.1 rule for untyped values: starts with ``/``, ``.`` or ``~``, or names something that
    exists relative to ``cwd`` (symlinks included)."""
    if value.startswith(("/", ".", "~")):
        return True
    try:
        return os.path.lexists(os.path.join(cwd, value))
    except (ValueError, OSError):
        return False
