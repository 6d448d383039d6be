"""The ``parism`` CLI as a user runs it: a real process, real commands, real exit statuses."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """cwd of the CLI (its default allowed path) with a private, empty HOME."""
    w = (tmp_path / "work").resolve()
    (w / "home").mkdir(parents=True)
    return w


def env_for(work: Path) -> dict[str, str]:
    return {"HOME": str(work / "home"), "PYTHONPATH": str(REPO_ROOT), "PATH": os.environ["PATH"]}


def cli(work: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "parism", *args], cwd=work, env=env_for(work),
        input=stdin.decode() if stdin is not None else None, capture_output=True, text=True, timeout=50,
    )


def envelope(done: subprocess.CompletedProcess[str]) -> dict:
    lines = done.stdout.splitlines()
    assert len(lines) == 1, "not a TTY: one compact JSON line"
    return json.loads(lines[0])


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag: str) -> None:
    import parism

    done = subprocess.run([sys.executable, "-m", "parism", flag], capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO_ROOT), "PATH": os.environ["PATH"]})
    assert done.returncode == 0
    assert done.stdout.strip() == f"parism {parism.__version__}"


@pytest.mark.parametrize("sub", ["run", "dry-run"])
def test_command_usage_line_names_the_command_once(work: Path, sub: str) -> None:
    done = cli(work, sub, "--help")
    assert done.returncode == 0
    assert done.stdout.splitlines()[0] == f"usage: parism {sub} [OPTIONS] -- CMD [ARGS ...]"


def test_license_is_the_mit_text_the_package_declares() -> None:
    import tomllib

    text = (REPO_ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Permission is hereby granted, free of charge" in text
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]


def test_serve_reports_each_config_problem_on_stderr_at_start(work: Path) -> None:
    bad = work / "bad.toml"
    bad.write_text('[guard]\ntimeout_msec = 5\nmax_items = "x"\n[guard.secrets]\noutput_patterns = ["(bad"]\n')
    done = subprocess.run([sys.executable, "-m", "parism", "serve", "--config", str(bad)], cwd=work,
                          env=env_for(work), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if "configuration:" in line]
    for key in ("guard.timeout_msec", "guard.max_items", "guard.secrets.output_patterns[0]"):
        assert sum(key in line for line in lines) == 1, (key, done.stderr)
    assert str(bad) in lines[0]
    good = subprocess.run([sys.executable, "-m", "parism"], cwd=work, env=env_for(work),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert "configuration:" not in good.stderr  # control: a clean start says nothing


@pytest.mark.parametrize(
    "argv",
    [["run", "ls", "-la"], ["frobnicate"], ["run"], ["parse", "--os", "plan9", "--", "ls"], ["run", "--format", "xml", "--", "ls"]],
)
def test_usage_errors_exit_2(work: Path, argv: list[str]) -> None:
    done = cli(work, *argv)
    assert done.returncode == 2
    assert "usage: parism" in done.stderr
    assert done.stdout == ""


def test_run_ok_exit_0_compact_json(work: Path) -> None:
    (work / "hello.txt").write_text("hi\n")
    done = cli(work, "run", "--format", "json", "--", "ls", "-la")  # the seed's shape (default: lean)
    assert done.returncode == 0, done.stderr
    env = envelope(done)
    assert env["ok"] is True and env["exitCode"] == 0
    assert "hello.txt" in {e["name"] for e in env["stdout"]["parsed"]["entries"]}


def test_run_not_ok_exit_1(work: Path) -> None:
    done = cli(work, "run", "--", "ls", str(work / "missing"))
    assert done.returncode == 1
    env = envelope(done)
    assert env["exitCode"] == 2 and env["failure"]["reason"] == "non_zero_exit"


def test_run_guard_refusal_exit_1(work: Path) -> None:
    done = cli(work, "run", "--", "rm", "-rf", "/")
    assert done.returncode == 1
    assert envelope(done)["failure"]["kind"] == "guard"


def test_dry_run_exit_follows_the_decision(work: Path) -> None:
    blocked = cli(work, "dry-run", "--", "rm", "-rf", "/")
    assert blocked.returncode == 1
    assert envelope(blocked)["reason"] == "command_not_allowed"
    passing = cli(work, "dry-run", "--", "ls", "-la")
    assert passing.returncode == 0
    assert envelope(passing) == {"would_pass": True, "reason": None, "message": None}


def test_describe_and_describe_cmd(work: Path) -> None:
    whole = cli(work, "describe")
    assert whole.returncode == 0
    assert "ls" in envelope(whole)["allowed_commands"]
    git = cli(work, "describe", "git")
    assert git.returncode == 0
    assert envelope(git)["cmd"] == "git"


def test_parse_reads_saved_output_from_stdin(work: Path) -> None:
    for name, size in (("a.bin", 3), ("b.bin", 70)):
        (work / name).write_bytes(b"x" * size)
    saved = subprocess.run(["ls", "-l", str(work)], capture_output=True, check=True,
                           env={"LC_ALL": "C", "PATH": os.environ["PATH"]}).stdout
    done = cli(work, "parse", "--os", "linux", "--", "ls", "-l", stdin=saved)
    assert done.returncode == 0, done.stderr
    env = envelope(done)
    sizes = {e["name"]: e.get("size_bytes", e.get("size")) for e in env["stdout"]["parsed"]["entries"]}
    assert sizes["a.bin"] == 3 and sizes["b.bin"] == 70
    assert env["stdout"]["raw"] == saved.decode()


def test_config_prints_values_with_their_origin(work: Path) -> None:
    cfg = work / "custom.toml"
    cfg.write_text("[guard]\ntimeout_ms = 4321\n")
    done = cli(work, "config", "--config", str(cfg))
    assert done.returncode == 0, done.stderr
    lines = {ln.split(" = ")[0]: ln for ln in done.stdout.splitlines()}
    assert lines["guard.timeout_ms"].startswith("guard.timeout_ms = 4321  # ")
    assert str(cfg) in lines["guard.timeout_ms"] or "custom.toml" in lines["guard.timeout_ms"]
    as_json = json.loads(cli(work, "config", "--config", str(cfg), "--json").stdout)
    assert as_json["guard.timeout_ms"]["value"] == 4321
    assert as_json["guard.max_page_size"]["origin"] != as_json["guard.timeout_ms"]["origin"]


def test_bad_config_names_file_and_key_exit_2(work: Path) -> None:
    cfg = work / "broken.toml"
    cfg.write_text("[guard]\ntimeout_msec = 5\n")
    done = cli(work, "config", "--config", str(cfg))
    assert done.returncode == 2
    assert "broken.toml" in done.stderr and "timeout_msec" in done.stderr
    ran = cli(work, "run", "--config", str(cfg), "--", "ls")
    assert ran.returncode == 2
    failure = envelope(ran)["failure"]
    assert failure["kind"] == "config" and failure["reason"] == "invalid_config"
    assert "timeout_msec" in failure["message"]


def test_tty_output_is_indented(work: Path) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "parism", "dry-run", "--", "ls"], cwd=work,
                            env=env_for(work), stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO once the child closed the pty
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=30) == 0
    text = b"".join(chunks).decode().replace("\r\n", "\n")
    assert text.startswith('{\n  "would_pass": true')


def test_non_serve_subcommands_do_not_import_mcp(work: Path) -> None:
    code = (
        "import sys\nfrom parism.cli.main import main\n"
        "status = main(['dry-run', '--', 'ls'])\n"
        "assert not any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules), 'mcp imported'\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=work, env=env_for(work), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_no_arguments_serves_stdio_and_exits_0_on_eof(work: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "parism"], cwd=work, env=env_for(work),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_run_kills_the_command_and_exits_128_plus_signal(work: Path, signum: int) -> None:
    cfg = work / "sleep.toml"
    cfg.write_text('[guard]\nallowed_commands = ["sleep"]\n\n[guard.command_policies.sleep]\npositionals = "any"\n')
    seconds = f"{400 + os.getpid() % 500}.{signum:02d}{os.getpid() % 10000:04d}"
    proc = subprocess.Popen([sys.executable, "-m", "parism", "run", "--config", str(cfg), "--", "sleep", seconds],
                            cwd=work, env=env_for(work), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while not _sleeps(seconds):
            assert time.monotonic() < deadline, "sleep never started"
            time.sleep(0.05)
        proc.send_signal(signum)
        assert proc.wait(timeout=15) == 128 + signum
        deadline = time.monotonic() + 5
        while _sleeps(seconds):
            assert time.monotonic() < deadline, "the command outlived the interrupted CLI"
            time.sleep(0.05)
    finally:
        for leftover in _sleeps(seconds):
            leftover.kill()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _sleeps(arg: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["name", "cmdline", "status"]):
        if p.info["name"] == "sleep" and arg in (p.info["cmdline"] or []) and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(p)
    return found
