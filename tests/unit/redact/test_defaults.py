"""Shipped defaults: redaction on in both profiles, and the child-env name patterns."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from parism.run.childenv import build_child_env
from parism.config import load_config
from parism.output.redact import Redactor


def _config(tmp_path: Path, environ: Mapping[str, str], body: str = ""):  # type: ignore[no-untyped-def]
    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text(body)
    cfg = load_config(str(cfg_file), cwd=str(tmp_path), environ=dict(environ))
    assert cfg.errors == []
    return cfg


@pytest.mark.parametrize("profile", ["readonly", "build"])
def test_both_shipped_profiles_mask_output(tmp_path: Path, profile: str) -> None:
    cfg = _config(tmp_path, {"PARISM_PROFILE": profile})
    assert cfg.profile.name == profile
    redactor = Redactor.from_config(cfg)
    assert redactor.enabled
    assert redactor.mask("GITHUB_TOKEN=ghp_" + "a1B2" * 9).text == "GITHUB_TOKEN=[REDACTED]"


def test_switching_redaction_off_is_one_key(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {}, "[guard.secrets]\noutput_redaction_enabled = false\n")
    assert Redactor.from_config(cfg).mask("token=abcdef123").text == "token=abcdef123"


def test_invalid_user_pattern_surfaces_from_config(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {}, "[guard.secrets]\noutput_patterns = ['ok-[0-9]+', '(unclosed']\n")
    problems = Redactor.from_config(cfg).problems()
    assert len(problems) == 1 and "output_patterns[1]" in problems[0] and "(unclosed" in problems[0]


# Realistic secret-bearing variable names, even when a user allowlists them by mistake.
CAUGHT_BY_DEFAULT = ["GITHUB_TOKEN", "NPM_TOKEN", "AWS_SESSION_TOKEN", "AWS_SECRET_ACCESS_KEY",
                     "PGPASSWORD", "LDAP_BIND_PASSWD", "GOOGLE_APPLICATION_CREDENTIALS", "HTTP_AUTHZ"]
# Named by contract §8.7 as passed through by the v1 substring list ([rec]: add KEY, AUTH, _URL).
WEAK_SPOTS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "STRIPE_API_KEY", "PRIVATE_KEY", "DATABASE_URL",
              "SSH_AUTH_SOCK"]


def test_default_env_patterns_strip_secret_names_even_when_allowlisted(tmp_path: Path) -> None:
    allow = ", ".join(f'"{n}"' for n in CAUGHT_BY_DEFAULT + ["DEPLOY_NOTE"])
    cfg = _config(tmp_path, {}, f"[guard.secrets]\nenv_allow = [{allow}]\n")
    source = {name: "value-" + name for name in CAUGHT_BY_DEFAULT} | {"DEPLOY_NOTE": "kept"}
    child = build_child_env(cfg, source)
    assert child.env["DEPLOY_NOTE"] == "kept"
    assert set(CAUGHT_BY_DEFAULT).isdisjoint(child.env)
    assert set(child.stripped) == set(CAUGHT_BY_DEFAULT)
    assert not any(value.startswith("value-") for value in child.stripped)  # names only


def test_names_outside_the_allowlist_never_reach_the_child(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {})
    child = build_child_env(cfg, {name: "x" for name in WEAK_SPOTS + ["KUBECONFIG"]})
    assert set(WEAK_SPOTS + ["KUBECONFIG"]).isdisjoint(child.env)


def test_default_env_patterns_cover_the_v1_weak_spots(tmp_path: Path) -> None:
    allow = ", ".join(f'"{n}"' for n in WEAK_SPOTS)
    cfg = _config(tmp_path, {}, f"[guard.secrets]\nenv_allow = [{allow}]\n")
    child = build_child_env(cfg, {name: "x" for name in WEAK_SPOTS})
    assert set(child.stripped) == set(WEAK_SPOTS)
