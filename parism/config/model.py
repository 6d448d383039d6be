"""Typed configuration: the ``Settings`` tree, command policies and the loaded profile.

Every table forbids unknown keys (spec decision 2: a typo is an error naming the key, not a
silently ignored value).  Defaults here are the *code* defaults (origin ``default``); the shipped
profile files override most of them (origin ``profile:<file>``), so a profile is readable on its
own.  Key names are documented in docs/configuration.md.

No ``from __future__ import annotations``: pydantic would evaluate every annotation string when
it builds the classes, and ``parism serve`` builds them before it can answer ``tools/list``.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

FlagKindName = Literal["bool", "value", "path", "data", "url", "number", "attached", "count"]
PositionalKind = Literal["path", "any", "none", "url", "data", "host", "dns"]
EndOfOptions = Literal["getopt", "first_operand", "find", "literal", "none"]  # argv/tokenize.py
NamespaceClass = Literal["isolated", "host_procs", "host_mounts", "host_net"]

DEFAULT_BLOCK_PATTERNS: list[str] = [";", "$(", "`", "&&", "||", ">", ">>", "<", "|"]
# The v1 list plus the contract §8.7 [rec] heuristics: KEY (*_API_KEY, PRIVATE_KEY), AUTH
# (SSH_AUTH_SOCK), _URL (DATABASE_URL carries a password).
DEFAULT_ENV_PATTERNS: list[str] = ["TOKEN", "SECRET", "AUTHZ", "PASSWORD", "PASSWD", "CREDENTIAL",
                                   "KEY", "AUTH", "_URL"]


# contract §8.5 (v1 defaults).  The policies already refuse these flags; the restrictions stay
# as a second, visible line (describe shows them) that an untrusted project cannot remove.
DEFAULT_ARG_RESTRICTIONS: dict[str, list[str]] = {
    "node": ["-e", "--eval", "-r", "--require", "-p", "--print", "--input-type"],
    "npx": ["--yes", "-y"],
    "curl": ["-d", "--data", "-F", "--upload-file", "-T", "-K", "--config", "-o", "--output", "-O"],
}


class Strict(BaseModel):
    """Base for every config table: unknown keys are errors, types are strict (``"10"`` is not
    an integer), values are validated on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, strict=True)


class ArgRestriction(Strict):
    blocked_flags: list[str] = Field(default_factory=list)


class LimitOverrides(Strict):
    """Per-command changes to ``[sandbox.limits]`` (e.g. ``as_mb = 0`` for a JVM-based tool)."""

    nproc: int | None = Field(default=None, ge=0)
    as_mb: int | None = Field(default=None, ge=0)
    fsize_mb: int | None = Field(default=None, ge=0)
    cpu_grace_s: int | None = Field(default=None, ge=0)
    nofile: int | None = Field(default=None, ge=0)
    core: int | None = Field(default=None, ge=0)
    oom_score_adj: int | None = Field(default=None, ge=-1000, le=1000)


class CommandSandbox(Strict):
    """How the sandbox confines one command (sandbox-notes §2.5)."""

    namespace: NamespaceClass = "isolated"
    network: bool = False
    binds: list[str] = Field(default_factory=list)
    # Binds the command cannot work without: when the sandbox cannot give one (missing, or
    # unreadable by the run-as user) the call is refused with a reason, never run to an empty
    # success (apt without its package database lists nothing and exits 0).
    requires: list[str] = Field(default_factory=list)
    limits: LimitOverrides = Field(default_factory=LimitOverrides)


class Requirement(Strict):
    """At least one of ``any_of`` must be given, or the command would never end (ping -c)."""

    any_of: list[str]
    hint: str


class CommandPolicy(Strict):
    """What one command may be asked to do (contract §8.6; keys documented in docs/guard.md)."""

    subcommands: list[str] | None = None
    flags: dict[str, FlagKindName] = Field(default_factory=dict)
    positionals: PositionalKind = "any"
    positional_kinds: list[PositionalKind] = Field(default_factory=list)
    pattern_flags: list[str] = Field(default_factory=list)
    sub_positionals: dict[str, PositionalKind] = Field(default_factory=dict)
    sub_flags: dict[str, dict[str, FlagKindName]] = Field(default_factory=dict)
    sub_verbs: dict[str, list[str]] = Field(default_factory=dict)
    leading_flags: dict[str, FlagKindName] = Field(default_factory=dict)
    single_dash_long: bool = False
    numeric_flag: bool = False
    plus_flags: bool = False
    end_of_options: EndOfOptions = "getopt"
    max_positionals: int | None = Field(default=None, ge=0)
    file_ref_flags: list[str] = Field(default_factory=list)
    denied_values: dict[str, list[str]] = Field(default_factory=dict)
    allowed_values: dict[str, list[str]] = Field(default_factory=dict)
    never_ends: dict[str, str] = Field(default_factory=dict)
    sub_never_ends: dict[str, dict[str, str]] = Field(default_factory=dict)
    requires: list[Requirement] = Field(default_factory=list)
    sub_requires: dict[str, list[Requirement]] = Field(default_factory=dict)
    positional_prefix: str | None = None
    positional_chars: str | None = None
    sandbox: CommandSandbox = Field(default_factory=CommandSandbox)


class Secrets(Strict):
    env_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_ENV_PATTERNS))
    env_allow: list[str] = Field(default_factory=list)
    output_patterns: list[str] | None = None
    output_patterns_mode: Literal["extend", "replace"] = "extend"
    output_redaction_enabled: bool = False
    redaction_marker: str = "[REDACTED]"


class GuardSettings(Strict):
    allowed_commands: list[str] = Field(default_factory=list)
    allowed_paths: list[str] | None = None  # None → the server's cwd at start (filled by the loader)
    profile: str = "readonly"
    timeout_ms: int = Field(default=10000, ge=0)
    max_output_bytes: int = Field(default=102400, ge=0)
    max_stderr_bytes: int = Field(default=262144, ge=0)
    max_items: int = Field(default=500, ge=0)
    default_page_size: int = Field(default=100, ge=0)
    max_page_size: int = Field(default=1000, ge=1)
    max_concurrency: int = Field(default=4, ge=1)
    max_args: int = Field(default=32768, ge=1)  # arguments per call (guard/size.py)
    max_arg_bytes: int = Field(default=0, ge=0)  # 0 = ARG_MAX less the child environment
    block_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_BLOCK_PATTERNS))
    command_arg_restrictions: dict[str, ArgRestriction] = Field(default_factory=lambda: {
        cmd: ArgRestriction(blocked_flags=list(flags)) for cmd, flags in DEFAULT_ARG_RESTRICTIONS.items()})
    command_policies: dict[str, CommandPolicy] = Field(default_factory=dict)
    secrets: Secrets = Field(default_factory=Secrets)

    @field_validator("allowed_paths")
    @classmethod
    def _real_paths(cls, value: list[str] | None) -> list[str] | None:
        """An empty or NUL-containing entry can never name a directory: reject it here rather
        than let it silently match nothing."""
        for entry in value or []:
            if not entry.strip() or "\0" in entry:
                raise ValueError(f"not a usable path: {entry!r}")
        return value


class AuditSettings(Strict):
    enabled: bool = False
    path: str = "~/.parism/audit.jsonl"


class AdaptiveThresholds(Strict):
    json_: int = Field(default=0, ge=0, alias="json")
    compact: int = Field(default=50, ge=0)
    json_no_raw: int = Field(default=200, ge=0)

    model_config = ConfigDict(extra="forbid", validate_assignment=True, strict=True, populate_by_name=True)


class ExternalCapabilities(Strict):
    fs_read: list[list[str]] = Field(default_factory=list)  # [[host_path, guest_path], ...]
    env: list[list[str]] = Field(default_factory=list)  # [[name, value], ...]


class ParsersSettings(Strict):
    strict_schemas: bool = False
    adaptive_format_threshold: AdaptiveThresholds = Field(default_factory=AdaptiveThresholds)
    external_isolation: Literal["worker", "none"] = "worker"
    external_time_limit_ms: int = Field(default=500, ge=0)
    external_memory_limit_mb: int = Field(default=128, ge=0)
    external_capabilities: ExternalCapabilities = Field(default_factory=ExternalCapabilities)
    # parser packs (docs/parser-packs.md): directories holding one pack each, besides
    # ~/.parism/parsers; names of built-in parsers a pack may replace (global configuration only)
    pack_paths: list[str] = Field(default_factory=list)
    pack_overrides: list[str] = Field(default_factory=list)


class TelemetrySettings(Strict):
    enabled: bool = False


class SandboxLimits(Strict):
    """rlimits applied inside the sandbox (sandbox-notes §3.3).  0 means unlimited, except
    ``cpu_grace_s``: the CPU limit is the timeout plus this many seconds."""

    nproc: int = Field(default=64, ge=0)
    as_mb: int = Field(default=2048, ge=0)
    fsize_mb: int = Field(default=64, ge=0)
    cpu_grace_s: int = Field(default=5, ge=0)
    nofile: int = Field(default=1024, ge=0)
    core: int = Field(default=0, ge=0)
    oom_score_adj: int = Field(default=1000, ge=-1000, le=1000)


class SandboxSettings(Strict):
    mode: Literal["auto", "required", "off"] = "auto"
    bwrap_path: str = ""  # "" → find bwrap (prefer /usr/bin/bwrap)
    tmp_size_mb: int = Field(default=64, ge=1)
    writable_project: bool = False
    network: bool = True  # master switch: false takes the network from every command
    # Destinations refused by default (loopback, link-local/metadata, private…) that commands
    # with network may reach: CIDRs, addresses or host names, each optionally with :port.
    network_allow: list[str] = Field(default_factory=list)
    limits: SandboxLimits = Field(default_factory=SandboxLimits)

    @field_validator("network_allow")
    @classmethod
    def _allow_entries(cls, value: list[str]) -> list[str]:
        from parism.net.destinations import parse_rule  # lazy: the start-up path builds this model

        for entry in value:
            parse_rule(entry)
        return value


class ServerSettings(Strict):
    """The MCP server's own limits (the stdio reader: ``parism/server/stdio.py``)."""

    # A line longer than this is answered -32600 with its id and never held in memory.
    max_request_bytes: int = Field(default=16 * 1024 * 1024, ge=64 * 1024, le=1024 * 1024 * 1024)
class StoreSettings(Strict):
    """The in-memory result store of ``run(retain: true)`` (contract §13; ``parism/results/``)."""

    max_result_bytes: int = Field(default=2 * 1024 * 1024, ge=0)
    max_total_bytes: int = Field(default=32 * 1024 * 1024, ge=0)
    max_items: int = Field(default=16, ge=0)  # 0 = nothing is retained
    ttl_ms: int = Field(default=60_000, ge=0)


class Settings(Strict):
    guard: GuardSettings = Field(default_factory=GuardSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)
    parsers: ParsersSettings = Field(default_factory=ParsersSettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    trust_project_config: bool = False


class Profile(BaseModel):
    """A loaded profile file: its name, where it came from, its command policies and the raw
    ``[sandbox]`` table (kept raw so the sandbox can read keys this model does not know)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    path: str
    commands: dict[str, CommandPolicy] = Field(default_factory=dict)
    sandbox: dict[str, Any] = Field(default_factory=dict)
    guard: dict[str, Any] = Field(default_factory=dict)
