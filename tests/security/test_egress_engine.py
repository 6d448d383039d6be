"""The network model through the whole engine (guard + sandbox + egress proxy + envelope).

Issue 11: ``ping -c 1 127.0.0.1`` works sandboxed, and curl reaches a loopback listener that
``sandbox.network_allow`` opens. Issue 9: a redirect the guard cannot see (``curl -L`` in build)
is refused by the proxy, and the envelope says so (hint + ``review.warnings``). Counted on the
listeners; the armed traps are in test_sandbox_net.py and repeated here where cheap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import tomli_w

from parism.engine import Engine, create_engine
from tests.security.sandbox.netlab import Internet, Loopback, internet, loopback, settle

__all__ = ["internet", "loopback"]

pytestmark = pytest.mark.skipif(shutil.which("curl") is None or shutil.which("ping") is None,
                                reason="curl and ping needed")


def engine(tmp_path: Path, **sandbox: Any) -> Engine:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    ws.chmod(0o755)
    tmp_path.chmod(0o755)
    guard: dict[str, Any] = {"allowed_paths": [str(ws)]}
    if sandbox.pop("build", False):
        guard["profile"] = "build"
        if os.geteuid() == 0:  # the project's own user (tmp_path's parents are root's 0700: no build as root)
            os.chown(ws, 4242, 4242)
    cfg = tmp_path / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": guard, "sandbox": {"mode": "required", **sandbox}}))
    e = create_engine(str(cfg))
    assert e.errors == [], e.errors
    return e


def test_ping_loopback_works_sandboxed(tmp_path: Path) -> None:
    e = engine(tmp_path)
    try:
        env = e.run("ping", ["-c", "1", "-W", "2", "127.0.0.1"], str(tmp_path / "ws"), contract_version="next").to_wire()
    finally:
        e.close()
    assert env["ok"] is True and env["exitCode"] == 0, env
    assert env["review"]["sandbox"]["level"] == "full" and env["review"]["sandbox"]["network"] is True


def test_curl_reaches_a_listener_that_network_allow_opens(tmp_path: Path, loopback: Loopback) -> None:
    (tmp_path / "a").mkdir()
    closed = engine(tmp_path / "a")
    try:
        refused = closed.dry_run("curl", ["-s", loopback.url()], str(tmp_path / "a" / "ws")).to_wire()
    finally:
        closed.close()
    assert refused["would_pass"] is False and "loopback" in refused["message"], refused
    (tmp_path / "b").mkdir()
    opened = engine(tmp_path / "b", network_allow=[f"127.0.0.1:{loopback.port}"])
    try:
        env = opened.run("curl", ["-s", loopback.url("/parity")], str(tmp_path / "b" / "ws"), contract_version="next").to_wire()
    finally:
        opened.close()
    assert env["ok"] is True and env["stdout"]["raw"] == "loopback\n", env
    assert loopback.hits == ["GET /parity HTTP/1.1"]


def test_redirect_to_loopback_is_refused_by_the_proxy_and_reported(tmp_path: Path, internet: Internet,
                                                                  loopback: Loopback) -> None:
    start = internet.url("/redirect/" + quote(loopback.url("/stolen"), safe=""))
    e = engine(tmp_path, build=True, network_allow=[internet.net])
    try:
        assert e.dry_run("curl", ["-sS", "-f", "-L", start], str(tmp_path / "ws")).would_pass is True
        env = e.run("curl", ["-sS", "-f", "-L", start], str(tmp_path / "ws"), contract_version="next").to_wire()
    finally:
        e.close()
    settle()
    assert loopback.hits == [], loopback.hits
    assert env["ok"] is False and "egress proxy refused" in env["failure"]["hint"], env
    assert "loopback" in env["failure"]["hint"] and "egress_refused" in env["review"]["warnings"], env
    trap = subprocess.run(["curl", "-sS", "-L", "--max-time", "5", start], capture_output=True, text=True, timeout=20)
    assert trap.stdout == "loopback\n" and len(loopback.hits) == 1  # armed
