"""``git branch -v``/``-vv``: a subject can never be an upstream (issue #25, class 4).

The repository has branches whose subjects imitate tracking blocks (``[fake: ahead 5]``,
``[origin/main]``, ``[origin/main: ahead 9]`` on a branch that tracks something else), a
branch tracking a local branch, one whose upstream is gone, a remote with its own refspec and
an upstream git must shorten to ``remotes/origin/main`` (a local branch named ``origin/main``
exists).  Every expected value is git's own: ``git for-each-ref --format='%(refname:short)
%(upstream:short) %(upstream:track)'``.  The run goes through the real engine, so the
upstreams come from the guard's reading of the configuration (``guard/git/upstream.py``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import parism
from parism.guard.git.upstream import facts, tracking
from parism.parsers.contract import RepoFacts
from tests.parsers.git.gitrepo import GIT_ENV, git
from tests.parsers.text.realrun import parse, parsed

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def commit(work: Path, subject: str) -> None:
    (work / "f.txt").write_text(subject + "\n")
    git(work, "add", "f.txt")
    git(work, "commit", "-q", "-m", subject)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("upstream")
    origin, work = root / "origin.git", root / "work"
    git(root, "init", "-q", "--bare", "-b", "main", str(origin))
    git(root, "init", "-q", "-b", "main", str(work))
    commit(work, "base")
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "-q", "-u", "origin", "main")
    commit(work, "[origin/main: behind 7] main's own subject")  # main: ahead 1 of origin/main
    git(work, "checkout", "-q", "-b", "fake", "main")  # no upstream, subject imitates one
    commit(work, "[fake: ahead 5] subject")
    git(work, "checkout", "-q", "-b", "imitate", "main")
    commit(work, "[origin/main] imitation")
    git(work, "checkout", "-q", "-b", "slash", "main")
    commit(work, "[origin/x: gone] looks gone")
    git(work, "checkout", "-q", "-b", "sneaky", "main")  # -v's form, on a branch without upstream
    commit(work, "[ahead 2] imitates -v")
    git(work, "checkout", "-q", "-b", "local", "main")  # tracks the local branch main
    git(work, "branch", "-q", "--set-upstream-to=main", "local")
    commit(work, "[main: ahead 3] on local")
    git(work, "checkout", "-q", "-b", "feat", "main")
    commit(work, "[origin/main: ahead 9] trick")
    git(work, "push", "-q", "-u", "origin", "feat")  # in sync with origin/feat
    git(work, "checkout", "-q", "-b", "doomed", "main")
    git(work, "push", "-q", "-u", "origin", "doomed")
    git(work, "push", "-q", "origin", "--delete", "doomed")  # upstream gone
    git(work, "remote", "add", "up", str(origin))
    git(work, "config", "--replace-all", "remote.up.fetch", "+refs/heads/*:refs/remotes/upstream-x/*")
    git(work, "fetch", "-q", "up")
    git(work, "checkout", "-q", "-b", "viaup", "main")
    git(work, "branch", "-q", "--set-upstream-to=upstream-x/main", "viaup")
    git(work, "branch", "-q", "origin/main", "main")  # makes refs/remotes/origin/main ambiguous
    git(work, "checkout", "-q", "-b", "amb", "main")
    git(work, "branch", "-q", "--set-upstream-to=refs/remotes/origin/main", "amb")
    git(work, "checkout", "-q", "main")
    return work


def truth(repo: Path) -> dict[str, tuple[str, str]]:
    """local branch → (upstream:short, upstream:track) as git's for-each-ref prints them."""
    out = subprocess.run(["git", "for-each-ref", "--format=%(refname:short)%00%(upstream:short)%00%(upstream:track)",
                          "refs/heads/"], cwd=repo, env=GIT_ENV, capture_output=True, check=True).stdout.decode()
    rows = {}
    for line in out.splitlines():
        name, up, track = line.split("\0")
        rows[name.removeprefix("heads/")] = (up, track)
    return rows


def expected_track(track: str) -> dict[str, object]:
    if track == "[gone]":
        return {"gone": True}
    m = re.fullmatch(r"\[(?:ahead (\d+))?(?:, )?(?:behind (\d+))?\]", track)
    if m is None:
        assert track == "", track
        return {"ahead": 0, "behind": 0}
    return {"ahead": int(m.group(1) or 0), "behind": int(m.group(2) or 0)}


def subjects(repo: Path) -> dict[str, str]:
    out = subprocess.run(["git", "for-each-ref", "--format=%(refname)%00%(contents:subject)", "refs/heads/"],
                         cwd=repo, env=GIT_ENV, capture_output=True, check=True).stdout.decode()
    return {r.split("\0")[0].removeprefix("refs/heads/"): r.split("\0")[1] for r in out.splitlines()}


@pytest.fixture(scope="module")
def engine(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> parism.Engine:
    cfg = tmp_path_factory.mktemp("cfg") / "parism.toml"
    cfg.write_text(f'[guard]\nallowed_paths = ["{repo.parent}"]\n')
    return parism.create_engine(str(cfg))


def rows_of(engine: parism.Engine, repo: Path, args: list[str]) -> dict[str, dict]:
    env = engine.run("git", args, cwd=str(repo), format="json")  # the rows as objects, raw beside them
    assert env.failure is None, env.failure
    return {b["name"]: b for b in env.stdout.parsed["branches"]}


def test_vv_reads_only_the_real_upstream(engine: parism.Engine, repo: Path) -> None:
    want, subj = truth(repo), subjects(repo)
    got = rows_of(engine, repo, ["branch", "-vv"])
    assert set(got) == set(want)
    for name, (up, track) in want.items():
        row = got[name]
        assert row.get("upstream") == (up or None), (name, row)
        assert row.get("message") == subj[name], (name, row)
        if up:
            for key, value in expected_track(track).items():
                assert row.get(key) == value, (name, key, row)
        else:
            assert "ahead" not in row and "behind" not in row and "gone" not in row, (name, row)
    # the cases the brief names: no upstream, and a subject imitating one
    assert want["fake"] == ("", "") and got["fake"]["message"] == "[fake: ahead 5] subject"
    assert want["amb"][0] == "remotes/origin/main"


def test_v_reads_a_block_only_on_a_tracking_branch(engine: parism.Engine, repo: Path) -> None:
    want, subj = truth(repo), subjects(repo)
    got = rows_of(engine, repo, ["branch", "-v"])
    for name, (up, track) in want.items():
        row = got[name]
        assert row.get("message") == subj[name], (name, row)
        if not up:
            assert "ahead" not in row and "gone" not in row, (name, row)
        else:
            for key, value in expected_track(track).items():
                assert row.get(key) == value, (name, key, row)


def test_remote_rows_never_take_a_block(engine: parism.Engine, repo: Path) -> None:
    got = rows_of(engine, repo, ["branch", "-a", "-vv"])
    assert got["remotes/origin/feat"]["message"] == "[origin/main: ahead 9] trick"
    assert "upstream" not in got["remotes/origin/feat"]
    got = rows_of(engine, repo, ["branch", "-r", "-vv"])
    assert got["origin/feat"]["message"] == "[origin/main: ahead 9] trick"


def test_facts_from_the_configuration_match_git(repo: Path) -> None:
    """The configuration reading alone (what the guard hands the parser) names the same full
    upstream refs as git's ``%(upstream)``."""
    out = subprocess.run(["git", "config", "--list", "--show-origin", "--show-scope", "-z"], cwd=repo,
                         env=GIT_ENV, capture_output=True, check=True).stdout
    parts = out.split(b"\0")
    entries = []
    for i in range(0, len(parts) - 2, 3):
        key, nl, value = parts[i + 2].decode().partition("\n")
        entries.append((parts[i].decode(), parts[i + 1].decode(), key, value if nl else None))
    got = facts(entries)
    full = subprocess.run(["git", "for-each-ref", "--format=%(refname:lstrip=2)%00%(upstream)", "refs/heads/"],
                          cwd=repo, env=GIT_ENV, capture_output=True, check=True).stdout.decode()
    want = {n: u for n, u in (line.split("\0") for line in full.splitlines()) if u}
    assert dict(got.upstreams) == want and not got.undecided


def test_undecided_branch_with_a_block_is_refused() -> None:
    text = "* main 1234567 [up/main: ahead 1] x\n"
    out = parse("git", ["branch", "-vv"], text, repo=RepoFacts(undecided=frozenset({"main"})))
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    # without a block there is nothing to tell apart
    assert parsed("git", ["branch", "-vv"], "* main 1234567 x\n",
                  repo=RepoFacts(undecided=frozenset({"main"})))["branches"][0]["message"] == "x"


def test_a_tracking_branch_without_its_block_is_unrecognized() -> None:
    facts_ = RepoFacts(upstreams={"main": "refs/remotes/origin/main"})
    out = parse("git", ["branch", "-vv"], "* main 1234567 [other/main] x\n", repo=facts_)
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"


def test_refspec_mapping() -> None:
    assert tracking("refs/heads/a", ["+refs/heads/*:refs/remotes/o/*"]) == "refs/remotes/o/a"
    assert tracking("refs/heads/a", ["^refs/heads/a", "+refs/heads/*:refs/remotes/o/*"]) is None
    assert tracking("refs/heads/a", ["refs/heads/a:refs/x/y"]) == "refs/x/y"
    assert tracking("refs/heads/a", ["refs/heads/b:refs/x/y", "refs/tags/*:refs/tags/*"]) is None
    assert tracking("refs/heads/a", ["refs/heads/a"]) is None  # no destination: not tracked
