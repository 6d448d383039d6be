"""A server holding many descriptors still starts sandboxes (the helper's pipes and nofile).

The helper gets its control and output pipes under the numbers they had in the server; it then
sets the call's ``nofile`` limit. A server with more descriptors open than that limit (many
pooled sandboxes, clients, pack workers) handed the helper numbers past it, and the spawn's
``dup2`` of the output pipe failed with EBADF: the probe reported ``level none`` and ``required``
refused every call ("cannot run /usr/bin/true: Bad file descriptor inside the sandbox"). The
helper now moves its three descriptors to the lowest free numbers first.
"""

from __future__ import annotations

import os
import resource
import shutil
from collections.abc import Iterator

import pytest

from parism.run.sandbox import Sandbox
from tests.security.sandbox.helpers import SH, run, settings

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
NOFILE = 64


@pytest.fixture
def crowded() -> Iterator[int]:
    """NOFILE + 40 descriptors open in this process: the next pipes are numbered past NOFILE."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < NOFILE + 200:
        pytest.skip(f"this process may open only {soft} descriptors")
    held = [os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC) for _ in range(NOFILE + 40)]
    try:
        yield max(held)
    finally:
        for fd in held:
            os.close(fd)


def test_pipes_numbered_past_the_nofile_limit_still_reach_the_command(crowded: int, tmp_path) -> None:
    tmp_path.chmod(0o755)
    read, write = os.pipe()  # the control: where the sandbox's own pipes will be numbered
    os.close(read)
    os.close(write)
    assert read > NOFILE, "the pipes would not lie past the limit: the test could not fail"
    sandbox = Sandbox(settings(nofile=NOFILE), [str(tmp_path)], str(tmp_path), pool_size=0)
    status = sandbox.status()
    assert status["level"] == "full", status["reason"]
    r = run(sandbox, [SH, "-c", "echo out; echo err >&2; ulimit -n"], str(tmp_path))
    assert (r.cap.exit_code, r.out, r.err) == (0, f"out\n{NOFILE}\n", "err\n")
