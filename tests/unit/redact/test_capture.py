"""sanitize_capture: fixture text without secrets, home, user or host, and an honest tally."""

from __future__ import annotations

import getpass
import os
import socket
import subprocess
from pathlib import Path

from parism.output.redact import Redactor
from parism.output.redact.capture import Redaction, sanitize_capture
from tests.unit.redact.leak_corpus import DOTENV, GH_CLASSIC, LINE_LEAKS, STRIPE_SECRET, leaked_pieces

IDENTITY = {"home": "/home/ada", "user": "ada", "host": "build-box-7.corp.example"}


def test_secrets_home_user_and_host_are_masked_and_tallied() -> None:
    stdout = (
        "/home/ada/src/app/.env\n"
        "owner ada on build-box-7.corp.example (build-box-7)\n"
        "/home/bob/notes.txt\n"
        f"GITHUB_PAT_BACKUP={GH_CLASSIC}\n"
        "adam is not ada\n"
    )
    result = sanitize_capture("grep", ["-r", "KEY", "/home/ada/src"], stdout, "", **IDENTITY)
    assert result.stdout == (
        "~/src/app/.env\n"
        "owner <user> on <host> (<host>)\n"
        "/home/<user>/notes.txt\n"
        "GITHUB_PAT_BACKUP=[REDACTED]\n"
        "adam is not <user>\n"
    )
    assert result.args == ["-r", "KEY", "~/src"]
    assert result.args_redacted is False
    assert sorted(result.redactions, key=lambda r: (r.kind, r.pattern)) == [
        Redaction("home_path", "home", 3),
        Redaction("host_name", "host", 2),
        Redaction("secret", "github_token", 1),
        Redaction("user_name", "user", 2),
    ]


def test_argv_secrets_become_redacted_len() -> None:
    args = ["--token=abc123def", "--password", "hunter2", GH_CLASSIC, "--verbose"]
    result = sanitize_capture("tool", args, "", "", **IDENTITY)
    assert result.args == ["--token=<redacted:9>", "--password", "<redacted:7>", "<redacted:40>", "--verbose"]
    assert result.args_redacted is True
    assert Redaction("argv_secret", "argv", 3) in result.redactions


def test_whole_corpus_in_stdout_and_stderr() -> None:
    result = sanitize_capture("cat", [".env"], DOTENV, "warning: " + STRIPE_SECRET, **IDENTITY)
    assert leaked_pieces([result.stdout, result.stderr, *result.args], LINE_LEAKS) == []
    assert sum(r.count for r in result.redactions if r.kind == "secret") >= len(LINE_LEAKS)


def test_real_run_of_this_machine_hides_who_and_where(tmp_path: Path) -> None:
    """Defaults come from this machine: run `ls -la` and `hostname` in the real home."""
    home = os.path.expanduser("~")
    listing = subprocess.run(["ls", "-la", home], capture_output=True, text=True, check=True).stdout
    host = subprocess.run(["hostname"], capture_output=True, text=True, check=True).stdout
    result = sanitize_capture("ls", ["-la", home], listing + host, "")
    assert home not in result.stdout and result.args == ["-la", "~"]
    if socket.gethostname() not in ("", "localhost"):
        assert socket.gethostname() not in result.stdout
    user = getpass.getuser()
    if user not in ("root", "") and len(user) >= 3:
        assert user not in result.stdout


def test_fallback_timeout_withholds_the_fixture() -> None:
    slow = Redactor([r"(?m)^(a|aa)+\1$"], fallback_time_limit_s=0.05)
    result = sanitize_capture("cat", ["f"], "a" * 5000 + "b", "", redactor=slow, **IDENTITY)
    assert result.withheld_reason and result.stdout == "" and result.redactions == []
