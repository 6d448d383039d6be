"""Ordinary commands still give correct parsed results under the sandbox.

Expected values come from the host itself (os.stat, our own pid, git run on the host), never
from the sandboxed run.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

from parism.parsers.registry import get_parser, parse
from tests.security.sandbox.helpers import run, sandbox_factory, workspace

__all__ = ["sandbox_factory", "workspace"]

GIT = ["/usr/bin/git", "-c", "safe.directory=*", "-c", "core.fsmonitor=false"]


def test_ls_la_parses_to_the_real_directory(sandbox_factory, workspace: Path) -> None:
    (workspace / "data.bin").write_bytes(b"x" * 1234)
    (workspace / "sub").mkdir()
    (workspace / "link").symlink_to("data.bin")
    sb = sandbox_factory([str(workspace)])
    r = run(sb, ["/usr/bin/ls", "-la"], str(workspace))
    out = parse("ls", ["-la"], r.out, "linux")
    assert out.parse_error is None, out.parse_error
    entries = {e["name"]: e for e in out.parsed["entries"]}
    assert set(entries) == {".", "..", *os.listdir(workspace)}
    for name in os.listdir(workspace):
        st = os.lstat(workspace / name)
        assert entries[name]["size_bytes"] == st.st_size, name
    assert entries["sub"]["type"] == "directory"
    if sb.status()["identity"]["mode"] == "identity_map":  # else the engine corrects (parism/run/truth)
        assert entries["README"]["owner"] == pwd.getpwuid(os.lstat(workspace / "README").st_uid).pw_name


def test_ps_aux_in_host_procs_class_sees_the_host(sandbox_factory, workspace: Path) -> None:
    sb = sandbox_factory([str(workspace)])
    r = run(sb, ["/usr/bin/ps", "aux"], str(workspace), namespace="host_procs")
    out = parse("ps", ["aux"], r.out, "linux")
    assert out.parse_error is None, out.parse_error
    procs = out.parsed["processes"]
    schema = procs["schema"] if isinstance(procs, dict) else None
    rows = [dict(zip(schema, row)) for row in procs["rows"]] if schema else procs
    mine = [p for p in rows if p["pid"] == os.getpid()]
    assert len(mine) == 1 and "pytest" in mine[0]["command"]


def test_ps_aux_isolated_sees_only_the_sandbox(sandbox_factory, workspace: Path) -> None:
    sb = sandbox_factory([str(workspace)])
    r = run(sb, ["/usr/bin/ps", "aux"], str(workspace))
    out = parse("ps", ["aux"], r.out, "linux")
    procs = out.parsed["processes"]
    rows = procs["rows"] if isinstance(procs, dict) else procs
    assert 2 <= len(rows) <= 4  # bwrap's PID 1, the helper, ps itself


def test_git_status_porcelain_matches_the_host(sandbox_factory, workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    subprocess.run(["git", "-C", str(workspace), "add", "README"], check=True)
    (workspace / "README").write_text("changed\n")
    (workspace / "untracked.txt").write_text("new\n")
    host = subprocess.run([*GIT, "status", "--porcelain"], cwd=workspace, capture_output=True,
                          text=True, check=True).stdout
    assert host == "AM README\n?? untracked.txt\n"
    sb = sandbox_factory([str(workspace)])
    r = run(sb, [*GIT, "status", "--porcelain"], str(workspace))
    assert r.cap.exit_code == 0, r.err
    assert r.out == host
    if get_parser("git") is not None:
        assert parse("git", ["status", "--porcelain"], r.out, "linux").parsed == \
            parse("git", ["status", "--porcelain"], host, "linux").parsed
