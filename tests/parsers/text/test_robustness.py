"""Arbitrary text and mutated real output never make a text/env/git parser raise: the outcome is
always a parsed value or a deliberate parse_error (never ``parser_exception``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parism.parsers import registry

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "jc"
FORMS: list[tuple[str, list[str]]] = [
    ("grep", ["-rn", "x", "."]), ("grep", ["-C1", "x", "a", "b"]), ("grep", ["-cZ", "x", "a", "b"]),
    ("grep", ["-lZ", "x", "a"]), ("grep", ["-nbZ", "-A1", "x", "a", "b"]),
    ("wc", []), ("wc", ["-l", "a", "b"]), ("head", ["a", "b"]), ("tail", ["-v", "a"]), ("cat", ["-n", "a"]),
    ("env", []), ("env", ["-0"]), ("pwd", []), ("which", ["-a", "sh"]),
    ("git", ["status"]), ("git", ["status", "--porcelain", "-z"]), ("git", ["status", "-sb"]),
    ("git", ["status", "--porcelain=v2", "-z"]), ("git", ["status", "--porcelain=v2"]),
    ("git", ["log"]), ("git", ["log", "--oneline", "--decorate"]), ("git", ["log", "--numstat"]),
    ("git", ["log", "--format=%H%x09%an%x09%aI%x09%s"]), ("git", ["log", "-p"]),
    ("git", ["log", "--oneline", "--graph"]), ("git", ["log", "--name-status"]), ("git", ["diff", "--stat"]), ("git", ["diff"]), ("git", ["diff", "--name-status"]),
    ("git", ["show"]), ("git", ["branch", "-vv"]), ("git", ["branch", "-a"]), ("git", ["ls-files", "-s"]),
    ("git", ["remote", "-v"]), ("git", ["tag", "-n"]), ("git", ["describe"]), ("git", ["shortlog", "-sn", "HEAD"]),
]
SAMPLE_LINES = [
    "commit 096fffdb79807d34b99985b38df0a3df7f6a86c7 (HEAD -> main)", "Merge: a b", "Author: A <a@b>",
    "Date:   Wed Apr 20 10:03:36 2022 -0400", "    message", " f | 2 +-", "diff --git a/x b/x",
    "--- a/x", "+++ b/x", "@@ -1,2 +1 @@", "-a", "+b", "\\ No newline", "Binary files a/x and b/x differ",
    "## main...origin/main [ahead 1, behind 2]", 'R  "a\\303" -> b', "R  a -> b", "?? x", "1 .M N... 1 1 1 a b c",
    "2 R. N... 1 1 1 a b R100 new\told", "u UU N... 1 1 1 1 a b c d", "* (HEAD detached at 1)", "  b abc [x: gone] m",
    "On branch main", "Changes to be committed:", "\tmodified:   x", "\trenamed:    a -> b", "Untracked files:",
    "./a:1:text", "a-2-ctx", "--", "grep: x: binary file matches", "==> a <==", "     1\tline", "X=1",
    "  3  4  5 f", "3\t1\tpath", "-\t-\tbin", "v1.0-3-gabc1234-dirty", "   12\tName <e@x>", "origin\tu (fetch)",
    "100644 " + "a" * 40 + " 0\tpath", "*   abc1234 Merge", "|\\  ", "| * def5678 x", "|/", "M\tpath",
    "R100\told\tnew", "Notes:", "tag v1.0", "", "\0", "\r", "é", "\x1b[31m",
]


def _check(cmd: str, args: list[str], text: str) -> None:
    out = registry.parse(cmd, args, text, "linux")
    assert out.parse_error is None or out.parse_error.reason != "parser_exception", out.parse_error


@pytest.mark.parametrize("cmd,args", FORMS, ids=[" ".join([c, *a]) for c, a in FORMS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=400))
def test_arbitrary_text(cmd: str, args: list[str], text: str) -> None:
    _check(cmd, args, text)


@pytest.mark.parametrize("cmd,args", FORMS, ids=[" ".join([c, *a]) for c, a in FORMS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.sampled_from(SAMPLE_LINES), max_size=30), sep=st.sampled_from(["\n", "\0", "\r\n"]))
def test_shuffled_real_lines(cmd: str, args: list[str], lines: list[str], sep: str) -> None:
    _check(cmd, args, sep.join(lines))


@pytest.mark.parametrize("key,cmd,args", [("git-log", "git", ["log", "--stat"]), ("env", "env", []),
                                          ("wc", "wc", ["a", "b"])])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_corpus_outputs(key: str, cmd: str, args: list[str], data: st.DataObject) -> None:
    outs = sorted((CORPUS / key).glob("*.out"))
    assert outs, f"corpus missing at {CORPUS / key}"
    raw = data.draw(st.sampled_from(outs)).read_text(errors="replace")[:4000]
    cut = data.draw(st.integers(0, len(raw)))
    junk = data.draw(st.text(max_size=20))
    _check(cmd, args, raw[:cut] + junk + raw[cut + len(junk):])
