"""Real git repositories built for the git parser tests; every expected value in the tests is
something these builders did (a rename, a merge, an upstream two commits behind ...)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.parsers.text.realrun import ENV

IDENTITY = {"GIT_AUTHOR_NAME": "Ann Author", "GIT_AUTHOR_EMAIL": "ann@example.com",
            "GIT_COMMITTER_NAME": "Carl Committer", "GIT_COMMITTER_EMAIL": "carl@example.com",
            "GIT_AUTHOR_DATE": "2024-03-05T10:20:30+01:00", "GIT_COMMITTER_DATE": "2024-03-05T10:20:30+01:00"}
GIT_ENV = ENV | IDENTITY


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode("utf-8", errors="replace")


def build(root: Path) -> Path:
    """origin (bare) ← work: main is 1 ahead and 1 behind origin/main; a merge commit; tag v1.0;
    a feature branch with a '[WIP]' message; and a dirty work tree with every change kind."""
    origin, work = root / "origin.git", root / "work"
    git(root, "init", "-q", "--bare", "-b", "main", str(origin))
    git(root, "init", "-q", "-b", "main", str(work))
    files = {"a.txt": "one\ntwo\nthree\n", "name with space.txt": "s\n", "ünï.txt": "u\n",
             "arrow -> name.txt": "arrow\n", "colon:file.txt": "c\n", "gone.txt": "bye\n",
             "bin.dat": "x"}
    for name, content in files.items():
        (work / name).write_text(content)
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "initial commit", "-m", "Body line one.\n\nBody paragraph two.")
    git(work, "tag", "-a", "v1.0", "-m", "first release")
    git(work, "checkout", "-q", "-b", "feature")
    (work / "feature.txt").write_text("f\n")
    git(work, "add", "feature.txt")
    git(work, "commit", "-q", "-m", "[WIP] feature work")
    git(work, "checkout", "-q", "main")
    git(work, "merge", "-q", "--no-ff", "feature", "-m", "Merge branch 'feature'")
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "-q", "-u", "origin", "main")
    # origin gets a commit that main lacks; main gets one that origin lacks → ahead 1, behind 1
    other = root / "other"
    git(root, "clone", "-q", str(origin), str(other))
    (other / "remote.txt").write_text("r\n")
    git(other, "add", "remote.txt")
    git(other, "commit", "-q", "-m", "remote side")
    git(other, "push", "-q", "origin", "main")
    git(work, "fetch", "-q", "origin")
    (work / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    git(work, "commit", "-q", "-am", "local side")
    # dirty work tree: staged M, MM, staged rename, staged add, unstaged delete, untracked
    (work / "a.txt").write_text("ONE\ntwo\nthree\nfour\n")
    git(work, "add", "a.txt")
    (work / "a.txt").write_text("ONE\ntwo\nthree\nfour\nfive\n")
    (work / "ünï.txt").write_text("u2\n")
    git(work, "add", "ünï.txt")
    git(work, "mv", "arrow -> name.txt", "renamed.txt")
    git(work, "mv", "name with space.txt", "new name.txt")
    (work / "added.txt").write_text("new\n")
    git(work, "add", "added.txt")
    (work / "gone.txt").unlink()
    (work / "untracked file.txt").write_text("?\n")
    (work / "bin.dat").write_bytes(b"\0\1\2")
    return work
