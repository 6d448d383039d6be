"""``parism run --timeout`` and ``--stdin`` (issue 28): a real CLI process, real commands."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.cli.test_cli import cli, work  # noqa: F401 - the fixture

pytestmark = pytest.mark.timeout(60)

CONFIG = """\
[guard]
allowed_commands = ["sleep", "cat", "wc"]
timeout_ms = 30000
max_timeout_ms = 5000

[guard.command_policies.sleep]
positionals = "any"

[guard.command_policies.wc]
flags = { "-w" = "bool" }
positionals = "path"
"""


def _config(work: Path) -> Path:  # noqa: F811
    path = work / "parism-io.toml"
    path.write_text(CONFIG)
    return path


def test_timeout_flag_bounds_the_call(work: Path) -> None:  # noqa: F811
    cfg = _config(work)
    t0 = time.monotonic()
    done = cli(work, "run", "--config", str(cfg), "--timeout", "400", "--", "sleep", "20")
    assert time.monotonic() - t0 < 15
    env = json.loads(done.stdout)
    assert done.returncode == 1 and env["failure"]["reason"] == "timeout", done.stdout
    assert "400 ms" in env["failure"]["message"]


def test_timeout_flag_above_the_bound_is_refused(work: Path) -> None:  # noqa: F811
    done = cli(work, "run", "--config", str(_config(work)), "--timeout", "5001", "--", "sleep", "0")
    env = json.loads(done.stdout)
    assert env["failure"]["reason"] == "invalid_request"
    assert "guard.max_timeout_ms" in env["failure"]["message"] and "5000" in env["failure"]["message"]


def test_stdin_flags_give_the_command_its_input(work: Path) -> None:  # noqa: F811
    cfg = _config(work)
    done = cli(work, "run", "--config", str(cfg), "--format", "json", "--stdin", "one\ntwo\n", "--", "cat")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stdout"]["raw"] == "one\ntwo\n"
    (work / "in.txt").write_text("a b c\n")
    done = cli(work, "run", "--config", str(cfg), "--format", "json", "--stdin-file", str(work / "in.txt"), "--",
               "wc", "-w")
    assert json.loads(done.stdout)["stdout"]["raw"].split()[0] == "3"
    done = cli(work, "run", "--config", str(cfg), "--format", "json", "--stdin-file", "-", "--", "cat",
               stdin=b"piped\n")
    assert json.loads(done.stdout)["stdout"]["raw"] == "piped\n"
    done = cli(work, "run", "--config", str(cfg), "--format", "json", "--", "cat", stdin=b"not given\n")
    assert json.loads(done.stdout)["stdout"]["raw"] == ""  # without the flag: /dev/null, as before


def test_stdin_flag_errors(work: Path) -> None:  # noqa: F811
    cfg = _config(work)
    (work / "bin.dat").write_bytes(b"\xff\xfe")
    done = cli(work, "run", "--config", str(cfg), "--stdin-file", str(work / "bin.dat"), "--", "cat")
    assert done.returncode == 2 and "not UTF-8" in done.stderr
    done = cli(work, "run", "--config", str(cfg), "--stdin-file", str(work / "missing"), "--", "cat")
    assert done.returncode == 2 and "missing" in done.stderr
    done = cli(work, "run", "--config", str(cfg), "--stdin", "x", "--stdin-file", "-", "--", "cat")
    assert done.returncode == 2
