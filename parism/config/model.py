"""Typed configuration: the ``Settings`` tree, command policies and the loaded profile.

Every table forbids unknown keys (spec decision 2: a typo is an error naming the key, not a
silently ignored value).  Defaults here are the *code* defaults (origin ``default``); the shipped
profile files override most of them (origin ``profile:<file>``), so a profile is readable on its
own.  Key names are documented in docs/configuration.md.

No ``from __future__ import annotations``: pydantic would evaluate every annotation string when
it builds the classes, and ``parism serve`` builds them before it can answer ``tools/list``.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from parism.config.bounds import (COMMANDS, DAY_MS, GIB, ITEMS, MARKER_CHARS, MAX_ROWS, NAME_CHARS, PATH_CHARS,
                                  PATTERN_CHARS, PATTERNS, Destination, Name, PathText, Pattern, Text)

FlagKindName = Literal["bool", "value", "path", "data", "url", "number", "attached", "count"]
PositionalKind = Literal["path", "any", "none", "url", "data", "host", "dns"]
EndOfOptions = Literal["getopt", "first_operand", "find", "literal", "none"]  # argv/tokenize.py
NamespaceClass = Literal["isolated", "host_procs", "host_mounts", "host_net"]
Names = Annotated[list[Name], Field(max_length=ITEMS)]
Patterns = Annotated[list[Pattern], Field(max_length=ITEMS)]
Pair = Annotated[list[PathText], Field(max_length=2)]  # [host path, guest path] or [name, value]

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
    blocked_flags: list[Name] = Field(default_factory=list, max_length=ITEMS)


class LimitOverrides(Strict):
    """Per-command changes to ``[sandbox.limits]`` (e.g. ``as_mb = 0`` for a JVM-based tool)."""

    nproc: int | None = Field(default=None, ge=0, le=1 << 16)
    as_mb: int | None = Field(default=None, ge=0, le=1 << 20)
    fsize_mb: int | None = Field(default=None, ge=0, le=1 << 20)
    cpu_grace_s: int | None = Field(default=None, ge=0, le=86_400)
    nofile: int | None = Field(default=None, ge=0, le=1 << 20)
    core: int | None = Field(default=None, ge=0, le=1 << 20)
    oom_score_adj: int | None = Field(default=None, ge=-1000, le=1000)


class CommandSandbox(Strict):
    """How the sandbox confines one command (sandbox-notes §2.5)."""

    namespace: NamespaceClass = "isolated"
    network: bool = False
    binds: list[PathText] = Field(default_factory=list, max_length=ITEMS)
    # Binds the command cannot work without: when the sandbox cannot give one (missing, or
    # unreadable by the run-as user) the call is refused with a reason, never run to an empty
    # success (apt without its package database lists nothing and exits 0).
    requires: list[PathText] = Field(default_factory=list, max_length=ITEMS)
    limits: LimitOverrides = Field(default_factory=LimitOverrides)


class Requirement(Strict):
    """At least one of ``any_of`` must be given, or the command would never end (ping -c)."""

    any_of: list[Name] = Field(max_length=ITEMS)
    hint: Text


class CommandPolicy(Strict):
    """What one command may be asked to do (contract §8.6; keys documented in docs/guard.md)."""

    subcommands: list[Name] | None = Field(default=None, max_length=ITEMS)
    flags: dict[Name, FlagKindName] = Field(default_factory=dict, max_length=ITEMS)
    positionals: PositionalKind = "any"
    positional_kinds: list[PositionalKind] = Field(default_factory=list, max_length=ITEMS)
    pattern_flags: list[Name] = Field(default_factory=list, max_length=ITEMS)
    sub_positionals: dict[Name, PositionalKind] = Field(default_factory=dict, max_length=ITEMS)
    sub_flags: dict[Name, Annotated[dict[Name, FlagKindName], Field(max_length=ITEMS)]] = Field(
        default_factory=dict, max_length=ITEMS)
    sub_verbs: dict[Name, Names] = Field(default_factory=dict, max_length=ITEMS)
    leading_flags: dict[Name, FlagKindName] = Field(default_factory=dict, max_length=ITEMS)
    single_dash_long: bool = False
    numeric_flag: bool = False
    plus_flags: bool = False
    end_of_options: EndOfOptions = "getopt"
    max_positionals: int | None = Field(default=None, ge=0, le=1 << 20)
    file_ref_flags: list[Name] = Field(default_factory=list, max_length=ITEMS)
    denied_values: dict[Name, Patterns] = Field(default_factory=dict, max_length=ITEMS)
    allowed_values: dict[Name, Patterns] = Field(default_factory=dict, max_length=ITEMS)
    never_ends: dict[Name, Text] = Field(default_factory=dict, max_length=ITEMS)
    sub_never_ends: dict[Name, Annotated[dict[Name, Text], Field(max_length=ITEMS)]] = Field(
        default_factory=dict, max_length=ITEMS)
    requires: list[Requirement] = Field(default_factory=list, max_length=ITEMS)
    sub_requires: dict[Name, Annotated[list[Requirement], Field(max_length=ITEMS)]] = Field(
        default_factory=dict, max_length=ITEMS)
    positional_prefix: str | None = Field(default=None, max_length=NAME_CHARS)
    positional_chars: str | None = Field(default=None, max_length=PATTERN_CHARS)
    sandbox: CommandSandbox = Field(default_factory=CommandSandbox)


class Secrets(Strict):
    env_patterns: list[Name] = Field(default_factory=lambda: list(DEFAULT_ENV_PATTERNS), max_length=ITEMS)
    env_allow: list[Name] = Field(default_factory=list, max_length=ITEMS)
    output_patterns: list[Pattern] | None = Field(default=None, max_length=PATTERNS)
    output_patterns_mode: Literal["extend", "replace"] = "extend"
    output_redaction_enabled: bool = False
    redaction_marker: str = Field(default="[REDACTED]", max_length=MARKER_CHARS)


class GuardSettings(Strict):
    allowed_commands: list[Name] = Field(default_factory=list, max_length=COMMANDS)
    # None → the server's cwd at start (filled by the loader)
    allowed_paths: list[PathText] | None = Field(default=None, max_length=ITEMS)
    profile: str = Field(default="readonly", max_length=PATH_CHARS)
    timeout_ms: int = Field(default=10000, ge=0, le=DAY_MS)
    # the largest per-call timeout_ms (run, run_paged, job_start); the default above is clipped to it
    max_timeout_ms: int = Field(default=600_000, ge=1, le=DAY_MS)
    max_stdin_bytes: int = Field(default=1024 * 1024, ge=0, le=GIB)  # a call's stdin (UTF-8 bytes); 0 = none accepted
    max_output_bytes: int = Field(default=102400, ge=0, le=GIB)
    max_stderr_bytes: int = Field(default=262144, ge=0, le=GIB)
    max_items: int = Field(default=500, ge=0, le=MAX_ROWS)
    default_page_size: int = Field(default=100, ge=0, le=MAX_ROWS)
    max_page_size: int = Field(default=1000, ge=1, le=MAX_ROWS)
    max_concurrency: int = Field(default=4, ge=1, le=256)
    max_args: int = Field(default=32768, ge=1, le=1 << 20)  # arguments per call (guard/size.py)
    max_arg_bytes: int = Field(default=0, ge=0, le=GIB)  # 0 = ARG_MAX less the child environment
    block_patterns: list[Pattern] = Field(default_factory=lambda: list(DEFAULT_BLOCK_PATTERNS), max_length=ITEMS)
    command_arg_restrictions: dict[Name, ArgRestriction] = Field(default_factory=lambda: {
        cmd: ArgRestriction(blocked_flags=list(flags)) for cmd, flags in DEFAULT_ARG_RESTRICTIONS.items()},
        max_length=COMMANDS)
    command_policies: dict[Name, CommandPolicy] = Field(default_factory=dict, max_length=COMMANDS)
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
    path: str = Field(default="~/.parism/audit.jsonl", max_length=PATH_CHARS)


class AdaptiveThresholds(Strict):
    json_: int = Field(default=0, ge=0, le=MAX_ROWS, alias="json")
    compact: int = Field(default=50, ge=0, le=MAX_ROWS)
    json_no_raw: int = Field(default=200, ge=0, le=MAX_ROWS)

    model_config = ConfigDict(extra="forbid", validate_assignment=True, strict=True, populate_by_name=True)


class ExternalCapabilities(Strict):
    # [[host_path, guest_path], ...]
    fs_read: list[Pair] = Field(default_factory=list, max_length=ITEMS)
    env: list[Pair] = Field(default_factory=list, max_length=ITEMS)  # [[name, value], ...]


class ParsersSettings(Strict):
    strict_schemas: bool = False
    adaptive_format_threshold: AdaptiveThresholds = Field(default_factory=AdaptiveThresholds)
    external_isolation: Literal["worker", "none"] = "worker"
    external_time_limit_ms: int = Field(default=500, ge=0, le=600_000)
    external_memory_limit_mb: int = Field(default=128, ge=0, le=1 << 16)
    external_capabilities: ExternalCapabilities = Field(default_factory=ExternalCapabilities)
    # parser packs (docs/parser-packs.md): directories holding one pack each, besides
    # ~/.parism/parsers; names of built-in parsers a pack may replace (global configuration only)
    pack_paths: list[PathText] = Field(default_factory=list, max_length=ITEMS)
    pack_overrides: list[Name] = Field(default_factory=list, max_length=ITEMS)


class TelemetrySettings(Strict):
    enabled: bool = False


class SandboxLimits(Strict):
    """rlimits applied inside the sandbox (sandbox-notes §3.3).  0 means unlimited, except
    ``cpu_grace_s``: the CPU limit is the timeout plus this many seconds."""

    nproc: int = Field(default=64, ge=0, le=1 << 16)
    as_mb: int = Field(default=2048, ge=0, le=1 << 20)
    fsize_mb: int = Field(default=64, ge=0, le=1 << 20)
    cpu_grace_s: int = Field(default=5, ge=0, le=86_400)
    nofile: int = Field(default=1024, ge=0, le=1 << 20)
    core: int = Field(default=0, ge=0, le=1 << 20)
    oom_score_adj: int = Field(default=1000, ge=-1000, le=1000)


class SandboxSettings(Strict):
    mode: Literal["auto", "required", "off"] = "auto"
    bwrap_path: str = Field(default="", max_length=PATH_CHARS)  # "" → find bwrap (prefer /usr/bin/bwrap)
    tmp_size_mb: int = Field(default=64, ge=1, le=1 << 20)
    writable_project: bool = False
    network: bool = True  # master switch: false takes the network from every command
    # Destinations refused by default (loopback, link-local/metadata, private…) that commands
    # with network may reach: CIDRs, addresses or host names, each optionally with :port.
    network_allow: list[Destination] = Field(default_factory=list, max_length=ITEMS)
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
    # jobs (docs/jobs.md): running at once (0 = no jobs); each one's output ring; a job_output page
    max_jobs: int = Field(default=4, ge=0, le=64)
    job_output_bytes: int = Field(default=1024 * 1024, ge=64 * 1024, le=64 * 1024 * 1024)
    job_page_bytes: int = Field(default=64 * 1024, ge=1024, le=1024 * 1024)

    # Calls that execute (run, run_paged) waiting for one of guard.max_concurrency slots; one
    # more is refused as a tool error (parism/server/admission.py). A waiting call holds no thread.
    max_queued: int = Field(default=1000, ge=0, le=1_000_000)
class StoreSettings(Strict):
    """The in-memory result store of ``run(retain: true)`` (contract §13; ``parism/results/``)."""

    max_result_bytes: int = Field(default=2 * 1024 * 1024, ge=0, le=GIB)
    max_total_bytes: int = Field(default=32 * 1024 * 1024, ge=0, le=4 * GIB)
    max_items: int = Field(default=16, ge=0, le=100_000)  # 0 = nothing is retained
    ttl_ms: int = Field(default=900_000, ge=0, le=DAY_MS)  # idle time, renewed by every read


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
