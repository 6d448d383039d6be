"""Commands that need host state get it read-only, or are refused — never an empty success.

apt reads dpkg's status, the downloaded lists and apt's cache; the readonly profile binds
them. Ground truth is ``dpkg-query`` on the host, not Parism's output. A required bind the
sandbox cannot give (missing, unreadable by the run-as user) refuses the call with a reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

import parism
from parism.wire.envelope import Failure
from parism.run.sandbox import SandboxRequest
from tests.security.sandbox.helpers import make_spec, sandbox_factory

__all__ = ["sandbox_factory"]

needs_apt = pytest.mark.skipif(shutil.which("apt") is None or shutil.which("dpkg-query") is None,
                               reason="apt/dpkg-query not installed")


@pytest.fixture(scope="module")
def apt_engine() -> Iterator[parism.Engine]:
    root = Path(tempfile.mkdtemp(prefix="parism-apt-", dir="/tmp"))
    root.chmod(0o755)
    cfg = root / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"allowed_paths": [str(root)], "max_items": 100000}, "sandbox": {"mode": "required"}}))
    engine = parism.create_engine(str(cfg))
    engine.workspace = str(root)  # type: ignore[attr-defined]
    yield engine
    engine.close()
    shutil.rmtree(root, ignore_errors=True)


def installed_from_dpkg() -> set[tuple[str, str, str]]:
    out = subprocess.run(["dpkg-query", "-W", "-f", "${db:Status-Status}\t${Package}\t${Version}\t${Architecture}\n"],
                         capture_output=True, text=True, check=True).stdout
    return {tuple(line.split("\t")[1:]) for line in out.splitlines() if line.startswith("installed\t")}  # type: ignore[misc]


def rows(parsed: dict, key: str) -> list[dict]:
    value = parsed[key]
    if isinstance(value, dict) and "schema" in value:
        return [dict(zip(value["schema"], row)) for row in value["rows"]]
    return value


@needs_apt
def test_apt_list_installed_is_dpkg_s_truth_inside_the_sandbox(apt_engine) -> None:
    env = apt_engine.run("apt", ["list", "--installed"], cwd=apt_engine.workspace, contract_version="next")
    assert env.ok, env.failure
    assert env.review.sandbox.level == "full"
    got = {(p["name"], p["version"], p["arch"]) for p in rows(env.stdout.parsed, "packages")}
    truth = installed_from_dpkg()
    assert truth and got == truth


@needs_apt
@pytest.mark.parametrize("args", [["search", "bubblewrap"], ["policy", "bubblewrap"], ["show", "bubblewrap"]])
def test_apt_search_policy_show_work_inside_the_sandbox(apt_engine, args: list[str]) -> None:
    version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "bubblewrap"], capture_output=True,
                             text=True, check=True).stdout
    env = apt_engine.run("apt", args, cwd=apt_engine.workspace, format="json")  # raw kept beside the parse
    assert env.ok, env.failure
    packages = rows(env.stdout.parsed, "packages")
    assert any("bubblewrap" in (p.get("name"), p.get("Package")) for p in packages), env.stdout.parsed
    assert version in env.stdout.raw  # the installed version, read from dpkg's own database


def _requiring(path: str) -> SandboxRequest:
    return SandboxRequest(requires=(path,))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a directory the run-as user cannot read")
def test_a_required_bind_the_run_as_user_cannot_read_refuses_the_call(sandbox_factory, tmp_path: Path) -> None:
    ws = Path(tempfile.mkdtemp(prefix="parism-req-", dir="/tmp"))
    try:
        ws.chmod(0o755)  # a root server runs commands here as nobody
        secret = tmp_path / "db"
        secret.mkdir(mode=0o700)
        sb = sandbox_factory([str(ws)], server_cwd=str(ws))
        got = sb.launcher(_requiring(str(secret)), make_spec(["/usr/bin/apt", "list"], str(ws)))
        assert isinstance(got, Failure)
        assert (got.kind, got.reason) == ("exec", "sandbox_unsupported")
        assert str(secret) in got.message and "not readable by uid 65534" in got.message
        assert got.hint
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def test_a_missing_required_bind_refuses_the_call(sandbox_factory, tmp_path: Path) -> None:
    sb = sandbox_factory([str(tmp_path)], server_cwd=str(tmp_path))
    got = sb.launcher(_requiring("/nonexistent/parism-db"), make_spec(["/usr/bin/apt", "list"], str(tmp_path)))
    assert isinstance(got, Failure) and got.reason == "sandbox_unsupported"
    assert "/nonexistent/parism-db does not exist" in got.message
