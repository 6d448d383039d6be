"""The shipped profiles: package data, default command set (contract §8.2), limits (sandbox-notes §3.3)."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import pytest

from parism.config.profiles import load_profile

REPO = Path(__file__).resolve().parents[3]
DEFAULT_ALLOWED = set(
    "ls find stat du df tree ps ping curl netstat lsof ss dig grep wc head tail cat git kubectl docker gh "
    "helm env pwd which free uname id systemctl journalctl apt brew npm echo date hostname terraform cargo".split()
)
EXPLICIT_ONLY = {"kill", "dir", "tasklist", "ipconfig", "systeminfo", "pnpm", "yarn", "node", "npx"}


def test_package_data_is_the_repository_profiles() -> None:
    for name in ("readonly", "build"):
        shipped = resources.files("parism").joinpath("profiles", f"{name}.toml")
        assert shipped.is_file()
        assert os.path.realpath(str(shipped)) == str((REPO / "profiles" / f"{name}.toml").resolve())


@pytest.mark.parametrize("name", ["readonly", "build"])
def test_shipped_profiles_are_valid(name: str) -> None:
    profile, problems = load_profile(name)
    assert problems == []
    allowed = set(profile.guard["allowed_commands"])
    assert allowed == DEFAULT_ALLOWED
    assert not allowed & EXPLICIT_ONLY
    assert all(cmd in profile.commands for cmd in allowed), allowed - set(profile.commands)


def test_node_npx_yarn_have_policies_only_in_build() -> None:
    readonly, _ = load_profile("readonly")
    build, _ = load_profile("build")
    for cmd in ("node", "npx", "yarn"):
        assert cmd not in readonly.commands
        assert cmd in build.commands
    for cmd in ("kill", "pnpm", "dir", "tasklist", "ipconfig", "systeminfo"):
        assert cmd in readonly.commands


def test_build_extends_readonly_per_command() -> None:
    readonly, _ = load_profile("readonly")
    build, _ = load_profile("build")
    assert readonly.commands["cargo"].subcommands == ["--version", "-V"]
    assert "build" in (build.commands["cargo"].subcommands or [])
    assert "run" in (build.commands["npm"].subcommands or [])
    assert build.commands["npm"].flags == readonly.commands["npm"].flags  # inherited table
    assert "-L" not in readonly.commands["curl"].flags and build.commands["curl"].flags["-L"] == "bool"
    assert build.commands["curl"].flags["-s"] == "bool"  # merged, not replaced
    assert build.commands["git"] == readonly.commands["git"]


@pytest.mark.parametrize(("name", "expected"), [
    ("readonly", {"nproc": 64, "as_mb": 2048, "fsize_mb": 64, "nofile": 1024, "core": 0, "oom_score_adj": 1000}),
    ("build", {"nproc": 512, "as_mb": 0, "fsize_mb": 1024, "nofile": 4096, "core": 0, "oom_score_adj": 1000}),
])
def test_sandbox_limits_follow_the_sandbox_notes(name: str, expected: dict[str, int]) -> None:
    profile, _ = load_profile(name)
    limits = profile.sandbox["limits"]
    assert {k: limits[k] for k in expected} == expected
    assert profile.sandbox["tmp_size_mb"] == (64 if name == "readonly" else 512)
    assert profile.sandbox["writable_project"] is (name == "build")
