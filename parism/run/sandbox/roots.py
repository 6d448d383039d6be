"""The allowed roots, fixed when the engine loads its configuration (issue #23).

Each ``guard.allowed_paths`` entry is resolved once and held for the engine's life by an
``O_PATH`` descriptor with its ``(st_dev, st_ino)`` (``PinnedRoot``). The guard's containment
checks (``guard/paths.py`` ``Roots``) and the sandbox's binds (``run/sandbox``) both use these
and only while a root is unchanged; a root replaced by a symlink, deleted and recreated or
moved is refused, never resolved again (docs/security.md, "Allowed roots are fixed at start").
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

NOBODY = 65534  # the sandbox's default unprivileged uid (run/sandbox/identity.py)


class PinnedRoot:
    """One allowed root, resolved once (when the configuration loads) and held for the
    engine's life by an ``O_PATH`` descriptor with its ``(st_dev, st_ino)``.

    ``given``: the configured entry (``~`` expanded, normalised); ``real``: what it resolved
    to then; ``root_private``: root owned it and ``nobody`` could not list it, then — the only
    roots the ``root_masked`` identity rule may use (docs/security.md). A root that was not an
    existing directory then has no identity (``fd`` -1) and is never usable. ``changed()``
    says why a root is no longer the directory that was pinned: it is then refused, never
    resolved again nor bound (docs/security.md, "Allowed roots are fixed at start")."""

    def __init__(self, given: str, unprivileged_uid: int = NOBODY) -> None:
        self.given = os.path.normpath(os.path.expanduser(given))
        self.fd, self.dev, self.ino, self.root_private = -1, 0, 0, False
        self.real = os.path.realpath(self.given)
        try:
            self.fd = os.open(self.given, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except (OSError, ValueError):
            return
        try:
            self.real = os.readlink(f"/proc/self/fd/{self.fd}")
            st = os.fstat(self.fd)
        except OSError:
            self.close()
            return
        self.dev, self.ino = st.st_dev, st.st_ino
        from parism.run.sandbox.identity import root_private  # the rule's own definition (imported
        # here: the sandbox package imports this module)

        self.root_private = root_private(self.real, unprivileged_uid, st)

    @property
    def identity(self) -> tuple[int, int] | None:
        return (self.dev, self.ino) if self.fd >= 0 else None

    def changed(self) -> str | None:
        """None while ``real`` still names, without a symlink, the directory pinned at start
        (not deleted); else what changed. Any error is a change (refused, never "unchanged")."""
        if self.fd < 0:
            return "it was not an existing directory when the server started"
        try:
            if os.fstat(self.fd).st_nlink == 0:
                return "it was deleted after the server started"
            st = os.lstat(self.real)
        except OSError as exc:
            return f"it cannot be checked ({exc.strerror}): deleted or moved after the server started"
        if stat.S_ISLNK(st.st_mode):
            return "it was replaced by a symbolic link after the server started"
        if (st.st_dev, st.st_ino) != (self.dev, self.ino):
            return "it is another directory than when the server started (replaced or moved)"
        if os.path.realpath(self.real) != self.real:
            return "a directory above it was replaced by a symbolic link after the server started"
        return None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PinnedRoot({self.given!r} -> {self.real!r}, {self.identity})"


def pin_roots(allowed: Sequence[str] | None, unprivileged_uid: int = NOBODY) -> tuple[PinnedRoot, ...]:
    """Every allowed root, pinned now (configuration load)."""
    return tuple(PinnedRoot(p, unprivileged_uid) for p in allowed or () if isinstance(p, str) and p)


