"""Reading a project's own configuration file: only what the project's calls could read.

The project layer (``<cwd>/prism.config.json``, ``<cwd>/parism.toml``) lies in the workspace,
which the agent may write (build profile) or may have shaped before the server started. The
server reads it at load time, often as root; read blindly, a ``parism.toml`` that is a FIFO
stops the server's start, one that is a symlink to a root-only file has its keys and values
echoed back in configuration errors (``describe``), and one that is a ``/proc`` file or a device
is whatever the reader makes of it. So the file is opened without opening anything else
(``O_PATH``: no FIFO wait, no device open), must be a regular file outside ``/proc`` and at most
:data:`MAX_PROJECT_FILE_BYTES`, and — for a root server — must be readable by the uid/gid the
calls in that directory run as (``sandbox/identity.py``'s rules); anything else is a
configuration error naming the file (docs/security.md, "What the agent can influence").
The identity rules live in the run layer, above this one: the callers that load a configuration
to serve calls (the engine, the server, the CLI) pass ``run/sandbox/identity.readable_by_calls``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

#: (path, the opened file's stat, the directory whose calls decide) → why those calls could not
#: read it, or None
AccessCheck = Callable[[str, os.stat_result, str], str | None]

MAX_PROJECT_FILE_BYTES = 1024 * 1024
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _proc_dev() -> int | None:
    try:
        return os.stat("/proc").st_dev
    except OSError:
        return None


def read_regular(path: str, max_bytes: int,
                 check: Callable[[os.stat_result], str | None] | None = None) -> tuple[bytes | None, str | None]:
    """(content, None), (None, None) when there is no such file, or (None, why it may not be
    read): anything but a regular file outside ``/proc`` of at most ``max_bytes`` — decided on
    the inode opened with ``O_PATH`` (which waits for no FIFO writer and opens no device), then
    ``check(stat)``, then that same inode read."""
    try:
        pinned = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except OSError as exc:
        return None, f"cannot open: {exc.strerror or exc}"
    try:
        st = os.fstat(pinned)
        for test, kind in _KINDS:
            if test(st.st_mode):
                return None, f"is {kind}, not a regular file"
        if st.st_dev == _proc_dev():
            return None, "is a /proc file"
        if st.st_size > max_bytes:
            return None, f"is larger than {max_bytes} bytes"
        why = check(st) if check is not None else None
        if why:
            return None, why
        # the inode checked above, never the name again
        fd = os.open(f"/proc/self/fd/{pinned}", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    finally:
        os.close(pinned)
    chunks: list[bytes] = []
    try:
        while sum(map(len, chunks)) <= max_bytes:
            data = os.read(fd, max_bytes + 1)
            if not data:
                break
            chunks.append(data)
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    finally:
        os.close(fd)
    content = b"".join(chunks)
    if len(content) > max_bytes:
        return None, f"is larger than {max_bytes} bytes"
    return content, None


def read_project_file(path: str, cwd: str, access: AccessCheck | None = None) -> tuple[bytes | None, str | None]:
    """``read_regular`` of a project file, only if ``access`` (the identity the calls in ``cwd``
    — the server's start directory — run as) may read it."""
    return read_regular(path, MAX_PROJECT_FILE_BYTES, (lambda st: access(path, st, cwd)) if access else None)
