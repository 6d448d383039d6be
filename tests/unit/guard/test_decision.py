"""What a ``Decision`` carries besides allowed/refused: sandbox class, network, binds, limits,
and how configuration (command_policies, restrictions, patterns, paths) changes the outcome."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from parism.config import LoadedConfig, load_config
from parism.guard import Setup, check


def _load(tmp_path: Path, global_toml: str = "", **env: str) -> LoadedConfig:
    home = tmp_path / "home"
    proj = tmp_path / "proj"
    (home / ".parism").mkdir(parents=True, exist_ok=True)
    proj.mkdir(exist_ok=True)
    (home / ".parism" / "config.toml").write_text(global_toml)
    cfg = load_config(cwd=str(proj), environ={"HOME": str(home), **env})
    assert cfg.errors == [], cfg.errors
    return cfg


@pytest.mark.parametrize(("cmd", "args", "namespace", "network"), [
    ("ps", ["aux"], "host_procs", False),
    ("df", ["-h"], "host_mounts", False),
    ("ss", ["-tln"], "host_net", False),
    ("netstat", ["-tln"], "host_net", False),
    ("curl", ["-s", "https://example.com/"], "isolated", True),
    ("ping", ["-c", "1", "127.0.0.1"], "isolated", True),
    ("docker", ["ps"], "isolated", True),
    ("ls", ["-la"], "isolated", False),
    ("git", ["status"], "isolated", False),
])
def test_sandbox_class_per_command(tmp_path: Path, cmd: str, args: list[str], namespace: str, network: bool) -> None:
    d = check(cmd, args, None, _load(tmp_path))
    assert d.allowed, d.failure
    assert (d.namespace_class, d.network) == (namespace, network)
    assert (d.sandbox["namespace"], d.sandbox["network"]) == (namespace, network)
    assert d.sandbox["mode"] == "auto" and d.sandbox["limits"]["nproc"] == 64
    assert d.profile == "readonly"


def test_a_kept_setup_gives_the_same_decisions_and_fresh_tables(tmp_path: Path) -> None:
    cfg = _load(tmp_path, (
        '[guard]\nallowed_commands = ["ls", "jq", "ps"]\n'
        '[guard.command_policies.jq]\npositionals = "data"\nflags = { "-r" = "bool" }\n'
        'sandbox = { limits = { as_mb = 0 } }\n'
    ))
    setup = Setup(cfg)
    for cmd, args in (("jq", ["-r", "."]), ("ps", ["aux"]), ("ls", ["-la"]), ("jq", ["-r", "."])):
        kept, fresh = check(cmd, args, None, cfg, setup), check(cmd, args, None, cfg)
        assert kept == fresh
        kept.sandbox["limits"]["as_mb"] = 1  # a caller changing its decision changes no other
        kept.sandbox["mode"] = "off"
        assert check(cmd, args, None, cfg, setup) == fresh
    other = _load(tmp_path / "other", "[sandbox]\nnetwork = false\n")
    curl = check("curl", ["-s", "https://example.com/"], None, other, setup)  # a Setup of another config
    assert curl.network is False and curl.sandbox["network"] is False


def test_sandbox_network_false_is_a_master_switch(tmp_path: Path) -> None:
    d = check("curl", ["-s", "https://example.com/"], None, _load(tmp_path, "[sandbox]\nnetwork = false\n"))
    assert d.allowed and d.network is False and d.sandbox["network"] is False


def test_binds_are_expanded(tmp_path: Path) -> None:
    d = check("kubectl", ["get", "pods"], None, _load(tmp_path))
    assert d.binds == [os.path.expanduser("~/.kube")]
    assert check("gh", ["pr", "list"], None, _load(tmp_path)).binds == [os.path.expanduser("~/.config/gh")]


def test_command_policy_from_config_replaces_the_profile_entry(tmp_path: Path) -> None:
    cfg = _load(tmp_path, (
        '[guard]\nallowed_commands = ["ls", "jq"]\n'
        '[guard.command_policies.jq]\npositionals = "data"\nflags = { "-r" = "bool" }\n'
        'sandbox = { limits = { as_mb = 0 } }\n'
        '[guard.command_policies.ls]\npositionals = "none"\nflags = { "-l" = "bool" }\n'
    ))
    jq = check("jq", ["-r", ".a | .b"], None, cfg)
    assert jq.allowed and jq.sandbox["limits"]["as_mb"] == 0 and jq.sandbox["limits"]["nproc"] == 64
    assert check("ls", ["-l"], None, cfg).allowed
    refused = check("ls", ["-la"], None, cfg)
    assert refused.failure is not None and refused.failure.reason == "arg_not_allowed"


def test_command_arg_restrictions_block_declared_flags(tmp_path: Path) -> None:
    cfg = _load(tmp_path, '[guard.command_arg_restrictions.grep]\nblocked_flags = ["-r"]\n')
    d = check("grep", ["-rn", "x", "."], None, cfg)
    assert d.failure is not None and d.failure.reason == "arg_not_allowed"
    assert "command_arg_restrictions" in (d.failure.hint or "")


def test_custom_block_patterns(tmp_path: Path) -> None:
    cfg = _load(tmp_path, '[guard]\nblock_patterns = ["*"]\n')
    assert check("ls", ["a|b"], None, cfg).allowed
    d = check("ls", ["*.py"], None, cfg)
    assert d.failure is not None and d.failure.message == "Blocked pattern '*' detected in argument '*.py'"


def test_empty_allowed_paths_disables_path_checks_but_not_the_system_cwd_rule(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "[guard]\nallowed_paths = []\n")
    assert check("cat", ["/etc/hostname"], None, cfg).allowed
    d = check("ls", [], "/", cfg)
    assert d.failure is not None and d.failure.reason == "path_not_allowed"


@pytest.mark.parametrize(("cwd", "reason"), [("does-not-exist", "path_not_allowed"), ("a\0b", "path_not_allowed")])
def test_bad_cwd_is_a_refusal(tmp_path: Path, cwd: str, reason: str) -> None:
    d = check("ls", [], cwd, _load(tmp_path))
    assert d.failure is not None and d.failure.reason == reason


def test_relative_cwd_is_resolved_against_the_server_cwd(tmp_path: Path) -> None:
    cfg = _load(tmp_path)
    (Path(cfg.cwd) / "sub").mkdir()
    os.symlink(Path(cfg.cwd) / "sub", Path(cfg.cwd) / "via")
    d = check("ls", [], "via", cfg)
    assert d.allowed and d.cwd == str(Path(cfg.cwd) / "sub")


def test_non_string_input_never_raises(tmp_path: Path) -> None:
    cfg = _load(tmp_path)
    d = check("ls", ["-l", 5], None, cfg)  # type: ignore[list-item]
    assert d.failure is not None and d.failure.reason == "arg_not_allowed"
    d = check(None, [], None, cfg)  # type: ignore[arg-type]
    assert d.failure is not None


def test_never_ends_hint_names_the_fix(tmp_path: Path) -> None:
    d = check("tail", ["-f", "x"], None, _load(tmp_path))
    assert d.failure is not None and "-n 100" in (d.failure.hint or "")
    d = check("ping", ["192.0.2.1"], None, _load(tmp_path))
    assert d.failure is not None and "-c 4" in (d.failure.hint or "")


def test_args_must_be_a_list(tmp_path: Path) -> None:
    d = check("ls", "-la", None, _load(tmp_path))  # type: ignore[arg-type]
    assert d.failure is not None and d.failure.reason == "arg_not_allowed"


def test_default_arg_restrictions_stay_when_a_policy_allows_the_flag(tmp_path: Path) -> None:
    cfg = _load(tmp_path, '[guard.command_policies.curl]\npositionals = "url"\nflags = { "-o" = "path" }\n')
    assert "-o" in cfg.settings.guard.command_arg_restrictions["curl"].blocked_flags
    d = check("curl", ["-o", "out.html", "https://example.com/"], None, cfg)
    assert d.failure is not None and "command_arg_restrictions.curl" in (d.failure.hint or "")
