"""The server's heap: glibc's allocator told to give back what a large call freed.

Why: a long-lived server sees a few very large allocations (a 10 MB request line, a 64 MiB
output and its JSON) among millions of small ones. By default glibc raises its mmap threshold
to the size of the last large block it freed (up to 32 MiB), so the next 10 MB strings come
from the heaps of the worker threads' arenas, where a free leaves them mapped; and each thread
that contends for the allocator gets an arena of its own (up to 8 per core). Measured
(``scripts/bench_memory.py refused``): 24 refused 10 MB requests and 200 small calls left RSS
+250 MB above its start that ``malloc_trim`` did not return; with the threshold fixed, each
large block is its own mapping, unmapped when freed, and RSS came back to +2 MB.

The arena cap bounds the small-object fragmentation the same threads would spread over
arenas; the GIL lets one thread allocate at a time, so two arenas cost no contention worth
measuring. Nothing here runs outside glibc (musl, macOS): the calls are skipped.
"""

from __future__ import annotations

import ctypes
import functools

M_MMAP_THRESHOLD = -3  # glibc <malloc.h>
M_ARENA_MAX = -8

#: Blocks at least this large are mapped on their own and unmapped when freed (fixed: glibc's
#: dynamic threshold is switched off by setting it).
MMAP_THRESHOLD = 256 * 1024

#: Arenas the allocator may create (glibc's default: 8 per core).
ARENA_MAX = 2


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def bound() -> bool:
    """Set the threshold and the arena cap; call it before the server starts threads (arenas
    already made stay). True when the allocator took both."""
    libc = _libc()
    if libc is None:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) & bool(libc.mallopt(M_ARENA_MAX, ARENA_MAX))


def trim() -> None:
    """Hand the free tops of the heaps back to the system (after a large answer)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
