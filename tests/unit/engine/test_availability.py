"""What a missing binary is answered with (issue 27): a PATH entry the sandbox does not mount,
and install hints taken from a maintained table, never the command's name guessed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from parism.availability import PACKAGES, install_hint
from parism.run.executor import resolve_binary
from tests.unit.engine.conftest import MakeEngine

APT = ("apt", "apt-get install -y")


def test_ping_installs_debians_iputils_ping_and_an_unknown_command_gets_no_guess() -> None:
    hint = install_hint("ping", APT)
    assert hint is not None and hint.package == "iputils-ping" and hint.command == "apt-get install -y iputils-ping"
    assert install_hint("ls", APT).package == "coreutils"  # type: ignore[union-attr]
    assert install_hint("no-such-tool-xyz", APT) is None  # was "apt-get install -y no-such-tool-xyz"
    assert install_hint("tree", ("winget", "winget install")) is None


@pytest.mark.skipif(shutil.which("dpkg") is None, reason="the apt names are checked against dpkg's own index")
def test_the_apt_names_of_installed_commands_are_dpkgs() -> None:
    """For every command in the table that is installed here, ``dpkg -S`` (the distribution's
    index) names the package the table gives for apt, or the table's package is the index's
    transitional package for it (``dnsutils`` → ``bind9-dnsutils`` on Debian 12)."""
    checked = 0
    for cmd, table in PACKAGES.items():
        if "apt" not in table or shutil.which(cmd) is None:
            continue
        path = shutil.which(cmd)
        assert path is not None
        owners = set()
        for candidate in {path, os.path.realpath(path), "/bin/" + cmd, "/usr/bin/" + cmd, "/sbin/" + cmd}:
            done = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
            if done.returncode == 0:
                owners |= {line.split(":")[0] for line in done.stdout.splitlines()}
        if not owners:
            continue  # not installed from a package (a copy, a symlink elsewhere)
        checked += 1
        named = table["apt"]
        if named not in owners:  # a transitional package of the index that installs the owner
            deps = subprocess.run(["apt-cache", "depends", named], capture_output=True, text=True).stdout
            assert any(f"Depends: {owner}" in deps for owner in owners), (cmd, named, owners, deps)
    assert checked >= 5


def test_a_path_entry_the_sandbox_does_not_mount(make_engine: MakeEngine, tmp_path: Path,
                                                 tmp_path_factory: pytest.TempPathFactory,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``/…/hidden`` first on PATH holds a copy of ``ls`` and a tool found nowhere else; the
    sandbox does not mount it. ``ls`` runs from /usr/bin (the copy the sandbox shows), and the
    other is ``spawn_failed`` saying where it is, with no package to install (it was
    ``apt-get install -y ls``)."""
    hidden = tmp_path_factory.mktemp("hidden-bin")  # under /tmp, outside the allowed path
    hidden.chmod(0o755)
    real_ls = shutil.which("ls", path="/usr/bin:/bin")
    assert real_ls is not None
    shutil.copy(real_ls, hidden / "ls")
    shutil.copy(real_ls, hidden / "onlyhere")
    # control: the copies run on the host, and the old lookup picks the hidden one first
    assert subprocess.run([str(hidden / "onlyhere"), "/"], capture_output=True).returncode == 0
    monkeypatch.setenv("PATH", f"{hidden}:/usr/bin:/bin")
    assert resolve_binary("ls", f"{hidden}:/usr/bin:/bin") == str(hidden / "ls")
    engine = make_engine(guard={"allowed_commands": ["ls", "onlyhere"],
                                "command_policies": {"onlyhere": {"positionals": "any"}}},
                         sandbox={"mode": "auto"})
    if not engine.sandbox.status()["active"]:
        pytest.skip("needs the sandbox: without it every host path is visible")
    (tmp_path / "a-file").write_text("")
    env = engine.run("ls", [], cwd=str(tmp_path))
    assert env.ok is True, env.failure
    assert "a-file" in env.stdout.raw or env.stdout.parsed
    env = engine.run("onlyhere", [], cwd=str(tmp_path))
    f = env.failure
    assert f is not None and f.reason == "spawn_failed" and f.errorCode == "ENOENT"
    assert str(hidden / "onlyhere") in f.message and "does not mount" in f.message
    assert f.availability is not None and f.availability.status == "present" and f.availability.install is None
    engine.close()
