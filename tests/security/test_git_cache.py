"""A kept reading of git's configuration (parism/guard/git/cache.py) never disarms less than a
fresh one: a filter defined after the reading was kept — in place, size and mtime unchanged — is
still switched off.  Armed trap: plain git runs the same filter after the change."""

from __future__ import annotations

import os
import time
from pathlib import Path


from parism.guard.git.cache import RepoCache
from tests.security.sandbox.gitrepos import Trap, dirty, fired, git, make_engine, make_repo, own, workspace  # noqa: F401

AHEAD_NS = 10_000_000_000  # the repository was just written: pretend its files have settled


def test_a_filter_written_in_place_after_the_reading_was_kept_never_runs(
        workspace: tuple[Path, Path, Trap]) -> None:  # noqa: F811
    ws, markers, trap = workspace
    repo = make_repo(ws / "repo", "data.txt filter=evil\n")
    stanza = f'[filter "evil"]\n\tclean = {trap("kept")}\n'
    pad = "#" + "x" * (len(stanza) - 2) + "\n"
    config = repo / ".git/config"
    with config.open("a") as fh:
        fh.write(pad)
    dirty(repo)
    own(ws)
    engine = make_engine(ws)
    cache = engine._guard_setup.git_repos = RepoCache(clock=lambda: time.time_ns() + AHEAD_NS)
    for _ in range(2):
        env = engine.run("git", ["status"], cwd=str(repo))
        assert env.ok, env.failure
    assert cache.hits >= 1, "the reading was not kept: the test would prove nothing"

    time.sleep(0.03)  # a later timestamp tick than the config's last write
    st = config.stat()
    with config.open("r+") as fh:
        fh.write(config.read_text().replace(pad, stanza))
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (config.stat().st_size, config.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)

    misses = cache.misses
    env = engine.run("git", ["status"], cwd=str(repo))
    text = f"{env.stdout.raw if env.stdout else ''}{env.stderr.raw if env.stderr else ''}"
    assert fired(markers) == [] and "TRAPFIRED" not in text, text[-400:]
    assert env.ok, env.failure
    assert cache.misses == misses + 1  # git was asked again

    git(repo, "status", check_rc=False)  # control: the trap is armed
    assert fired(markers) == ["kept"]
