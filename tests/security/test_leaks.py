"""Secrets never leave: real commands print a corpus of realistic secrets through the real engine.

Every scenario runs a real process (cat, env, grep, git log -p, ls, find, tac) through
``parism.create_engine(...).run / run_paged / dry_run`` on a workspace that this module builds
in a temporary directory. The check walks the *decoded* strings of every envelope field (keys
and values, so an escaped newline in JSON cannot hide a fragment), the audit log and the output
of ``sanitize_capture``, and fails on any 8-character piece of any secret.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import parism
from parism.output.redact.capture import sanitize_capture
from tests.unit.redact.leak_corpus import (
    ANTHROPIC,
    AWS_SECRET_JSON,
    AWS_SESSION,
    AWS_TEMP_KEY_ID,
    DOTENV,
    GH_APP_SERVER,
    GH_CLASSIC,
    GH_OAUTH,
    GOOGLE_API,
    JWT,
    KUBE_SECRET_JSON,
    KUBE_SECRET_YAML,
    LEAKS,
    NPM,
    Leak,
    OPENAI_PROJECT,
    SLACK_BOT,
    STRIPE_RESTRICTED,
    STRIPE_SECRET,
    leaked_pieces,
)

CHUNK = 64 * 1024  # the executor's read size: a secret is placed across this boundary
PROFILE = """
description = "leak tests: the commands that print secrets"
[guard]
allowed_commands = ["cat", "env", "grep", "git", "ls", "find", "tac"]
[commands.cat]
positionals = "path"
[commands.tac]
positionals = "path"
[commands.env]
positionals = "none"
[commands.ls]
flags = { "-1" = "bool", "-a" = "bool" }
positionals = "path"
[commands.find]
flags = { "-name" = "value", "-type" = "value" }
single_dash_long = true
positionals = "path"
[commands.grep]
flags = { "-r" = "bool", "-n" = "bool", "-i" = "bool", "-e" = "data" }
positionals = "any"
[commands.git]
subcommands = ["log"]
sub_flags = { log = { "-p" = "bool" } }
"""
ENV_SECRETS = {  # in the server's environment; names match the default env_patterns
    "GITHUB_TOKEN": GH_CLASSIC,
    "AWS_SECRET_ACCESS_KEY": AWS_SECRET_JSON,
    "DB_PASSWORD": STRIPE_RESTRICTED,
    "MYSQL_PASSWD": NPM,
    "SERVICE_CREDENTIALS": GOOGLE_API,
    "HTTP_AUTHZ": JWT,
}
# One line, no newline before the key: the cap cuts inside `sk-proj-…` after 16 characters,
# shorter than any full key shape; stderr is cut 12 characters into a `ghp_` token.
CAPPED_PREFIX = "curl -H 'x-api: "
CAPPED_STDERR_PREFIX = f"{shutil.which('cat')}: missing-"  # cat names itself by its argv[0]
CATASTROPHIC = r"(a+)+b"  # nested quantifiers: exponential when backtracking, linear on RE2
BACKREF = r"(?m)^(a|aa)+\1$"  # RE2 refuses backreferences; exponential on this input
ENV_ALLOWED_VALUE = f"deploy with {ANTHROPIC}"  # allowlisted name: `env` prints it, masked


def strings(value: Any) -> Iterator[str]:
    """Every decoded string in a JSON-like value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)


def envelope_strings(model: Any) -> list[str]:
    return [*strings(model.to_wire()), model.to_json()]


def write_config(
    root: Path, name: str, *, max_output_bytes: int, extra_guard: str = "", extra_secrets: str = ""
) -> str:
    profile = root / "profile.toml"
    profile.write_text(PROFILE)
    cfg = root / name
    cfg.write_text(f"""
[guard]
profile = "{profile}"
allowed_paths = ["{root / 'ws'}"]
max_output_bytes = {max_output_bytes}
{extra_guard}
[guard.secrets]
output_redaction_enabled = true
env_allow = ["DEPLOY_NOTE", {", ".join(json.dumps(n) for n in ENV_SECRETS)}]
{extra_secrets}
[audit]
enabled = true
path = "{root / (name + '.audit.jsonl')}"
[telemetry]
enabled = true
""")
    return str(cfg)


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com", *args],
        cwd=repo, check=True, capture_output=True, env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"},
    )


def build_workspace(ws: Path) -> None:
    ws.mkdir()
    (ws / ".env").write_text(DOTENV)
    (ws / "secret.json").write_text(KUBE_SECRET_JSON)
    (ws / "secret.yaml").write_text(KUBE_SECRET_YAML)
    api = {"Credentials": {"AccessKeyId": AWS_TEMP_KEY_ID, "SecretAccessKey": AWS_SECRET_JSON,
                           "SessionToken": AWS_SESSION}, "token": GH_APP_SERVER}
    (ws / "api.json").write_text(json.dumps(api) + "\n")
    (ws / f"backup-{GH_OAUTH}.txt").write_text("named after a token\n")
    pad = CHUNK - len("key ") - 20  # the Stripe key starts 20 bytes before the boundary
    (ws / "big.txt").write_text(("x" * 99 + "\n") * (pad // 100) + "y" * (pad % 100) + f"key {STRIPE_SECRET}\n")
    (ws / "backtrack.txt").write_text("a" * 5000 + "b\n" + DOTENV)
    (ws / "one-mb-line.txt").write_text("a" * (1 << 20) + "!\n")
    (ws / "capped.txt").write_text(CAPPED_PREFIX + OPENAI_PROJECT + " for the deploy job\n")
    repo = ws / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "settings.env").write_text(DOTENV)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", f"add settings (temporary bot token {SLACK_BOT})")
    (repo / "settings.env").write_text("# moved to the vault\n")
    git(repo, "commit", "-q", "-am", "remove secrets")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("leaks")
    build_workspace(root / "ws")
    configs = {
        "main": write_config(root, "main.toml", max_output_bytes=2 << 20),
        "capped": write_config(root, "capped.toml", max_output_bytes=len(CAPPED_PREFIX) + 16,
                               extra_guard=f"max_stderr_bytes = {len(CAPPED_STDERR_PREFIX) + 12}"),
        "re2": write_config(root, "re2.toml", max_output_bytes=2 << 20,
                            extra_secrets=f"output_patterns = ['{CATASTROPHIC}']"),
        "fallback": write_config(root, "fallback.toml", max_output_bytes=2 << 20,
                                 extra_secrets=f"output_patterns = ['{BACKREF}']"),
    }
    with pytest.MonkeyPatch.context() as mp:
        for name, value in ENV_SECRETS.items():
            mp.setenv(name, value)
        mp.setenv("DEPLOY_NOTE", ENV_ALLOWED_VALUE)
        engines = {name: parism.create_engine(cfg) for name, cfg in configs.items()}
    assert all(engine.errors == [] for engine in engines.values())
    yield {"root": root, "ws": root / "ws", "engines": engines}
    for engine in engines.values():
        engine.close()


def ws_path(setup: dict[str, Any], rel: str) -> str:
    return str(setup["ws"] / rel)


RUNS: list[tuple[str, str, list[str], str]] = [  # (id, cmd, args, cwd relative to ws)
    ("cat_dotenv", "cat", [".env"], "."),
    ("grep_recursive", "grep", ["-r", "-n", "-i", "-e", "key", "-e", "token", "-e", "secret", "-e", "pass", "."], "."),
    ("grep_secret_in_args", "grep", ["-n", "-e", GH_CLASSIC, ".env"], "."),
    ("env", "env", [], "."),
    ("git_log_p", "git", ["log", "-p"], "repo"),
    ("ls_file_names", "ls", ["-1", "-a"], "."),
    ("find_file_names", "find", [".", "-name", "*.txt"], "."),
    ("stderr_missing_file", "cat", [f"missing-{STRIPE_SECRET}"], "."),
    ("kube_secret_json", "cat", ["secret.json"], "."),
    ("kube_secret_yaml", "cat", ["secret.yaml"], "."),
    ("json_passthrough", "tac", ["api.json"], "."),
    ("chunk_boundary", "cat", ["big.txt"], "."),
    ("guard_flag_value", "cat", [f"--token={GH_CLASSIC}"], "."),
    ("guard_flag_next_arg", "cat", ["--password", "hunter2-Zq81-Vx07-long", ".env"], "."),
    ("guard_path_with_token", "cat", [f"/etc/{GH_OAUTH}"], "."),
    ("guard_cmd_is_token", GH_CLASSIC, [], "."),
    ("guard_cwd_with_token", "cat", [".env"], f"/nonexistent/{NPM}"),
]
ECHO_OF_CMD_AND_CWD = {"guard_cmd_is_token", "guard_cwd_with_token"}
RUN_PARAMS = [pytest.param(*run, id=run[0]) for run in RUNS]
EXTRA_SECRETS = ["hunter2-Zq81-Vx07-long"]


def check(texts: list[str]) -> list[tuple[str, str]]:
    """Fragments of the corpus, of argument-only secrets and of the server's env secrets."""
    extra = [Leak("argv_password", s, s) for s in EXTRA_SECRETS]
    env_values = [Leak(f"env:{k}", v, v) for k, v in ENV_SECRETS.items()]
    return leaked_pieces(texts, [*LEAKS, *extra, *env_values])


@pytest.mark.parametrize("run_id,cmd,args,cwd", RUN_PARAMS)
def test_run_envelope_has_no_secret(setup: dict[str, Any], run_id: str, cmd: str, args: list[str], cwd: str) -> None:
    engine = setup["engines"]["main"]
    where = cwd if cwd.startswith("/") else ws_path(setup, cwd)
    env = engine.run(cmd, args, cwd=where, contract_version="next")
    dry = engine.dry_run(cmd, args, cwd=where)
    assert check(envelope_strings(env) + envelope_strings(dry)) == []


def test_run_outputs_really_contained_the_secrets(setup: dict[str, Any]) -> None:
    """Guard against a vacuous pass: the commands ran and their masked output shows masks."""
    engine = setup["engines"]["main"]
    env = engine.run("cat", [".env"], cwd=ws_path(setup, "."), contract_version="next")
    assert env.ok and env.stdout.raw.count("[REDACTED]") >= 38
    assert env.review is not None and env.review.privacy_transform == "masked"
    log = engine.run("git", ["log", "-p"], cwd=ws_path(setup, "repo"))
    assert "DB_PASSWORD=[REDACTED]" in log.stdout.raw and "-DB_PASSWORD=[REDACTED]" in log.stdout.raw
    big = engine.run("cat", ["big.txt"], cwd=ws_path(setup, "."), format="json")
    assert big.stdout.raw.endswith("key [REDACTED]\n") and len(big.stdout.raw) > CHUNK - 40
    passthrough = engine.run("tac", ["api.json"], cwd=ws_path(setup, "."))
    assert passthrough.stdout.parsed["Credentials"]["SecretAccessKey"] == "[REDACTED]"


@pytest.mark.parametrize("fmt", ["json", "json-no-raw", "compact"])
def test_every_output_format_is_masked(setup: dict[str, Any], fmt: str) -> None:
    engine = setup["engines"]["main"]
    texts: list[str] = []
    for cmd, args, cwd in [("cat", [".env"], "."), ("git", ["log", "-p"], "repo"), ("tac", ["api.json"], ".")]:
        texts += envelope_strings(engine.run(cmd, args, cwd=ws_path(setup, cwd), format=fmt,
                                             contract_version="next"))
    assert check(texts) == []


def test_parse_output_is_masked(setup: dict[str, Any]) -> None:
    """Saved output handed to ``parse`` (no process): text, args and any hint are masked."""
    engine = setup["engines"]["main"]
    texts: list[str] = []
    for cmd, args in [("cat", [f"notes-{GH_OAUTH}.txt"]), ("ls", ["-l", "--token", GH_CLASSIC]),
                      ("tac", ["api.json"]), ("grep", ["-e", GH_CLASSIC, ".env"])]:
        raw = (setup["ws"] / ("api.json" if cmd == "tac" else ".env")).read_text()
        texts += envelope_strings(engine.parse_output(cmd, args, raw))
    assert check(texts) == []


def test_cut_by_the_output_cap(setup: dict[str, Any]) -> None:
    engine = setup["engines"]["capped"]
    env = engine.run("cat", ["capped.txt"], cwd=ws_path(setup, "."), format="json")
    assert env.truncated is True
    assert env.stdout.raw == CAPPED_PREFIX + "[REDACTED]"
    err = engine.run("cat", [f"missing-{GH_CLASSIC}"], cwd=ws_path(setup, "."), format="json")
    assert err.stderr.raw == CAPPED_STDERR_PREFIX + "[REDACTED]"
    assert check(envelope_strings(env) + envelope_strings(err)) == []


def test_run_paged_pages_have_no_secret(setup: dict[str, Any]) -> None:
    engine = setup["engines"]["main"]
    texts: list[str] = []
    page = 0
    while True:
        env = engine.run_paged("cat", [".env"], cwd=ws_path(setup, "."), page=page, page_size=7)
        texts += envelope_strings(env)
        assert env.page_info is not None
        if not env.page_info.has_next:
            break
        page += 1
    assert page >= 4
    assert "[REDACTED]" in "".join(texts)
    assert check(texts) == []


def test_child_env_never_gets_secret_names_and_describe_lists_them(setup: dict[str, Any]) -> None:
    engine = setup["engines"]["main"]
    env = engine.run("env", [], cwd=ws_path(setup, "."), format="json")  # raw kept beside the parse
    names = {line.split("=", 1)[0] for line in env.stdout.raw.splitlines()}
    assert names.isdisjoint(ENV_SECRETS), "allowlisted but secret-looking names reached the child"
    assert "DEPLOY_NOTE" in names and "deploy with [REDACTED]" in env.stdout.raw
    described = engine.describe()
    assert described.env is not None
    assert set(ENV_SECRETS) <= set(described.env["stripped"])
    assert check(envelope_strings(described)) == []


def audit_lines(setup: dict[str, Any], runs: list[tuple[str, str, list[str], str]]) -> list[str]:
    engine = setup["engines"]["main"]
    path = setup["root"] / "main.toml.audit.jsonl"
    before = path.read_text().count("\n") if path.exists() else 0
    for _, cmd, args, cwd in runs:
        engine.run(cmd, args, cwd=cwd if cwd.startswith("/") else ws_path(setup, cwd))
    lines = path.read_text().splitlines()[before:]
    assert len(lines) == len(runs)
    return [s for line in lines for s in strings(json.loads(line))] + lines


def test_audit_log_has_no_secret(setup: dict[str, Any]) -> None:
    assert check(audit_lines(setup, [r for r in RUNS if r[0] not in ECHO_OF_CMD_AND_CWD])) == []


def test_audit_log_masks_cmd_and_cwd(setup: dict[str, Any]) -> None:
    assert check(audit_lines(setup, [r for r in RUNS if r[0] in ECHO_OF_CMD_AND_CWD])) == []


def test_catastrophic_user_pattern_runs_on_re2(setup: dict[str, Any]) -> None:
    engine = setup["engines"]["re2"]
    report = engine.describe().regex_engine
    assert report is not None and report.used == "re2" and report.fallbacks == []
    start = time.monotonic()
    env = engine.run("cat", ["one-mb-line.txt"], cwd=ws_path(setup, "."), format="json")
    assert time.monotonic() - start < 10.0  # a backtracking engine would not finish at all
    assert env.ok and env.regex_engine is None  # no fallback pattern ran
    assert env.stdout.raw == "a" * (1 << 20) + "!\n"  # no `b`: nothing to mask


def test_fallback_pattern_is_stopped_and_fails_closed(setup: dict[str, Any]) -> None:
    engine = setup["engines"]["fallback"]
    report = engine.describe().regex_engine
    assert report is not None and [f.pattern for f in report.fallbacks] == [BACKREF]
    env = engine.run("cat", ["backtrack.txt"], cwd=ws_path(setup, "."), format="json")
    assert env.stdout.raw == "" and env.stdout.parsed in (None, {"lines": []})
    reasons = [o.reason for o in env.omission or [] if o.stage == "privacy"]
    assert len(reasons) == 1 and BACKREF in reasons[0] and "withheld" in reasons[0]
    assert env.regex_engine is not None and env.regex_engine.fallbacks[0].pattern == BACKREF
    assert check(envelope_strings(env)) == []


def test_capture_output_has_no_secret(setup: dict[str, Any]) -> None:
    """The fixture path: real unmasked outputs go through sanitize_capture."""
    ws = setup["ws"]
    runs = [
        ("cat", [".env"], ws),
        ("cat", ["secret.json"], ws),
        ("cat", ["secret.yaml"], ws),
        ("git", ["log", "-p"], ws / "repo"),
        ("ls", ["-1", "-a"], ws),
        ("grep", ["-n", "-e", GH_CLASSIC, ".env"], ws),
        ("cat", [f"missing-{STRIPE_SECRET}", "--password", "hunter2-Zq81-Vx07-long"], ws),
    ]
    texts: list[str] = []
    for cmd, args, cwd in runs:
        proc = subprocess.run([cmd, *args], cwd=cwd, capture_output=True, text=True,
                              env={**os.environ, "GIT_PAGER": "cat"})
        result = sanitize_capture(cmd, args, proc.stdout, proc.stderr)
        assert result.withheld_reason is None
        texts += [result.stdout, result.stderr, *result.args]
        texts += [s for r in result.redactions for s in strings(r.to_wire())]
    assert check(texts) == []


def test_withheld_output_is_a_privacy_transform(setup: dict[str, Any]) -> None:
    env = setup["engines"]["fallback"].run("cat", ["backtrack.txt"], cwd=ws_path(setup, "."),
                                           contract_version="next")
    assert env.review is not None and env.review.privacy_transform == "masked"
