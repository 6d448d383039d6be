"""Hostile repositories and armed traps for the git attack tests (tests/security/test_git_*.py).

A trap is a script that marks that it ran (a file in ``markers``, ``TRAPFIRED-<name>`` on
stderr); a project owned by ``OWNER`` lets a sandboxed command (run as that uid) write the
marker if the trap ever runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import tomli_w

from parism.engine import Engine, create_engine

OWNER = 4242
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0",
           "PAGER": "cat", "GIT_PAGER": "cat", "LC_ALL": "C.UTF-8", "TZ": "UTC",
           "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
           "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com"}
Trap = Callable[..., str]


def git(repo: Path, *args: str, check_rc: bool = True) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-c", "safe.directory=*", *args], cwd=repo, env={**os.environ, **GIT_ENV},
                          check=check_rc, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)


def append(path: Path, text: str) -> None:
    with path.open("a") as fh:
        fh.write(text)


def make_repo(path: Path, attributes: str = "") -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "data.txt").write_text("one\n")
    if attributes:
        (path / ".gitattributes").write_text(attributes)
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "first")
    return path


def dirty(repo: Path) -> None:
    """A work-tree file whose stat no longer matches the index but whose size does: status and
    diff must hash it again, through its clean filter (a size change alone needs no hashing)."""
    path = repo / "data.txt"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 7_000_000_000))


def signed_head(repo: Path) -> None:
    """HEAD replaced by a commit with a (bogus) signature: showSignature calls gpg.program."""
    raw = git(repo, "cat-file", "commit", "HEAD").stdout.decode()
    headers, _, message = raw.partition("\n\n")
    sig = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
    oid = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=repo,
                         env={**os.environ, **GIT_ENV}, input=f"{headers}\n{sig}\n\n{message}".encode(),
                         check=True, capture_output=True).stdout.decode().strip()
    git(repo, "update-ref", "HEAD", oid)




@pytest.fixture
def workspace() -> Iterator[tuple[Path, Path, Trap]]:
    """(project, markers, trap): a project under /tmp owned by OWNER, markers inside it."""
    root = Path(tempfile.mkdtemp(prefix="parism-gitattack-", dir="/tmp"))
    root.chmod(0o755)
    ws = root / "ws"
    markers = ws / "markers"
    markers.mkdir(parents=True)

    def trap(name: str, passthrough: bool = True) -> str:
        """A program that marks that it ran; ``passthrough``: then copies stdin (a filter)."""
        script = ws / f"trap-{name}.sh"
        tail = "cat\n" if passthrough else "exit 1\n"
        script.write_text(f"#!/bin/sh\necho TRAPFIRED-{name} >&2\ntouch '{markers}/{name}'\n{tail}")
        script.chmod(0o755)
        return str(script)

    yield ws, markers, trap
    shutil.rmtree(root, ignore_errors=True)


def own(ws: Path) -> None:
    """The project becomes OWNER's (a root server then runs its commands as OWNER); a server that
    is not root runs them as itself, which already owns it."""
    if os.geteuid() != 0:
        return
    for dirpath, dirnames, filenames in os.walk(ws):
        for name in (*dirnames, *filenames):
            os.lchown(os.path.join(dirpath, name), OWNER, OWNER)
    os.chown(ws, OWNER, OWNER)


def make_engine(ws: Path, *, with_sh: bool = False) -> Engine:
    guard: dict[str, object] = {"profile": "build", "allowed_paths": [str(ws)]}
    if with_sh:  # trusted configuration for the channel control only
        guard |= {"allowed_commands": ["git", "sh"],
                  "command_policies": {"sh": {"positionals": "any"}}}
    doc = {"guard": guard, "sandbox": {"mode": "required"}}
    cfg = ws.parent / "parism.toml"
    cfg.write_text(tomli_w.dumps(doc))
    engine = create_engine(str(cfg))
    assert engine.errors == []
    return engine


def fired(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


