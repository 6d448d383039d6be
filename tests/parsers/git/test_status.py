"""git status in every form against a real repository whose changes the builder made."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.parsers.git.gitrepo import GIT_ENV, build, git
from tests.parsers.text.realrun import parse, parsed

EXPECTED = {  # path → (xy, orig_path): what gitrepo.build did to the work tree
    "a.txt": ("MM", None),
    "ünï.txt": ("M ", None),
    "renamed.txt": ("R ", "arrow -> name.txt"),
    "new name.txt": ("R ", "name with space.txt"),
    "added.txt": ("A ", None),
    "gone.txt": (" D", None),
    "bin.dat": (" M", None),
    "untracked file.txt": ("??", None),
}


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("status"))


def status(work: Path, *args: str) -> dict:
    return parsed("git", ["status", *args], git(work, "status", *args))


def _by_path(res: dict) -> dict[str, tuple[str, str | None]]:
    return {e["path"]: (e["xy"], e.get("orig_path")) for e in res["entries"]}


@pytest.mark.parametrize("args", [("--porcelain",), ("--porcelain", "-z"), ("-s",), ("-sb",),
                                  ("--porcelain", "-b", "-z"), ()])
def test_bug_31_every_form_gives_the_same_entries(work: Path, args: tuple[str, ...]) -> None:
    assert _by_path(status(work, *args)) == EXPECTED


@pytest.mark.parametrize("args", [("--porcelain=v2",), ("--porcelain=v2", "-z", "--branch")])
def test_porcelain_v2_same_paths(work: Path, args: tuple[str, ...]) -> None:
    got = _by_path(status(work, *args))
    assert {p: o for p, (_, o) in got.items()} == {p: o for p, (_, o) in EXPECTED.items()}
    assert got["a.txt"][0] == "MM" and got["gone.txt"][0] == ".D"


def test_quoted_paths_are_decoded_only_in_line_mode(work: Path) -> None:
    line = {e["path"]: e for e in status(work, "--porcelain")["entries"]}
    assert line["ünï.txt"]["quoted"] is True
    assert line["renamed.txt"] == {"xy": "R ", "index": "R", "worktree": " ", "path": "renamed.txt",
                                   "orig_path": "arrow -> name.txt", "quoted": True}
    nul = {e["path"]: e for e in status(work, "--porcelain", "-z")["entries"]}
    assert "quoted" not in nul["ünï.txt"]


def test_branch_header_and_long_format_upstream(work: Path) -> None:
    for args in (("--porcelain", "-b"), ()):
        got = status(work, *args)
        assert (got["branch"], got["upstream"], got["ahead"], got["behind"]) == ("main", "origin/main", 1, 1)
    v2 = status(work, "--porcelain=v2", "--branch")
    assert (v2["branch"], v2["upstream"], v2["ahead"], v2["behind"]) == ("main", "origin/main", 1, 1)


def test_detached_head_and_no_commits(tmp_path: Path, work: Path) -> None:
    git(work, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"), "v1.0")
    wt = tmp_path / "wt"
    assert status(wt, "--porcelain", "-b") == {"branch": "HEAD", "detached": True, "entries": []}
    # a fresh worktree has no reflog: git says "Not currently on any branch."
    assert status(wt) == {"branch": "HEAD", "detached": True, "entries": []}
    git(tmp_path, "clone", "-q", str(work), "cl")
    git(tmp_path / "cl", "checkout", "-q", "v1.0")
    long = status(tmp_path / "cl")
    assert (long["branch"], long["detached"], long["detached_at"]) == ("HEAD", True, "v1.0")
    git(tmp_path, "init", "-q", "-b", "fresh", "empty")
    assert status(tmp_path / "empty", "--porcelain", "-b") == {
        "branch": "fresh", "no_commits": True, "entries": []}
    assert status(tmp_path / "empty")["no_commits"] is True


def test_documented_forms_without_a_repository() -> None:
    # git's documented short-format branch headers (git-status(1), "Branch Headers")
    got = parsed("git", ["status", "-sb"], "## dev...origin/dev [gone]\n?? x\n")
    assert got["upstream_gone"] is True and got["branch"] == "dev"
    got = parsed("git", ["status", "-sb"], "## HEAD (no branch)\nUU both.txt\n")
    assert got["entries"][0]["xy"] == "UU" and got["detached"] is True


def test_bug_35_leading_flags_are_skipped(work: Path) -> None:
    # bug 35: -C, --no-pager and -c before the subcommand used to mean "no parser"
    args = ["-C", str(work), "--no-pager", "-c", "core.fsmonitor=false", "status", "--porcelain"]
    out = parse("git", args, git(work, "status", "--porcelain"))
    assert out.parse_error is None and _by_path(out.parsed) == EXPECTED


def test_unknown_subcommand_and_column_are_out_of_range() -> None:
    out = parse("git", ["clone", "x"], "")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    out = parse("git", ["status", "--column"], "")
    assert out.parse_error is not None and out.parse_error.hint.args == ["status"]


def test_garbage_is_unrecognized() -> None:
    out = parse("git", ["status", "--porcelain"], "this is not porcelain\n")
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"
    out = parse("git", ["status"], "fatal: something\n")
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"


def test_unmerged_paths_are_their_own_codes(tmp_path: Path) -> None:
    """A real conflict: both sides changed c.txt (UU); 'theirs' deleted d.txt that we changed (UD)."""
    git(tmp_path, "init", "-q", "-b", "main", "r")
    repo = tmp_path / "r"
    (repo / "c.txt").write_text("base\n")
    (repo / "d.txt").write_text("base\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "theirs")
    (repo / "c.txt").write_text("theirs\n")
    (repo / "d.txt").unlink()
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "c.txt").write_text("ours\n")
    (repo / "d.txt").write_text("ours\n")
    git(repo, "commit", "-q", "-am", "ours")
    proc = subprocess.run(["git", "merge", "theirs"], cwd=repo, capture_output=True, env=GIT_ENV)
    assert proc.returncode != 0  # the conflict happened
    want = {"c.txt": ("UU", None), "d.txt": ("UD", None)}
    for args in ((), ("--porcelain",), ("--porcelain", "-z")):
        assert _by_path(status(repo, *args)) == want
