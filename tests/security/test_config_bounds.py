"""Unbounded strings from a project (issue 23 class 6): a project-layer ``redaction_marker`` of
100 KB turned 1.5 KB of output into a 20–40 MB answer. Now every configured string has a bound
checked at load (the marker: 64 characters), and the answer after masking is capped like the
output before it — a 64-character marker over 40,000 one-character matches cannot multiply the
answer either. The armed trap: the redactor's own masking of the same text (what the answer
was built from before) is 25 times the cap.
"""

from __future__ import annotations

import json
from pathlib import Path

import tomli_w

from parism.config import load_config
from parism.engine import Engine, create_engine
from parism.output.redact import Redactor

CAP = 102_400  # guard.max_output_bytes' default


def workspace(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    ws.chmod(0o755)
    return ws


def test_a_100_kb_project_marker_refuses_the_configuration(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "parism.toml").write_text(tomli_w.dumps({"guard": {"secrets": {"redaction_marker": "M" * 100_000}}}))
    home = tmp_path / "home"
    home.mkdir()
    e = Engine(load_config(None, cwd=str(ws), environ={"HOME": str(home), "PATH": "/usr/bin:/bin"}))
    try:
        env = e.run("ls", [], str(ws)).to_wire()
    finally:
        e.close()
    assert env["ok"] is False and env["failure"]["reason"] == "invalid_config", env
    assert "guard.secrets.redaction_marker" in env["failure"]["message"] and "64" in env["failure"]["message"]
    assert len(json.dumps(env)) < 4096  # the refused marker is not echoed


def test_masking_cannot_multiply_the_answer(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    text = ("x " * 40 + "\n") * 1000  # 81 KB, under the cap; 40,000 one-character matches
    (ws / "f.txt").write_text(text)
    secrets = {"output_redaction_enabled": True, "output_patterns": ["x"], "redaction_marker": "M" * 64}
    cfg = tmp_path / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"allowed_paths": [str(ws)], "allowed_commands": ["cat"],
                                            "secrets": secrets}}))
    e = create_engine(str(cfg))
    try:
        assert e.errors == [], e.errors  # a 64-character marker is at its bound: accepted
        env = e.run("cat", ["f.txt"], str(ws)).to_wire()
        armed = Redactor.from_config(e.cfg).mask(text).text
    finally:
        e.close()
    assert len(armed.encode()) > 25 * CAP  # armed: masking alone makes the text 2.6 MB
    raw = env["stdout"]["raw"]
    assert 0 < len(raw.encode()) <= CAP and set(raw) <= {"M", " ", "\n"}, len(raw)
    assert raw.endswith("\n") and env["truncated"] is True
    assert any(o["stage"] == "capture" and "after masking" in o["reason"] for o in env["omission"]), env["omission"]
    assert len(json.dumps(env)) < 4 * CAP  # raw and its parsed lines, each from the capped text


def test_parse_output_masking_cannot_multiply_the_answer_either(tmp_path: Path) -> None:
    text = ("x " * 40 + "\n") * 1000
    secrets = {"output_redaction_enabled": True, "output_patterns": ["x"], "redaction_marker": "M" * 64}
    cfg = tmp_path / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"allowed_commands": ["cat"], "secrets": secrets}}))
    e = create_engine(str(cfg))
    try:
        env = e.parse_output("cat", [], text).to_wire()
        armed = Redactor.from_config(e.cfg).mask(text).text
    finally:
        e.close()
    assert len(armed.encode()) > 25 * CAP  # armed
    assert len(env["stdout"]["raw"].encode()) <= CAP and env["truncated"] is True, len(env["stdout"]["raw"])
    assert len(json.dumps(env)) < 4 * CAP
