"""Layering, origins, validation and compatibility of ``load_config`` (spec decisions 2, 3, 12)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from parism.config import LoadedConfig

from .conftest import Dirs

Load = Callable[..., LoadedConfig]


def test_defaults_come_from_the_readonly_profile(load: Load, dirs: Dirs) -> None:
    cfg = load()
    assert cfg.errors == []
    assert cfg.profile.name == "readonly"
    assert cfg.settings.guard.timeout_ms == 10000
    assert cfg.origins["guard.timeout_ms"] == "profile:readonly.toml"
    assert cfg.origins["guard.max_items"] == "default"
    assert cfg.settings.guard.allowed_paths == [str(dirs.project)]
    assert cfg.settings.guard.block_patterns == [";", "$(", "`", "&&", "||", ">", ">>", "<", "|"]
    assert cfg.files == []


def test_global_then_project_then_env(load: Load, dirs: Dirs) -> None:
    g = dirs.write(dirs.global_toml, "[guard]\ntimeout_ms = 5000\nmax_items = 300\nmax_page_size = 900\n")
    p = dirs.write(dirs.project_toml, "[guard]\ntimeout_ms = 4000\nmax_items = 200\n")
    cfg = load(PARISM_MAX_ITEMS="100")
    assert cfg.errors == []
    assert (cfg.settings.guard.timeout_ms, cfg.origins["guard.timeout_ms"]) == (4000, f"project:{p}")
    assert (cfg.settings.guard.max_items, cfg.origins["guard.max_items"]) == (100, "env:PARISM_MAX_ITEMS")
    assert (cfg.settings.guard.max_page_size, cfg.origins["guard.max_page_size"]) == (900, f"global:{g}")
    assert cfg.files == [str(g), str(p)]


def test_effective_lists_every_key_with_value_and_origin(load: Load, dirs: Dirs) -> None:
    dirs.write(dirs.global_toml, "[telemetry]\nenabled = true\n")
    eff = load().effective()
    assert eff["telemetry.enabled"] == {"value": True, "origin": f"global:{dirs.global_toml}"}
    assert eff["guard.timeout_ms"]["origin"] == "profile:readonly.toml"
    assert eff["sandbox.limits.nproc"] == {"value": 64, "origin": "profile:readonly.toml"}
    assert "parsers.adaptive_format_threshold.json" in eff
    json.dumps(eff)  # parism config prints it


@pytest.mark.parametrize(("text", "key"), [
    ('[guard]\nallowed_commands = ["ls", "rm"]\n', "guard.allowed_commands"),
    ("[guard]\ntimeout_ms = 999999\n", "guard.timeout_ms"),
    ("[guard]\ntimeout_ms = 0\n", "guard.timeout_ms"),  # 0 = unlimited
    ("[guard]\nmax_output_bytes = 0\n", "guard.max_output_bytes"),
    ("[guard]\nmax_concurrency = 64\n", "guard.max_concurrency"),
    ("[guard]\nmax_timeout_ms = 3600001\n", "guard.max_timeout_ms"),
    ("[guard]\nblock_patterns = []\n", "guard.block_patterns"),
    ('[guard]\nallowed_paths = ["/"]\n', "guard.allowed_paths"),
    ("[guard]\nallowed_paths = []\n", "guard.allowed_paths"),
    ('[guard]\nprofile = "build"\n', "guard.profile"),
    ('[guard]\nprofile = "/tmp/evil.toml"\n', "guard.profile"),
    ('[guard.command_policies.rm]\npositionals = "any"\n', "guard.command_policies"),
    ('[guard.secrets]\nenv_patterns = []\n', "guard.secrets.env_patterns"),
    ('[guard.secrets]\nenv_allow = ["AWS_SECRET_ACCESS_KEY"]\n', "guard.secrets.env_allow"),
    ('[guard.secrets]\noutput_patterns_mode = "replace"\n', "guard.secrets.output_patterns_mode"),
    ('[sandbox]\nmode = "off"\n', "sandbox.mode"),
    ('[sandbox]\nbwrap_path = "/tmp/fake-bwrap"\n', "sandbox.bwrap_path"),
    ('[parsers.external_capabilities]\nfs_read = [["/etc", "/etc"]]\n', "parsers.external_capabilities.fs_read"),
    ("[sandbox]\nwritable_project = true\n", "sandbox.writable_project"),
    ('[sandbox]\nnetwork_allow = ["127.0.0.1:6379"]\n', "sandbox.network_allow"),
    ("[sandbox.limits]\nnproc = 0\n", "sandbox.limits.nproc"),
    ("[sandbox.limits]\noom_score_adj = -1000\n", "sandbox.limits.oom_score_adj"),
    ('[audit]\npath = "/tmp/elsewhere.jsonl"\n', "audit.path"),
    ('[parsers]\nexternal_isolation = "none"\n', "parsers.external_isolation"),
    ("trust_project_config = true\n", "trust_project_config"),
    ("[guard.command_arg_restrictions.curl]\nblocked_flags = []\n", "guard.command_arg_restrictions"),
])
def test_untrusted_project_cannot_widen(load: Load, dirs: Dirs, text: str, key: str) -> None:
    path = dirs.write(dirs.project_toml, text)
    cfg = load()
    assert [(p.file, p.key) for p in cfg.errors] == [(str(path), key)]
    assert "untrusted project configuration" in cfg.errors[0].message
    assert cfg.origins.get(key) != f"project:{path}"  # the widening value was not applied


def test_widening_attempt_leaves_effective_value_unchanged(load: Load, dirs: Dirs) -> None:
    dirs.write(dirs.project_toml, '[guard]\nallowed_commands = ["ls", "rm"]\nblock_patterns = []\n')
    cfg = load()
    assert "rm" not in cfg.settings.guard.allowed_commands
    assert ";" in cfg.settings.guard.block_patterns
    assert {p.key for p in cfg.errors} == {"guard.allowed_commands", "guard.block_patterns"}


def test_network_allow_entries_are_validated_and_a_project_may_only_narrow(load: Load, dirs: Dirs) -> None:
    dirs.write(dirs.global_toml, '[sandbox]\nnetwork_allow = ["10.0.0.0/8", "127.0.0.1:8080"]\n')
    dirs.write(dirs.project_toml, '[sandbox]\nnetwork_allow = ["127.0.0.1:8080"]\n')
    cfg = load()
    assert cfg.errors == [] and cfg.settings.sandbox.network_allow == ["127.0.0.1:8080"]
    dirs.write(dirs.global_toml, '[sandbox]\nnetwork_allow = ["10.0.0.0/33"]\n')
    dirs.write(dirs.project_toml, "")
    bad = load()
    assert [p.key for p in bad.errors] == ["sandbox.network_allow"] and "10.0.0.0/33" in bad.errors[0].message


def test_untrusted_project_may_tighten(load: Load, dirs: Dirs) -> None:
    sub = dirs.project / "src"
    sub.mkdir()
    path = dirs.write(dirs.project_toml, (
        '[guard]\nallowed_commands = ["ls", "cat"]\nallowed_paths = ["./src"]\ntimeout_ms = 2000\n'
        'block_patterns = [";", "$(", "`", "&&", "||", ">", ">>", "<", "|", "*"]\n'
        '[guard.secrets]\noutput_redaction_enabled = true\nenv_patterns = ["TOKEN", "SECRET", "AUTHZ", '
        '"PASSWORD", "PASSWD", "CREDENTIAL", "KEY", "AUTH", "_URL", "PRIVATE"]\n'
        '[sandbox]\nmode = "required"\nnetwork = false\n[sandbox.limits]\nnproc = 32\noom_score_adj = 1000\n'
    ))
    cfg = load()
    assert cfg.errors == []
    g = cfg.settings.guard
    assert g.allowed_commands == ["ls", "cat"]
    assert g.allowed_paths == [str(sub)]  # relative to the file's directory
    assert g.timeout_ms == 2000 and g.secrets.output_redaction_enabled
    assert cfg.settings.sandbox.mode == "required" and cfg.settings.sandbox.limits.nproc == 32
    assert cfg.origins["guard.allowed_paths"] == f"project:{path}"


def test_project_may_switch_build_down_to_readonly(load: Load, dirs: Dirs) -> None:
    dirs.write(dirs.global_toml, '[guard]\nprofile = "build"\n')
    dirs.write(dirs.project_toml, '[guard]\nprofile = "readonly"\n')
    cfg = load()
    assert cfg.errors == []
    assert cfg.profile.name == "readonly" and cfg.settings.guard.profile == "readonly"
    assert cfg.settings.guard.timeout_ms == 10000


def test_trust_project_config_lifts_the_restriction(load: Load, dirs: Dirs) -> None:
    dirs.write(dirs.global_toml, "trust_project_config = true\n")
    path = dirs.write(dirs.project_toml, '[guard]\nallowed_commands = ["ls", "jq"]\ntimeout_ms = 60000\n'
                                         '[guard.command_policies.jq]\npositionals = "data"\n')
    cfg = load()
    assert cfg.errors == []
    assert cfg.settings.guard.allowed_commands == ["ls", "jq"]
    assert cfg.settings.guard.timeout_ms == 60000
    assert cfg.origins["guard.command_policies"] == f"project:{path}"
    assert cfg.policy("jq") is not None


def test_trusted_project_still_cannot_choose_a_profile_file(load: Load, dirs: Dirs, tmp_path) -> None:
    evil = dirs.write(tmp_path / "evil.toml", '[guard]\nallowed_commands = ["sh"]\n[commands.sh]\n')
    dirs.write(dirs.global_toml, "trust_project_config = true\n")
    dirs.write(dirs.project_toml, f'[guard]\nprofile = "{evil}"\n')
    cfg = load()
    assert cfg.profile.name == "readonly"
    assert "sh" not in cfg.settings.guard.allowed_commands


@pytest.mark.parametrize(("var", "raw", "key", "value"), [
    ("PARISM_TIMEOUT_MS", " 2500 ", "guard.timeout_ms", 2500),
    ("PARISM_ALLOWED_COMMANDS", " ls, ,cat ,", "guard.allowed_commands", ["ls", "cat"]),
    ("PARISM_STRICT_SCHEMAS", "1", "parsers.strict_schemas", True),
    ("PARISM_TELEMETRY_ENABLED", "true", "telemetry.enabled", True),
    ("PARISM_ADAPTIVE_FORMAT_COMPACT", "10", "parsers.adaptive_format_threshold.compact", 10),
    ("PARISM_SANDBOX", "required", "sandbox.mode", "required"),
    ("PARISM_DEFAULT_PAGE_SIZE", "20", "guard.default_page_size", 20),
])
def test_env_values(load: Load, var: str, raw: str, key: str, value: object) -> None:
    cfg = load(**{var: raw})
    assert cfg.errors == []
    assert cfg.effective()[key] == {"value": value, "origin": f"env:{var}"}


@pytest.mark.parametrize(("var", "raw", "key"), [
    ("PARISM_TIMEOUT_MS", "abc", "guard.timeout_ms"),
    ("PARISM_TIMEOUT_MS", "-5", "guard.timeout_ms"),
    ("PARISM_MAX_OUTPUT_BYTES", "1e6", "guard.max_output_bytes"),
    ("PARISM_STRICT_SCHEMAS", "maybe", "parsers.strict_schemas"),
    ("PARISM_SANDBOX", "sometimes", "sandbox.mode"),
    ("PARISM_MAX_PAGE_SIZE", "0", "guard.max_page_size"),
])
def test_invalid_env_values_are_errors(load: Load, var: str, raw: str, key: str) -> None:
    cfg = load(**{var: raw})
    assert [(p.file, p.key) for p in cfg.errors] == [(f"env:{var}", key)]
    assert cfg.origins[key] != f"env:{var}"


def test_env_overrides_a_trusted_global_and_selects_the_profile(load: Load, dirs: Dirs) -> None:
    dirs.write(dirs.global_toml, '[guard]\nprofile = "readonly"\ntimeout_ms = 5000\n')
    cfg = load(PARISM_PROFILE="build", PARISM_TIMEOUT_MS="7000")
    assert cfg.profile.name == "build"
    assert cfg.origins["guard.profile"] == "env:PARISM_PROFILE"
    assert cfg.settings.guard.timeout_ms == 7000


def test_unknown_key_names_file_and_key(load: Load, dirs: Dirs) -> None:
    path = dirs.write(dirs.global_toml, "[guard]\ntimout_ms = 5\n[nonsense]\nx = 1\n")
    cfg = load()
    assert sorted((p.file, p.key, p.message) for p in cfg.errors) == [
        (str(path), "guard.timout_ms", "unknown key"),
        (str(path), "nonsense", "unknown key"),
    ]


@pytest.mark.parametrize(("text", "key"), [
    ('[guard]\ntimeout_ms = "10"\n', "guard.timeout_ms"),
    ('[guard]\nallowed_commands = "ls"\n', "guard.allowed_commands"),
    ("guard = 5\n", "guard"),
    ("[guard]\nmax_page_size = 0\n", "guard.max_page_size"),
    ('[sandbox]\nmode = "sometimes"\n', "sandbox.mode"),
    ('[guard.command_policies.jq]\npositionals = "everything"\n', "guard.command_policies"),
    ('[guard.command_policies.jq]\nflgs = {}\n', "guard.command_policies"),
    ("[telemetry]\nenabled = 1\n", "telemetry.enabled"),
    ('[guard]\nallowed_paths = ["/tmp/a\\u0000b"]\n', "guard.allowed_paths"),
    ('[guard]\nallowed_paths = [""]\n', "guard.allowed_paths"),
])
def test_wrong_types_are_errors(load: Load, dirs: Dirs, text: str, key: str) -> None:
    path = dirs.write(dirs.global_toml, text)
    cfg = load()
    assert [(p.file, p.key) for p in cfg.errors] == [(str(path), key)]


@pytest.mark.parametrize(("text", "line"), [
    ("[guard]\ntimeout_ms = = 5\nmax_items = 3\n", "line 2"),
    ("[guard]\ntimeout_ms = 5\nallowed_commands = [\"ls\"\n", "line 3"),  # error at end of document
])
def test_broken_toml_names_file_and_line(load: Load, dirs: Dirs, text: str, line: str) -> None:
    path = dirs.write(dirs.project_toml, text)
    cfg = load()
    assert len(cfg.errors) == 1
    assert cfg.errors[0].file == str(path)
    assert line in cfg.errors[0].message
    assert cfg.settings.guard.timeout_ms == 10000


def test_prism_config_json_is_read_in_both_places(load: Load, dirs: Dirs) -> None:
    g = dirs.write(dirs.global_json, json.dumps({"guard": {"max_items": 50, "timeout_ms": 9000}}))
    dirs.write(dirs.global_toml, "[guard]\ntimeout_ms = 8000\n")
    p = dirs.write(dirs.project_json, json.dumps({"guard": {"max_items": 40}}))
    cfg = load()
    assert cfg.errors == []
    assert cfg.settings.guard.timeout_ms == 8000  # config.toml is read after prism.config.json
    assert cfg.settings.guard.max_items == 40
    assert cfg.origins["guard.max_items"] == f"project:{p}"
    assert str(g) in cfg.files


def test_prism_config_json_legacy_key_and_broken_json(load: Load, dirs: Dirs) -> None:
    dirs.write(dirs.global_json, json.dumps({"guard": {"env_secret_patterns": ["TOKEN", "X"]}}))
    broken = dirs.write(dirs.project_json, '{"guard": {\n  "max_items": ,\n}}')
    cfg = load()
    assert cfg.settings.guard.secrets.env_patterns == ["TOKEN", "X"]
    assert any("env_secret_patterns is deprecated" in w for w in cfg.warnings)
    assert [(p.file, "line 2" in p.message) for p in cfg.errors] == [(str(broken), True)]


def test_explicit_file_replaces_global_and_project(load: Load, dirs: Dirs, tmp_path) -> None:
    dirs.write(dirs.global_toml, "[guard]\ntimeout_ms = 5000\n")
    dirs.write(dirs.project_toml, "[guard]\nmax_items = 1\n")
    explicit = dirs.write(tmp_path / "my.toml", '[guard]\nprofile = "build"\nmax_items = 77\n')
    cfg = load(str(explicit), PARISM_TIMEOUT_MS="1234")
    assert cfg.errors == []
    assert cfg.files == [str(explicit)]
    assert cfg.profile.name == "build"
    assert cfg.settings.guard.max_items == 77 and cfg.origins["guard.max_items"] == f"explicit:{explicit}"
    assert cfg.settings.guard.timeout_ms == 1234
    assert load(PARISM_CONFIG=str(explicit)).files == [str(explicit)]


def test_missing_explicit_file_is_an_error(load: Load, tmp_path) -> None:
    cfg = load(str(tmp_path / "absent.toml"))
    assert [p.message for p in cfg.errors] == ["configuration file not found"]


def test_empty_allowed_paths_is_valid_with_a_loud_warning(load: Load, dirs: Dirs) -> None:
    dirs.write(dirs.global_toml, "[guard]\nallowed_paths = []\n")
    cfg = load()
    assert cfg.errors == []
    assert cfg.settings.guard.allowed_paths == []
    assert any("path checks are OFF" in w for w in cfg.warnings)


def test_custom_profile_file_from_global(load: Load, dirs: Dirs, tmp_path) -> None:
    prof = dirs.write(tmp_path / "team.toml", (
        'extends = "readonly"\n[guard]\nallowed_commands = ["ls", "jq"]\n'
        '[commands.jq]\npositionals = "data"\nflags = { "-r" = "bool" }\n'
    ))
    dirs.write(dirs.global_toml, f'[guard]\nprofile = "{prof}"\n')
    cfg = load()
    assert cfg.errors == []
    assert cfg.profile.name == "team"
    assert cfg.policy("jq") is not None and cfg.policy("git") is not None  # inherited
    assert cfg.origins["guard.allowed_commands"] == f"profile:{prof}"


def test_bad_custom_profile_is_an_error_naming_the_key(load: Load, dirs: Dirs, tmp_path) -> None:
    prof = dirs.write(tmp_path / "bad.toml", '[commands.jq]\npositionals = "data"\nflagz = {}\n')
    cfg = load(PARISM_PROFILE=str(prof))
    assert [(p.file, p.key) for p in cfg.errors] == [(str(prof), "commands.jq.flagz")]
    assert cfg.policy("jq") is None


def test_missing_profile_file_denies_everything(load: Load, tmp_path) -> None:
    cfg = load(PARISM_PROFILE=str(tmp_path / "nope.toml"))
    assert cfg.errors and cfg.errors[0].key == "guard.profile"
    assert cfg.profile.commands == {}


def test_config_path_that_is_a_directory_never_raises(load: Load, tmp_path) -> None:
    cfg = load(str(tmp_path))
    assert cfg.errors and cfg.errors[0].file == str(tmp_path)


def test_error_message_names_every_problem(load: Load, dirs: Dirs) -> None:
    path = dirs.write(dirs.global_toml, "[guard]\ntimout_ms = 5\n")
    cfg = load(PARISM_TIMEOUT_MS="abc")
    msg = cfg.error_message()
    assert f"{path}: guard.timout_ms: unknown key" in msg
    assert "env:PARISM_TIMEOUT_MS: guard.timeout_ms" in msg


def test_custom_profile_paths_are_relative_to_the_profile_file(load: Load, dirs: Dirs, tmp_path) -> None:
    (tmp_path / "team" / "work").mkdir(parents=True)
    prof = dirs.write(tmp_path / "team" / "team.toml", '[guard]\nallowed_paths = ["./work"]\n')
    cfg = load(PARISM_PROFILE=str(prof))
    assert cfg.errors == []
    assert cfg.settings.guard.allowed_paths == [str(tmp_path / "team" / "work")]


def test_removed_start_directory_never_raises(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from parism.config import load_config

    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    cfg = load_config(environ={"HOME": str(tmp_path)})
    assert cfg.cwd == str(tmp_path)
    assert any("cannot read the working directory" in w for w in cfg.warnings)
