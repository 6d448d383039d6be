"""``parism selftest`` (issue 28): the promises checked on this host through the real pipeline.

As root here and as uid 10001 (``scripts/test-nonroot``) every promise holds and every armed
control fires (the same attack without Parism succeeds); with ``sandbox.mode = "off"`` or a
widened policy the broken promises are named and the exit status is 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(180)

PROBES = {"sandbox", "write_outside", "read_secret", "proc_environ", "fork_limit", "outlive_call", "unshare_user",
          "git_filter", "loopback", "metadata"}


def selftest(tmp_path: Path, config: str | None, *extra: str) -> tuple[int, dict]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    args = [sys.executable, "-m", "parism", "selftest", "--json", *extra]
    if config is not None:
        path = tmp_path / "selftest.toml"
        path.write_text(config)
        args[4:4] = ["--config", str(path)]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=150,
                          env={"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                               "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path[1:]])})
    assert done.stdout.strip(), done.stderr
    return done.returncode, json.loads(done.stdout)


def rows(report: dict) -> dict[str, dict]:
    return {r["name"]: r for r in report["probes"]}


def test_every_promise_holds_here_and_every_control_fires(tmp_path: Path) -> None:
    code, report = selftest(tmp_path, None)
    by = rows(report)
    assert set(by) == PROBES, report
    broken = {n: r["detail"] for n, r in by.items() if not r["held"]}
    assert broken == {} and report["ok"] is True and code == 0, broken
    unarmed = {n: r["control"] for n, r in by.items() if n != "sandbox" and r["control"] != "fired"}
    assert unarmed == {}, unarmed  # each attack does succeed without Parism, so each "held" means something
    assert report["sandbox"]["level"] == "full"
    assert report["sandbox"]["uid_rule"] == ("server_user" if os.geteuid() else "unprivileged_uid")


def test_sandbox_off_breaks_the_promises_and_exits_1(tmp_path: Path) -> None:
    code, report = selftest(tmp_path, '[sandbox]\nmode = "off"\n')
    by = rows(report)
    assert code == 1 and report["ok"] is False
    for name in ("sandbox", "write_outside", "read_secret", "proc_environ", "loopback", "metadata"):
        assert by[name]["held"] is False, (name, by[name])


def test_a_widened_policy_is_named_broken(tmp_path: Path) -> None:
    code, report = selftest(tmp_path, '[sandbox]\nnetwork_allow = ["127.0.0.1"]\n[sandbox.limits]\nnproc = 0\n')
    by = rows(report)
    assert code == 1 and report["ok"] is False
    assert by["loopback"]["held"] is False and "with network: reached" in by["loopback"]["detail"]
    assert by["fork_limit"]["held"] is False
    assert by["metadata"]["held"] is True and by["write_outside"]["held"] is True  # the rest still holds


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "parism", "selftest", "--bogus"], cwd=tmp_path,
                          capture_output=True, text=True, env={"PYTHONPATH": str(REPO), "HOME": str(tmp_path),
                                                               "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
