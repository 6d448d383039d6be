"""``--stat`` and ``--numstat`` paths read exactly: C-quoted names unquoted, renames as ``path`` +
``orig_path`` (``old_path`` in diff's file rows), never ``old => new`` as one path. Every expected
value comes from git's own NUL-separated plumbing (``git diff --numstat -z``), not from Parism."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.parsers.git.gitrepo import GIT_ENV, git
from tests.parsers.text.realrun import parse, parsed

NAMES = {"plain.txt": "p\n", "ünï.txt": "u\n", "sp ä.txt": "s\n", 'quo"te.txt': "q\n",
         "tab\there.txt": "t\n", "top/only.txt": "o\n", "p/q/deep.txt": "d\n", "d1/f.txt": "f\n",
         "ü1/g.txt": "g\n", "keep.txt": "k\n"}
MOVES = {"plain.txt": "moved.txt", "ünï.txt": "dir ü/ünï.txt", "sp ä.txt": "sp ö.txt",
         'quo"te.txt': 'quo"ted.txt', "top/only.txt": "top/sub/only.txt", "p/q/deep.txt": "p/deep.txt",
         "d1/f.txt": "d2/f.txt", "ü1/g.txt": "ü2/g.txt"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("stat") / "w"
    git(work.parent, "init", "-q", "-b", "main", str(work))
    for name, content in NAMES.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(content)
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "one")
    for old, new in MOVES.items():
        (work / new).parent.mkdir(parents=True, exist_ok=True)
        git(work, "mv", old, new)
    (work / "keep.txt").write_text("k\nk2\n")
    (work / "tab\there.txt").write_text("t\nt2\n")
    git(work, "commit", "-qam", "two")
    return work


def truth(repo: Path) -> dict[str, str | None]:
    """path → orig_path (None when not renamed), from ``git diff --numstat -z HEAD~1``: a rename
    record is ``ins TAB del TAB NUL orig NUL new NUL``, any other ``ins TAB del TAB path NUL``."""
    out = subprocess.run(["git", "diff", "--numstat", "-z", "HEAD~1"], cwd=repo, env=GIT_ENV,
                         capture_output=True, check=True).stdout
    fields, got, i = out.split(b"\0"), {}, 0
    while i < len(fields) and fields[i]:
        counts = fields[i]
        if counts.endswith(b"\t"):  # rename: the two paths follow
            got[fields[i + 2].decode()] = fields[i + 1].decode()
            i += 3
        else:
            got[counts.split(b"\t", 2)[2].decode()] = None
            i += 1
    return got


def rows(files: list[dict], orig_key: str) -> dict[str, str | None]:
    return {f["path"]: f.get(orig_key) for f in files}


def test_diff_stat_paths_are_gits_own(repo: Path) -> None:
    expected = truth(repo)
    assert len(expected) == 10 and expected["dir ü/ünï.txt"] == "ünï.txt"  # the repo is as built
    res = parsed("git", ["diff", "--stat=200", "HEAD~1"], git(repo, "diff", "--stat=200", "HEAD~1"))
    assert rows(res["stats"]["files"], "orig_path") == expected


def test_diff_numstat_paths_are_gits_own(repo: Path) -> None:
    res = parsed("git", ["diff", "--numstat", "HEAD~1"], git(repo, "diff", "--numstat", "HEAD~1"))
    assert rows(res["files"], "old_path") == truth(repo)


def test_log_stat_paths_are_gits_own(repo: Path) -> None:
    for args in (["log", "--stat=200", "-n", "1"], ["log", "--stat=200", "-n", "1", "--format=%h"],
                 ["log", "--numstat", "-n", "1", "--oneline"]):
        commits = parsed("git", args, git(repo, *args))["commits"]
        assert len(commits) == 1, args  # a stat line is never read as another commit
        assert rows(commits[0]["stats"]["files"], "orig_path") == truth(repo), args


def test_a_path_git_shortened_says_so(repo: Path) -> None:
    args = ["diff", "--stat=40", "HEAD~1"]
    text = git(repo, *args)
    assert ".../" in text  # the control: git really shortened a path at this width
    files = parsed("git", args, text)["stats"]["files"]
    short = [f for f in files if f.get("shortened")]
    # git keeps only the tail, even of a quoted name or inside a rename: kept as printed, marked
    assert short and all(f["path"].startswith("...") and "orig_path" not in f for f in short)
    whole = truth(repo)
    assert len(files) == len(whole)
    assert all(f["path"] in whole for f in files if not f.get("shortened"))


def test_two_arrows_cannot_be_split_and_are_refused(tmp_path: Path) -> None:
    work = tmp_path / "w"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "x => y").mkdir()
    (work / "x => y" / "z").write_text("1\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "one")
    git(work, "mv", "x => y/z", "xz")
    git(work, "commit", "-qm", "two")
    text = git(work, "diff", "--stat", "HEAD~1")
    assert "x => y/z => xz" in text  # git prints both arrows unquoted
    out = parse("git", ["diff", "--stat", "HEAD~1"], text)
    assert out.parse_error is not None and out.parse_error.hint.args == ["diff", "HEAD~1", "--name-status"]
