"""Stored real outputs (tests/fixtures/<os>/<cmd>/) of the text, env and git commands: each
``.json`` holds the argv and the hand-checked parse (see its ``source`` for how it was made)."""

from __future__ import annotations

import pytest

from tests.parsers.text.realrun import fixture_cases, parsed

COMMANDS = ("grep", "wc", "head", "tail", "cat", "env", "pwd", "which", "git")
CASES = [(os_name, cmd, *case) for os_name in ("linux", "macos", "freebsd", "windows")
         for cmd in COMMANDS for case in fixture_cases(os_name, cmd)]


def test_there_are_fixtures() -> None:
    assert len(CASES) >= 6


@pytest.mark.parametrize("os_name,cmd,name,raw,spec", CASES, ids=[f"{c[0]}/{c[1]}/{c[2]}" for c in CASES])
def test_fixture(os_name: str, cmd: str, name: str, raw: str, spec: dict) -> None:
    assert parsed(cmd, spec["argv"], raw, os_name) == spec["parsed"]
