"""git diff/show and the small subcommands against the real repository of ``gitrepo.build``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers.git.gitrepo import build, git
from tests.parsers.text.realrun import parse, parsed


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("diff"))


def diff(work: Path, *args: str) -> dict[str, dict]:
    res = parsed("git", ["diff", *args], git(work, "diff", *args))
    assert "raw" not in res  # bug 34: the diff is not repeated
    return {f["path"]: f for f in res["files"]}


def test_bug_34_staged_diff_paths_status_and_hunks(work: Path) -> None:
    files = diff(work, "--cached")
    assert set(files) == {"a.txt", "ünï.txt", "renamed.txt", "new name.txt", "added.txt"}
    assert files["added.txt"]["status"] == "added" and "old_path" not in files["added.txt"]
    assert files["renamed.txt"]["status"] == "renamed"
    assert files["renamed.txt"]["old_path"] == "arrow -> name.txt"
    assert files["new name.txt"]["old_path"] == "name with space.txt"
    assert files["ünï.txt"]["quoted"] is True
    # a.txt: "one" became "ONE" in the index (one line removed, one added)
    hunk = files["a.txt"]["hunks"][0]
    assert (hunk["start_a"], hunk["count_a"], hunk["start_b"], hunk["count_b"]) == (1, 4, 1, 4)
    assert hunk["lines"] == ["-one", "+ONE", " two", " three", " four"]
    assert (files["a.txt"]["insertions"], files["a.txt"]["deletions"]) == (1, 1)


def test_worktree_diff_deleted_and_binary(work: Path) -> None:
    files = diff(work)
    assert files["gone.txt"]["status"] == "deleted" and files["gone.txt"]["deletions"] == 1
    assert files["bin.dat"]["binary"] is True and "hunks" not in files["bin.dat"]
    assert files["a.txt"]["hunks"][0]["lines"][-1] == "+five"


def test_name_status_and_numstat(work: Path) -> None:
    res = parsed("git", ["diff", "--cached", "--name-status"], git(work, "diff", "--cached", "--name-status"))
    by = {f["path"]: f for f in res["files"]}
    assert by["renamed.txt"]["status"] == "renamed" and by["renamed.txt"]["similarity"] == 100
    assert by["added.txt"]["status"] == "added"
    num = {f["path"]: f for f in parsed("git", ["diff", "--numstat"], git(work, "diff", "--numstat"))["files"]}
    assert num["bin.dat"]["binary"] is True and num["gone.txt"]["deletions"] == 1


def test_stat_forms(work: Path) -> None:
    res = parsed("git", ["diff", "--cached", "--stat"], git(work, "diff", "--cached", "--stat"))
    assert res["files"] == [] and res["stats"]["files_changed"] == 5
    by = {f["path"]: f for f in res["stats"]["files"]}
    assert by["a.txt"]["changes"] == 2  # one line removed, one added
    out = parse("git", ["diff", "--stat=80"], " a | 1 +\n 1 file changed, 1 insertion(+)\n")
    assert out.parse_error is None and out.parsed["stats"]["files"] == [{"path": "a", "changes": 1}]
    # a count (the third part) cuts the list with a "..." line: not read
    out = parse("git", ["diff", "--stat=80,20,1"], " a | 1 +\n ...\n 2 files changed, 2 insertions(+)\n")
    assert out.parse_error is not None and out.parse_error.hint.args == ["diff", "--numstat"]


def test_log_patch_and_show_stat(work: Path) -> None:
    commits = parsed("git", ["log", "-p", "-n", "2"], git(work, "log", "-p", "-n", "2"))["commits"]
    local = [c for c in commits if c["message"] == "local side"][0]
    assert [f["path"] for f in local["files"]] == ["a.txt"]
    assert local["files"][0]["hunks"][0]["lines"][-1] == "+four"
    show = parsed("git", ["show", "--stat", "HEAD"], git(work, "show", "--stat", "HEAD"))
    assert show["files"] == [] and show["commit"]["stats"]["files"] == [{"path": "a.txt", "changes": 1}]
    out = parse("git", ["log", "-p", "--oneline"], "")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"


def test_content_that_looks_like_a_header_stays_in_the_hunk(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "r")
    repo = tmp_path / "r"
    (repo / "x.txt").write_text("a\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "x")
    (repo / "x.txt").write_text("a\n-- a\n++ b\n")  # printed as "+-- a" and "+++ b"
    files = diff(repo)
    assert files["x.txt"]["hunks"][0]["lines"] == [" a", "+-- a", "+++ b"]


def test_show_commit_and_diff(work: Path) -> None:
    res = parsed("git", ["show", "HEAD"], git(work, "show", "HEAD"))
    assert res["commit"]["message"] == "local side"
    assert [f["path"] for f in res["files"]] == ["a.txt"]


def test_small_subcommands(work: Path) -> None:
    top = parsed("git", ["rev-parse", "--show-toplevel"], git(work, "rev-parse", "--show-toplevel"))
    assert top == {"values": [str(work)]}
    files = parsed("git", ["ls-files", "-z"], git(work, "ls-files", "-z"))["files"]
    assert "ünï.txt" in files and "colon:file.txt" in files
    quoted = parsed("git", ["ls-files"], git(work, "ls-files"))
    assert quoted["quoted"] is True and set(quoted["files"]) == set(files)
    remotes = parsed("git", ["remote", "-v"], git(work, "remote", "-v"))["remotes"]
    origin = str(work.parent / "origin.git")
    assert remotes == [{"name": "origin", "fetch": origin, "push": origin}]
    tags = parsed("git", ["tag", "-n"], git(work, "tag", "-n"))["tags"]
    assert tags == [{"name": "v1.0", "message": "first release"}]
    d = parsed("git", ["describe", "--tags"], git(work, "describe", "--tags"))
    # main is 3 commits past v1.0 (feature commit, merge, local side)
    assert (d["tag"], d["distance"]) == ("v1.0", 3)
    assert git(work, "rev-parse", "HEAD").startswith(d["hash"])
    sl = parsed("git", ["shortlog", "-sne", "HEAD"], git(work, "shortlog", "-sne", "HEAD"))
    assert sl == {"authors": [{"count": 4, "name": "Ann Author", "email": "ann@example.com"}]}


def test_shortlog_without_summary_hints() -> None:
    out = parse("git", ["shortlog"], "")
    assert out.parse_error is not None and out.parse_error.hint.args == ["shortlog", "-s", "HEAD"]


def test_bug_34_paths_containing_space_b_slash(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "r")
    repo = tmp_path / "r"
    (repo / "x b").mkdir()
    (repo / "x b" / "y.txt").write_text("1\n")
    (repo / "x b" / "bin.dat").write_bytes(b"\0")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "x")
    (repo / "x b" / "y.txt").write_text("2\n")
    (repo / "x b" / "bin.dat").write_bytes(b"\0\0")
    files = diff(repo)
    assert set(files) == {"x b/y.txt", "x b/bin.dat"}  # a naive split at " b/" gives "x"
    assert files["x b/bin.dat"]["binary"] is True and "old_path" not in files["x b/bin.dat"]


def test_no_prefix_and_mnemonic_prefix_configs(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "r")
    repo = tmp_path / "r"
    (repo / "a").mkdir()
    (repo / "a" / "x.txt").write_text("1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "x")
    (repo / "a" / "x.txt").write_text("2\n")
    assert set(diff(repo)) == {"a/x.txt"}
    git(repo, "config", "diff.noprefix", "true")  # prints "diff --git a/x.txt a/x.txt"
    assert set(diff(repo)) == {"a/x.txt"}
    git(repo, "config", "diff.noprefix", "false")
    git(repo, "config", "diff.mnemonicPrefix", "true")  # prints "diff --git i/a/x.txt w/a/x.txt"
    assert set(diff(repo)) == {"a/x.txt"}


def test_show_annotated_tag_and_blob(work: Path) -> None:
    res = parsed("git", ["show", "v1.0"], git(work, "show", "v1.0"))
    assert res["tag"] == "v1.0" and res["commit"]["message"].startswith("initial commit")
    assert len(res["files"]) == 7  # the initial commit added seven files (gitrepo.build)
    out = parse("git", ["show", "HEAD:a.txt"], "ONE\n")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
