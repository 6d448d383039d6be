"""The guard hands the sandbox a frozen record (run/sandbox/request.py), not its ``Decision``.

What the sandbox plans is what the guard checked: a caller (or a later stage) changing the
``Decision`` after the check changes nothing the sandbox reads, and the record itself cannot be
changed. Expected values are the profile's (readonly.toml: ps is ``host_procs``, curl has the
network) and the working directory's own ``os.stat``.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest

from parism.config import LoadedConfig, load_config
from parism.guard import check
from parism.run.executor import ExecSpec
from parism.run.sandbox import GitPins, Sandbox, SandboxRequest
from parism.run.sandbox.request import NO_GIT


def _load(tmp_path: Path, global_toml: str = "") -> LoadedConfig:
    home, proj = tmp_path / "home", tmp_path / "proj"
    (home / ".parism").mkdir(parents=True, exist_ok=True)
    proj.mkdir(exist_ok=True)
    (home / ".parism" / "config.toml").write_text(global_toml)
    cfg = load_config(cwd=str(proj), environ={"HOME": str(home)})
    assert cfg.errors == [], cfg.errors
    return cfg


def test_an_allowed_call_carries_its_frozen_record(tmp_path: Path) -> None:
    cfg = _load(tmp_path)
    d = check("ps", ["aux"], None, cfg)
    assert d.allowed, d.failure
    req = d.request
    assert isinstance(req, SandboxRequest)
    assert (req.cwd, req.namespace, req.network, req.git) == (os.path.realpath(cfg.cwd), "host_procs", False, NO_GIT)
    st = os.stat(req.cwd)
    assert req.opened_cwd() is not None and (req.opened_cwd().st_dev, req.opened_cwd().st_ino) == (st.st_dev, st.st_ino)
    with pytest.raises(dataclasses.FrozenInstanceError):
        req.network = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        req.opened[req.cwd] = os.stat("/")  # type: ignore[index]  # a read-only view
    assert check("curl", ["-s", "https://example.com/"], None, cfg).request.network is True


def test_a_refused_call_has_no_record(tmp_path: Path) -> None:
    d = check("rm", ["-rf", "/"], None, _load(tmp_path))
    assert not d.allowed and d.request is None


def test_changing_the_decision_after_the_check_changes_nothing_the_sandbox_plans(tmp_path: Path) -> None:
    """The old seam read the Decision live (``getattr(decision, "network")`` …): a stage that
    flipped a field after the check flipped the sandbox. The record was taken at the check."""
    cfg = _load(tmp_path)
    d = check("ls", ["-la"], None, cfg)
    assert d.allowed and d.request is not None
    d.network, d.namespace_class, d.binds = True, "host_net", ["/etc"]
    d.opened.clear()
    d.sandbox["limits"]["nproc"] = 1
    req = d.request
    assert (req.network, req.namespace, req.binds, req.network_reachable) == (False, "isolated", (), False)
    assert req.opened_cwd() is not None and req.limits["nproc"] == 64  # readonly.toml's [sandbox.limits]
    sb = Sandbox(cfg.settings.sandbox.model_copy(update={"mode": "off"}), [], cfg.cwd)
    assert sb.review(req) == {"level": "none", "namespace_class": "isolated", "network": True}  # unsandboxed: has the host's


def test_the_plan_reads_the_record_the_guard_froze(tmp_path: Path) -> None:
    """A plan (no sandbox started) from a record: its network, namespace, limits and git pins."""
    cfg = _load(tmp_path)
    req = SandboxRequest(cwd=os.path.realpath(cfg.cwd), network=False, namespace="host_mounts",
                         limits={"nproc": 7}, git=GitPins(sealed=(os.path.join(os.path.realpath(cfg.cwd), "sub"),)))
    sb = Sandbox(cfg.settings.sandbox, [], cfg.cwd, pool_size=0)
    if sb.probed().level == "none":
        pytest.skip(f"no sandbox here: {sb.probed().reason}")
    spec = ExecSpec(argv=["/usr/bin/true"], cwd=req.cwd, env={"PATH": "/usr/bin"}, timeout_s=5,
                    max_stdout=1024, max_stderr=1024)
    plan = sb.plan(req, spec)
    assert (plan.namespace, plan.network) == ("host_mounts", False)
    assert dict(plan.rlimits)["nproc"] == 7
    assert plan.sealed_dirs == req.git.sealed


def test_git_pins_travel_in_their_own_record(tmp_path: Path) -> None:
    """git status in a repository: the sanitised copy of the repository's config (the file
    git reads, by its real path) is in ``request.git.configs``; other commands have none."""
    cfg = _load(tmp_path)
    proj = Path(cfg.cwd)
    subprocess.run(["git", "init", "-q", str(proj)], check=True, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    d = check("git", ["status"], None, cfg)
    assert d.allowed, d.failure
    config = os.path.realpath(proj / ".git" / "config")
    assert config in [path for path, _ in d.request.git.configs]
    assert d.request.git.configs == tuple(d.git_configs)
    assert check("ls", [], None, cfg).request.git == NO_GIT
