"""The sanitised config copy (``parism/guard/git/configcopy.py``) read back by git itself."""

from __future__ import annotations

import shutil
import subprocess
import tempfile

import pytest
from hypothesis import given, settings, strategies as st

from parism.guard.git.configcopy import CopyProblem, kept, render

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin", "LC_ALL": "C"}
WORD = st.from_regex(r"[a-z][a-z0-9-]{0,6}", fullmatch=True)
# subsections and values: every character git keeps (no NUL; no newline in a subsection)
SUB = st.text(st.characters(blacklist_characters="\0\n", blacklist_categories=("Cs",)), max_size=12)
VALUE = st.one_of(st.none(), st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)),
                                     max_size=24))
KEY = st.one_of(st.tuples(WORD, WORD).map(".".join),
                st.tuples(WORD, SUB, WORD).map(lambda t: f"{t[0]}.{t[1]}.{t[2]}"))


def read_back(data: bytes) -> list[tuple[str, str | None]]:
    """What git reads from ``data`` as a config file (``--list -z``: a bare key has no newline)."""
    with tempfile.NamedTemporaryFile(suffix=".cfg") as fh:
        fh.write(data)
        fh.flush()
        out = subprocess.run(["git", "config", "--file", fh.name, "--list", "-z"], env=ENV,
                             capture_output=True, check=True).stdout
    entries = []
    for item in out.split(b"\0")[:-1]:
        key, nl, value = item.decode("utf-8", "surrogateescape").partition("\n")
        entries.append((key, value if nl else None))
    return entries


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(KEY, VALUE), max_size=8))
def test_git_reads_the_copy_as_the_entries_it_was_written_from(entries: list[tuple[str, str | None]]) -> None:
    assert read_back(render(entries)) == entries


def test_a_value_cannot_smuggle_a_section_or_an_include() -> None:
    entries = [("user.name", '"\n[include]\n\tpath = /tmp/x\n[filter "a"]\n\tclean = touch /tmp/y'),
               ("user.email", "x \\\n[core]\n\tfsmonitor = /tmp/z")]
    assert read_back(render(entries)) == entries


def test_keys_that_name_programs_or_includes_are_dropped() -> None:
    for key in ("include.path", "includeIf.gitdir:/x/.path", "filter.e\\vil.clean", "filter.x.required",
                "diff.tc.textconv", "diff.x.command", "merge.m.driver", "alias.st", "pager.log",
                "core.fsmonitor", "core.sshCommand", "core.pager", "core.hooksPath", "gpg.program",
                "credential.https://h.helper", "remote.o.uploadpack", "uploadpack.packObjectsHook"):
        assert not kept(key), key
    for key in ("core.bare", "remote.origin.url", "branch.main.merge", "user.name", "diff.tc.binary",
                "extensions.worktreeconfig", "core.worktree"):
        assert kept(key), key


def test_a_key_this_writer_cannot_spell_is_a_problem_not_a_guess() -> None:
    with pytest.raises(CopyProblem):
        render([("bad key.x", "v")])
    with pytest.raises(CopyProblem):
        render([("section.sub\nline.name", "v")])


def test_an_empty_copy_is_an_empty_file() -> None:
    assert render([]) == b""
