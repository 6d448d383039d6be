"""A client that goes away mid-call (issue #26): it closed its end of the server's stdout while a
``run`` was in flight, and the server's stderr got a 60-line traceback (BrokenPipeError through
the writer's task group).  Now: one warning line, and the server exits 0."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_client_closing_stdout_mid_call_leaves_one_line(tmp_path: Path) -> None:
    for i in range(300):
        (tmp_path / f"file-{i:03d}.txt").write_text("x")
    cfg = tmp_path / "parism.toml"
    cfg.write_text(f'[guard]\nallowed_paths = ["{tmp_path}"]\n')
    proc = subprocess.Popen([sys.executable, "-m", "parism", "serve", "--config", str(cfg)], cwd=tmp_path,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    def send(message: dict) -> None:
        try:
            proc.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
        except BrokenPipeError:  # the server already left: what this test waits for
            pass

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    assert b'"id":1' in proc.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "run", "arguments": {"cmd": "ls", "args": ["-la"], "cwd": str(tmp_path)}}})
    proc.stdout.close()  # the client is gone: nobody reads the answer
    time.sleep(3)
    send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
          "params": {"name": "run", "arguments": {"cmd": "ls", "args": ["-la"], "cwd": str(tmp_path)}}})
    try:
        proc.stdin.close()
    except BrokenPipeError:
        pass
    assert proc.wait(timeout=20) == 0
    err = proc.stderr.read().decode()
    assert "Traceback" not in err and "BrokenPipeError" not in err, err[-2000:]
    assert len(err.splitlines()) <= 2 and "client closed the server's stdout" in err, err
