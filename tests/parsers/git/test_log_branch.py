"""git log and git branch against the real repository of ``gitrepo.build``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers.git.gitrepo import build, git
from tests.parsers.text.realrun import parse, parsed


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("log"))


def log(work: Path, *args: str) -> list[dict]:
    return parsed("git", ["log", *args], git(work, "log", *args))["commits"]


def test_bug_32_default_format_is_read(work: Path) -> None:
    commits = log(work)
    hashes = git(work, "rev-list", "HEAD").split()
    assert [c["hash"] for c in commits] == hashes
    subjects = git(work, "log", "--format=%s").splitlines()
    assert [c["message"].split("\n")[0] for c in commits] == subjects
    assert sorted(subjects) == sorted(["local side", "Merge branch 'feature'", "[WIP] feature work",
                                       "initial commit"])
    first = [c for c in commits if c["message"].startswith("initial")][0]
    assert first["message"] == "initial commit\n\nBody line one.\n\nBody paragraph two."
    assert (first["author"], first["author_email"]) == ("Ann Author", "ann@example.com")
    assert first["date"] == "Tue Mar 5 10:20:30 2024 +0100"
    assert first["date_iso"] == "2024-03-05T10:20:30+01:00"
    merge = [c for c in commits if c["message"].startswith("Merge")][0]
    assert merge["merge"] == git(work, "log", "-1", "--format=%p", merge["hash"]).split()


def test_fuller_has_the_committer(work: Path) -> None:
    c = log(work, "--pretty=fuller", "-n", "1")[0]
    assert (c["committer"], c["committer_email"], c["commit_date_iso"]) == (
        "Carl Committer", "carl@example.com", "2024-03-05T10:20:30+01:00")


def test_decorations_only_with_decorate(work: Path) -> None:
    deco = log(work, "--oneline", "--decorate")
    assert deco[0]["refs"] == ["HEAD -> main"] and deco[0]["message"] == "local side"
    assert "refs" not in log(work, "--oneline")[0]
    # "[WIP] feature work" is on the feature branch tip: ref list + subject both right
    wip = [c for c in deco if c["message"] == "[WIP] feature work"][0]
    assert wip["refs"] == ["feature"]
    tagged = [c for c in log(work, "--decorate") if c["message"].startswith("initial")][0]
    assert tagged["refs"] == ["tag: v1.0"]


def test_pretty_oneline_full_hashes_and_stat(work: Path) -> None:
    commits = log(work, "--pretty=oneline", "--stat", "-n", "1")
    c = commits[0]
    assert len(c["hash"]) == 40 and c["message"] == "local side"
    assert c["stats"] == {"files_changed": 1, "insertions": 1, "deletions": 0,
                          "files": [{"path": "a.txt", "changes": 1}]}
    num = log(work, "--numstat", "-n", "1")[0]["stats"]["files"]
    assert num == [{"path": "a.txt", "insertions": 1, "deletions": 0}]


def test_hint_format_is_parsed(work: Path) -> None:
    fmt = "--format=%H%x09%an%x09%aI%x09%s"
    commits = log(work, fmt, "-n", "2")
    assert commits[0]["author"] == "Ann Author" and commits[0]["date"] == "2024-03-05T10:20:30+01:00"
    assert [c["message"] for c in commits] == git(work, "log", "-n", "2", "--format=%s").splitlines()
    assert log(work, "--format=%h %s", "-n", "1")[0]["message"] == "local side"


def test_unsupported_format_hints_the_tab_form(work: Path) -> None:
    out = parse("git", ["-C", "x", "log", "--graph", "-n", "3"], "* commit abc\n")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint.args == ["-C", "x", "log", "--format=%H%x09%an%x09%aI%x09%s", "-n", "3"]
    out = parse("git", ["log", "--format=%an %s"], "Ann x\n")
    assert out.parse_error is not None and out.parse_error.hint is not None


def test_bug_33_branch_plain_verbose_and_wip_message(work: Path, tmp_path: Path) -> None:
    plain = parsed("git", ["branch"], git(work, "branch"))["branches"]
    assert plain == [{"name": "feature", "current": False}, {"name": "main", "current": True}]
    vv = {b["name"]: b for b in parsed("git", ["branch", "-vv"], git(work, "branch", "-vv"))["branches"]}
    assert (vv["main"]["upstream"], vv["main"]["ahead"], vv["main"]["behind"]) == ("origin/main", 1, 1)
    assert vv["feature"]["message"] == "[WIP] feature work" and "upstream" not in vv["feature"]
    v = {b["name"]: b for b in parsed("git", ["branch", "-v"], git(work, "branch", "-v"))["branches"]}
    assert (v["main"]["ahead"], v["main"]["behind"], v["main"]["message"]) == (1, 1, "local side")
    assert v["feature"]["hash"] == git(work, "rev-parse", "--short", "feature").strip()
    git(tmp_path, "clone", "-q", str(work), "cl")
    git(tmp_path / "cl", "checkout", "-q", "v1.0")
    rows = parsed("git", ["branch", "-v"], git(tmp_path / "cl", "branch", "-v"))["branches"]
    assert rows[0]["name"] == "(HEAD detached at v1.0)" and rows[0]["detached"] is True
    assert rows[0]["current"] is True and rows[0]["message"] == "initial commit"
    remote = parsed("git", ["branch", "-a"], git(tmp_path / "cl", "branch", "-a"))["branches"]
    assert {"name": "remotes/origin/HEAD", "current": False, "points_to": "origin/main"} in remote


def test_branch_garbage_is_unrecognized() -> None:
    out = parse("git", ["branch", "-v"], "fatal: not a git repository\n")
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"


def test_notes_section_is_kept_apart(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "r")
    repo = tmp_path / "r"
    git(repo, "commit", "-q", "--allow-empty", "-m", "subject only")
    git(repo, "notes", "add", "-m", "reviewed by Bob", "HEAD")
    (c,) = log(repo)
    assert (c["message"], c["notes"]) == ("subject only", "reviewed by Bob")


def test_graph_with_one_line_per_commit(work: Path) -> None:
    for args in (["--oneline", "--graph", "--all"], ["--graph", "--format=%h %s"]):
        got = log(work, *args)
        # --graph implies --topo-order
        want = git(work, "log", *[a for a in args if a != "--graph"], "--topo-order",
                   "--format=%h %s").splitlines()
        assert [f"{c['hash']} {c['message']}" for c in got] == want
    out = parse("git", ["log", "--graph"], "* commit abc\n")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"


def test_show_current(work: Path) -> None:
    got = parsed("git", ["branch", "--show-current"], git(work, "branch", "--show-current"))
    assert got == {"branches": [{"name": "main", "current": True}]}


def test_log_name_status_and_name_only(work: Path) -> None:
    commits = log(work, "--name-status", "-n", "1")
    assert commits[0]["files"] == [{"path": "a.txt", "status": "modified"}]
    first = [c for c in log(work, "--name-only") if c["message"].startswith("initial")][0]
    assert sorted(f["path"] for f in first["files"]) == sorted(
        ["a.txt", "name with space.txt", "ünï.txt", "arrow -> name.txt", "colon:file.txt", "gone.txt", "bin.dat"])
