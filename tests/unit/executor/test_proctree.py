"""``proctree.descendants`` (the kernel's per-thread children lists) finds the same tree as a scan
of the whole process table (psutil's ``children(recursive=True)``): children, grandchildren, a
child that left the session, the children of a non-main thread."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from parism.run.proctree import descendants

# a child that starts a thread which starts a grandchild (listed under that thread's task only
# while the thread lives),
# a setsid grandchild and a plain one, then waits
TREE = """
import subprocess, sys, threading, time
kids, started = [], threading.Event()
def spawn():  # the thread stays alive: its child stays on its task's list
    kids.append(subprocess.Popen(["sleep", "30"]))
    started.set()
    time.sleep(30)
threading.Thread(target=spawn, daemon=True).start()
started.wait()
kids.append(subprocess.Popen(["setsid", "sleep", "30"]))
kids.append(subprocess.Popen(["sh", "-c", "sleep 30; true"]))
print("up", flush=True)
time.sleep(30)
"""


def test_the_same_tree_as_a_process_table_scan() -> None:
    root = subprocess.Popen([sys.executable, "-c", TREE], stdout=subprocess.PIPE)
    try:
        assert root.stdout is not None and root.stdout.readline() == b"up\n"
        time.sleep(0.2)  # sh has started its sleep
        scanned = sorted(p.pid for p in psutil.Process(root.pid).children(recursive=True))
        found = descendants(root.pid)
        assert found is not None and sorted(found) == scanned
        assert len(scanned) == 4  # sleep (thread's child), setsid sleep, sh, sh's sleep
    finally:
        for p in psutil.Process(root.pid).children(recursive=True):
            p.kill()
        root.kill()
        root.wait()


def test_a_process_that_is_gone_has_no_descendants() -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert descendants(gone.pid) == []
