"""What the long-lived server process asks of glibc and the kernel at start.

**The heap.** A server sees a few very large allocations (a 10 MB request line, a 64 MiB
output) among millions of small ones. By default glibc raises its mmap threshold to the size
of the last large block freed (up to 32 MiB), so the next 10 MB strings come from the heaps of
the worker threads' arenas, where a free leaves them mapped; and each thread that contends for
the allocator gets an arena of its own (up to 8 per core). Measured (``scripts/bench_memory.py
refused``): 24 refused 10 MB requests and 200 small calls left RSS +250 MB above its start,
which ``malloc_trim`` did not return; with the threshold fixed, each large block is its own
mapping, unmapped when freed (+2 MB). The arena cap bounds the fragmentation of small objects
over arenas; the GIL lets one thread allocate at a time, so two arenas cost no contention
worth measuring. Outside glibc (musl, macOS) the calls are skipped.

**Orphans.** The server is a subreaper, so a process of one of its sandboxes that outlives its
parent comes back to the server, which waits for it (:mod:`parism.run.sandbox.reap`), instead of
going to whichever subreaper or init sits above the server. (Here, not in the sandbox
package: importing that would cost the server's start-up ~30 ms before ``tools/list``.)
"""

from __future__ import annotations

import ctypes
import functools

M_MMAP_THRESHOLD = -3  # glibc <malloc.h>
M_ARENA_MAX = -8
PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>

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


def bound_heap() -> bool:
    """Set the threshold and the arena cap; call it before the server starts threads (arenas
    already made stay). True when the allocator took both."""
    libc = _libc()
    if libc is None:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) & bool(libc.mallopt(M_ARENA_MAX, ARENA_MAX))


def trim_heap() -> None:
    """Hand the free tops of the heaps back to the system (after a large answer)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


def become_subreaper() -> bool:
    """``PR_SET_CHILD_SUBREAPER``: orphaned descendants are re-parented to this process. True
    if the kernel took it."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
