"""Path resolution for the guard: lexical *and* through symlinks (contract §8.3 [rec]).

A value passes only when both its lexical form and its realpath are inside an allowed root, so
neither ``../`` tricks nor a symlink inside the project that points at ``/etc`` get through.  A
path that does not exist yet is resolved through its nearest existing parent (a symlinked parent
directory still counts).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from parism.run.sandbox.roots import PinnedRoot

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


def open_dir(path: str) -> tuple[str, os.stat_result | None]:
    """The directory ``path`` names, resolved once: opened (symlinks followed, as ``realpath``
    does), its real path read back from the descriptor, its identity from ``fstat``.

    Why: ``realpath`` then ``stat`` are two walks of the name, which a swap in between turns into
    two different directories; the descriptor is one. The sandbox later runs the command only
    in the directory of that ``(st_dev, st_ino)``. ``(realpath, None)`` when ``path`` is not an
    existing directory (or the platform has no ``O_PATH``/``/proc``)."""
    flag = getattr(os, "O_PATH", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return os.path.realpath(path), None
    try:
        fd = os.open(path, flag | os.O_DIRECTORY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return os.path.realpath(path), None
    try:
        return os.readlink(f"/proc/self/fd/{fd}"), os.fstat(fd)
    finally:
        os.close(fd)


def _plain(path: str) -> bool:
    """Absolute, with no empty or ``.`` component and no trailing slash (``/`` itself aside):
    the form ``normpath`` and ``realpath`` give, where containment is a string prefix test."""
    return (path.startswith("/") and "//" not in path and "/./" not in path
            and (path == "/" or not path.endswith(("/", "/."))))


def is_within(path: str, root: str) -> bool:
    """Component-wise containment (``/home/user2`` is not inside ``/home/user``).

    Why two ways: ``commonpath`` is the definition, but it splits both paths on every call and
    the guard asks about ~20 pairs per call; for plain absolute paths (what ``normpath`` and
    ``realpath`` return) the same answer is a prefix test on ``root + "/"``."""
    if _plain(path) and _plain(root):
        return path == root or path.startswith(root if root == "/" else root + "/")
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


class Roots:
    """The allowed roots in both forms, for one check.

    Given pinned roots (the engine's, fixed at start), a root is used in the form it had then,
    and only while it is unchanged (``PinnedRoot.changed``); a changed one is kept in
    ``changed`` for the refusal's message. Given plain strings (direct callers), they are
    pinned now. ``real`` results are remembered for the duration of this one check only (the
    cwd, a path argument and a root are often the same directory); a later check resolves
    again, since a symlink may have changed in between."""

    def __init__(self, allowed: Sequence[str] | Sequence[PinnedRoot],
                 known: dict[str, str] | None = None) -> None:
        """``known``: paths this check already resolved (path → its ``real``)."""
        self._resolved: dict[str, str] = dict(known or {})
        pins = [p if isinstance(p, PinnedRoot) else PinnedRoot(p) for p in allowed]
        self.changed: dict[str, str] = {}
        self.lexical: list[str] = []
        self.real: list[str] = []
        for pin in pins:
            why = pin.changed()
            if why is not None:
                self.changed[pin.given] = why
                continue
            self.lexical.append(pin.given)
            self.real.append(pin.real)
        self._lex_or_real = self.lexical + self.real

    def resolve(self, path: str) -> str:
        """``real(path)``, once per path within this check."""
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = real(path)
        return found

    def contains(self, value: str, cwd: str) -> bool:
        lexical = expand(value, cwd)
        resolved = self.resolve(lexical)
        lex_ok = any(is_within(lexical, r) for r in self._lex_or_real)
        real_ok = any(is_within(resolved, r) for r in self.real)
        return lex_ok and real_ok

    def changed_holding(self, value: str, cwd: str) -> str | None:
        """A message naming the changed root that ``value`` lies in (lexically), if any."""
        lexical = expand(value, cwd)
        for given, why in self.changed.items():
            if is_within(lexical, given):
                return f"allowed path '{given}' is refused: {why}; restart the server to use it again"
        return None


def is_system_ancestor(path: str) -> bool:
    """True for ``/`` and for any directory that is, or contains, a system directory."""
    if path == "/":
        return True
    if _plain(path):  # every SYSTEM_DIRS entry is plain: is_within's prefix test, inlined
        below = path + "/"
        return any(d == path or d.startswith(below) for d in SYSTEM_DIRS)
    return any(is_within(d, path) for d in SYSTEM_DIRS)


def looks_like_path(value: str, cwd: str) -> bool:
    """2.1 rule for untyped values: starts with ``/``, ``.`` or ``~``, or names something that
    exists relative to ``cwd`` (symlinks included)."""
    if value.startswith(("/", ".", "~")):
        return True
    try:
        return os.path.lexists(os.path.join(cwd, value))
    except (ValueError, OSError):
        return False
