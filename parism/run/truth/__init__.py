"""Host-side truth for what a sandbox cannot show: owners, groups and process users.

A sandbox of a server that is not root maps only its own uid, so the kernel prints every other
owner as the overflow id (``nobody``). The engine knows which paths (``ls -l``, ``stat``) and
which pids (``ps``, ``lsof`` in the ``host_procs`` class) a command printed, re-reads them with
the host's own interfaces (``os.lstat``, ``/proc/<pid>/status``, ``pwd``/``grp``) and writes the
true value into ``parsed``: ``review.warnings`` gets ``ids_corrected``. A value that cannot be
re-read (the path is gone, the process ended or its pid is someone else's now) is removed
rather than shown as a fact, with ``ids_remapped``. Only fields that show the overflow id are
touched: everything else is what the command printed. What no re-reading can repair — a
selection or format the command evaluated on the overflow ids (``find -user``, ``ps -u``,
``stat -c %U``) — is refused before it runs (``limits.py``).

``correct(cmd, args, parsed, cwd, namespace) -> Corrected`` is called by the pipeline between
parse and shape when the call ran under the ``host_correction`` route.
"""

from __future__ import annotations

from parism.run.truth.ids import Corrected, correct
from parism.run.truth.limits import hint, uncorrectable

__all__ = ["Corrected", "correct", "hint", "uncorrectable"]
