"""``parsers.external_isolation = "none"`` must not kill the host (issue #23, class 4).

After each parse the worker ends what the pack left behind. f4aedb0 did that with
``_reap_others``: SIGKILL to every pid in /proc but 1 and itself — inside the worker's pid
namespace its own children, in ``"none"`` mode every process the server may signal (an
operator's shell, the Docker daemon). Now it kills only its own children (it is a subreaper,
so the pack's orphans are its children too).

Everything runs inside a private pid namespace (bwrap ``--unshare-pid --as-pid-1``, the driver
is its pid 1), so a broken build can only hurt that namespace: a sentinel process started
before the pack must survive the call; the pack's own leftovers — a child in a session of its
own and a double-forked orphan — must not. The armed trap: the old ``_reap_others``, verbatim,
run in the same kind of namespace, kills the sentinel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from parism.packs import worker as worker_mod

OLD_REAP = '''
import os, signal
def _reap_others():
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in (1, me):
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
_reap_others()
'''

PACK = '''
import os, subprocess, time
from parism.types import ParserPack

def parse(raw, args, ctx):
    lone = subprocess.Popen(["sleep", "60"], start_new_session=True)  # its own session and group
    r, w = os.pipe()
    middle = os.fork()
    if middle == 0:  # double fork: the grandchild is orphaned, re-parented to the subreaper
        grandchild = os.fork()
        if grandchild == 0:
            os.setsid()
            time.sleep(60)
            os._exit(0)
        os.write(w, str(grandchild).encode())
        os._exit(0)
    os.close(w)
    orphan = int(os.read(r, 32))
    os.waitpid(middle, 0)
    return {"lone": lone.pid, "orphan": orphan}

PACK = ParserPack(name="leftovers", parse=parse)
'''

DRIVER = '''
import json, os, subprocess, sys, time
mode, root, pack = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, root)
assert os.getpid() == 1
sentinel = subprocess.Popen(["sleep", "60"])
out = {"sentinel": sentinel.pid}
if mode == "old":
    subprocess.run([sys.executable, "-c", sys.argv[4]])
else:
    from parism.packs.worker import Limits, Worker
    w = Worker(pack, Limits(time_ms=10000, isolation="none"))
    w.start()
    left = w.call({"op": "parse", "raw": "", "args": []})["value"]
    # right after the call, before the worker is stopped: each leftover is gone
    out["leftovers_alive"] = [p for p in left.values() if os.path.exists("/proc/%d" % p)]
    out["leftovers"] = left
    out["worker_alive"] = w.proc.poll() is None
    w.stop()
time.sleep(0.1)
out["sentinel_status"] = sentinel.poll()
print(json.dumps(out), flush=True)
sentinel.kill()
'''


def in_private_pid_namespace(args: list[str]) -> dict:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap is not installed")
    argv = [bwrap, "--dev-bind", "/", "/", "--unshare-pid", "--as-pid-1", "--proc", "/proc", "--die-with-parent",
            "--", sys.executable, "-c", DRIVER, *args]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, env=dict(os.environ))
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr[-3000:])
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def test_none_mode_kills_the_pack_s_leftovers_and_nothing_else(tmp_path: Path) -> None:
    pack = tmp_path / "leftovers"
    pack.mkdir()
    (pack / "parser.py").write_text(textwrap.dedent(PACK))

    control = in_private_pid_namespace(["old", worker_mod.ROOT, str(pack), OLD_REAP])
    assert control["sentinel_status"] == -9, control  # the armed trap: the old reaper killed it

    out = in_private_pid_namespace(["new", worker_mod.ROOT, str(pack)])
    assert out["sentinel_status"] is None, out  # still running after the call and the stop
    assert out["worker_alive"] is True, out  # the worker does not kill itself either
    assert set(out["leftovers"]) == {"lone", "orphan"} and out["leftovers_alive"] == [], out
