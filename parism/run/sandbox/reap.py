"""Ending a bwrap tree so that every process in it is waited for.

bwrap forks once: the server's child is bwrap (the monitor), bwrap's only child is the
sandbox's PID 1 (bwrap's init with a pid namespace, else the helper itself). Two things left
processes to whatever subreaper sat above the server (measured: 76 bwrap and 12 helper zombies
re-parented to a subreaper test process after 100 calls; 275 after 112 calls in the issue):

- the launcher killed bwrap and its child at once, so the monitor could die first and its
  child was orphaned;
- with a pid namespace, bwrap's init reports the command's exit through an event fd and the
  monitor exits on that report *without* waiting for the init, which is orphaned every time
  it is slower than the monitor.

So the child goes first: it is SIGKILLed and, once it has exited, bwrap ends by itself (it is
killed only if it does not) and the server reaps it (``Popen.wait``); the MCP server is a
subreaper (:func:`parism.server.host.become_subreaper`), so an init that outlived its monitor
comes back to it, and it waits for that init by its pidfd. Inside a pid namespace the kernel ends and reaps
everything else with PID 1. Signals go through pidfds (no pid reuse), waits block on them.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess

import psutil

from parism.run.proctree import descendants

KILL_WAIT_S = 2.0


def only_child(pid: int) -> int | None:
    """bwrap's PID 1 (its only child), without scanning the process table."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
        return int(kids[0]) if kids else None
    except (OSError, ValueError):
        return None


def pidfd(pid: int | None) -> int | None:
    """A pidfd pins the process (no pid reuse) and becomes readable when it exits."""
    if pid is None:
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None  # already gone


def _kill(fd: int) -> None:
    try:
        signal.pidfd_send_signal(fd, signal.SIGKILL)
    except OSError:
        pass  # already gone


def end_tree(proc: subprocess.Popen[bytes], outer: int | None, inner: int | None, sweep: bool) -> None:
    """SIGKILL the sandbox's PID 1 (``inner``) and (``sweep``) every descendant, let bwrap reap
    them and end; bwrap (``outer``) is killed only if it is still there after
    :data:`KILL_WAIT_S`. Then reap what came back to us: bwrap's PID 1 outlives the monitor
    when it reported its exit through bwrap's event fd (the monitor exits on that report
    without waiting), and a swept descendant outlives its parent; a subreaper server
    (:func:`parism.server.host.become_subreaper`) is their parent then. Never raises; closes every pidfd."""
    listed = _swept(proc.pid) if sweep and proc.poll() is None else []
    kids = [fd for fd in (pidfd(kid) for kid in listed) if fd is not None]
    for fd in (inner, *kids):
        if fd is not None:
            _kill(fd)
    if inner is not None:
        _exited(inner)  # bwrap, its parent, sees it go
    elif outer is not None:
        _kill(outer)  # no PID 1 known (bwrap never got that far): bwrap itself
    try:
        proc.wait(KILL_WAIT_S)
    except subprocess.TimeoutExpired:
        if outer is not None:
            _kill(outer)
        try:
            proc.wait(KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            pass
    for fd in (inner, *kids):
        if fd is not None:
            _reap(fd)
    if outer is not None:
        os.close(outer)


def _swept(pid: int) -> list[int]:
    """The descendants of ``pid``: the kernel's children lists of the tree (a few reads per
    process, ``proctree.descendants``), a process-table scan where the kernel has none."""
    found = descendants(pid)
    if found is not None:
        return found
    try:
        return [kid.pid for kid in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def _exited(fd: int) -> bool:
    """Wait, bounded, until the process is gone (a pidfd is readable from its exit on)."""
    return bool(select.select([fd], [], [], KILL_WAIT_S)[0])


def _reap(fd: int) -> None:
    """Wait for the process if it is ours now (re-parented to this subreaper); close the fd."""
    try:
        if _exited(fd):
            os.waitid(os.P_PIDFD, fd, os.WEXITED | os.WNOHANG)
    except ChildProcessError:
        pass  # its own parent waited for it
    finally:
        os.close(fd)


def end_bwrap(proc: subprocess.Popen[bytes]) -> None:
    """:func:`end_tree` for a bwrap process with no pidfds kept (a pack worker)."""
    if proc.poll() is not None:
        return
    end_tree(proc, pidfd(proc.pid), pidfd(only_child(proc.pid)), sweep=False)
