"""Child environment (§8.7) and availability hints."""

from __future__ import annotations

import shutil

from parism.availability import MANAGERS, availability, host_manager, install_hint
from parism.run.childenv import FORCED, build_env


def test_allowlist_then_deny_patterns_then_forced() -> None:
    source = {
        "PATH": "/usr/bin", "HOME": "/home/u", "USER": "u", "OPENAI_API_KEY": "k",
        "DATABASE_URL": "postgres://u:p@h/db", "SSH_AUTH_SOCK": "/tmp/s", "GITHUB_TOKEN": "t",
        "KUBECONFIG": "/k", "EDITOR": "vim", "LC_ALL": "fr_FR", "MY_TOOL_HOME": "/opt/t",
    }
    ce = build_env(source, allow=["MY_TOOL_HOME", "GITHUB_TOKEN"], patterns=["TOKEN", "KEY", "AUTH", "_URL"])
    # TZ is the caller's, not forced (docs/envelope.md, "Time rule"): none given, so UTC
    assert ce.env == {"PATH": "/usr/bin", "HOME": "/home/u", "USER": "u", "MY_TOOL_HOME": "/opt/t", **FORCED,
                      "TZ": "UTC"}
    assert ce.stripped == ["DATABASE_URL", "GITHUB_TOKEN", "OPENAI_API_KEY", "SSH_AUTH_SOCK"]
    assert ce.env["LC_ALL"] == "C.UTF-8" and ce.env["GIT_CONFIG_GLOBAL"] == "/dev/null"


def test_the_callers_zone_passes_and_an_unknown_one_is_a_problem() -> None:
    ce = build_env({"TZ": "Asia/Kathmandu"})
    assert ce.env["TZ"] == "Asia/Kathmandu" and ce.zone_problem is None
    bad = build_env({"TZ": "Mars/Base"})
    assert bad.env["TZ"] == "UTC" and bad.zone_problem is not None and "Mars/Base" in bad.zone_problem


def test_path_defaults_when_absent() -> None:
    assert build_env({}).env["PATH"].startswith("/usr/local/sbin")


def test_install_hint_uses_this_hosts_manager() -> None:
    found = next((name for binary, name, _ in MANAGERS if shutil.which(binary)), None)
    assert (host_manager() or (None,))[0] == found
    assert install_hint("dig", ("apt", "apt-get install -y")).package == "dnsutils"  # type: ignore[union-attr]
    assert install_hint("dig", ("apk", "apk add")).command == "apk add bind-tools"  # type: ignore[union-attr]
    assert install_hint("jq", ("brew", "brew install")).package == "jq"  # type: ignore[union-attr]


def test_alternatives_only_when_usable() -> None:
    allowed = availability("dig", "missing", lambda cmd, args: cmd == "nslookup")
    assert [a.cmd for a in allowed.alternatives] == ["nslookup"]
    assert availability("dig", "missing", lambda cmd, args: False).alternatives == []


def test_query_tools_cannot_update_themselves() -> None:
    """brew would auto-update (network, state change) on a plain `brew list`; npm would check
    the registry for a newer npm. The child environment switches both off."""
    env = build_env({"HOMEBREW_NO_AUTO_UPDATE": "0"}).env
    assert env["HOMEBREW_NO_AUTO_UPDATE"] == "1" and env["NPM_CONFIG_UPDATE_NOTIFIER"] == "false"
