"""The server waits for every process its sandboxes start (issue 12 item 3): run under a
subreaper (``tests/e2e/subreaper.py``, a process of its own) for 100 calls of every sandbox
kind — pid namespace, host_procs, git, the output cap, the timeout — nothing is re-parented to
the subreaper, and the server holds no zombie. The old launcher left 76 bwrap and 12 helper
zombies there after 100 calls (the issue: 275 after 112)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import REPO_ROOT

pytestmark = [pytest.mark.timeout(300)]


def test_no_orphans_under_a_subreaper(workdir: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tests.e2e.subreaper", str(workdir), "100"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["control_orphan_seen"] is True  # the count does see an orphan
    assert {"ok", "exec/output_limit", "exec/timeout"} <= set(report["answers"]), report
    assert report["orphans"] == [], report
    assert report["server_zombies"] == [], report
