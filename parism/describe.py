"""``describe``: the environment (no ``cmd``), or one command in under 2 KB (contract §4.2).

Why a budget: an agent calls ``describe(cmd)`` to learn what it may ask for; the answer must fit
in a small share of its context. Name lists are space-joined strings, empty keys are dropped, and
if the answer is still too long the least useful parts are removed in a fixed order (the removed
keys are named in ``policy.omitted``). Examples and alternatives are filtered through the live
guard so an agent is never shown a call that would be refused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from parism.wire.clip import clip
from parism.wire.envelope import DescribeResult, Failure
from parism.parsers import registry
from parism.parsers.contract import Parser

MAX_BYTES = 2048
MAX_EXAMPLES = 5

# out-of-range argument samples whose contract hints become ``alternatives`` (contract §4.2)
ALTERNATIVE_SAMPLES: dict[str, list[list[str]]] = {
    # argument forms agents type that a parser does not read; their hints are the alternatives
    "df": [["-hi"]], "journalctl": [["-o", "verbose"]], "systemctl": [["status", "ssh"]],
    "git": [["log", "--graph"], ["diff", "--dirstat"]], "kubectl": [["get", "deployments"]],
    "docker": [["ps", "--format", "{{.Names}}"]], "gh": [["pr", "view", "1"]], "npm": [["ls", "--parseable"]],
    "stat": [["-c", "%10s", "file"]], "helm": [["list", "-o", "yaml"]], "curl": [["-s", "https://example.com"]],
    "ls": [["-C"]], "tail": [["-f", "app.log"]],
}

Allowed = Callable[[str, list[str]], bool]  # does this call pass the live guard?


def _joined(names: Any) -> str:
    return " ".join(str(n) for n in names)


def policy_summary(cmd: str, cfg: Any) -> dict[str, Any]:
    """The command's guard policy, compact (``origin``: default | build | config | none)."""
    guard = cfg.settings.guard
    policy = cfg.policy(cmd)
    if cmd in guard.command_policies:
        origin = "config"
    elif policy is not None:
        origin = "default" if cfg.profile.name == "readonly" else cfg.profile.name
    else:
        return {"origin": "none"}
    out: dict[str, Any] = {
        "origin": origin,
        "subcommands": _joined(policy.subcommands) if policy.subcommands is not None else None,
        "flags": _joined(policy.flags),
        "positionals": policy.positionals,
        "sub_positionals": dict(policy.sub_positionals),
        "sub_flags": {k: _joined(v) for k, v in policy.sub_flags.items()},
        "sub_verbs": {k: _joined(v) for k, v in policy.sub_verbs.items()},
        "leading_flags": _joined(policy.leading_flags),
        "allowed_values": {k: list(v) for k, v in policy.allowed_values.items()},
        "file_ref_flags": _joined(policy.file_ref_flags),
        "max_positionals": policy.max_positionals,
        "network": policy.sandbox.network or None,
    }
    restriction = guard.command_arg_restrictions.get(cmd)
    if restriction is not None and restriction.blocked_flags:
        out["blocked_flags"] = _joined(restriction.blocked_flags)
    return {k: v for k, v in out.items() if v not in (None, "", {}, [])}


def parser_summary(parser: Parser, guard_flags: set[str] | None) -> dict[str, Any]:
    """Contract summary + rows; flags the guard would refuse are not advertised."""
    out = registry.contract_summary(parser.contract)
    if guard_flags is not None and "flags" in out:
        out["flags"] = _joined(f for f in out["flags"].split() if f in guard_flags)
    if parser.leading_flags:
        out["leading_flags"] = _joined(parser.leading_flags)
    if parser.subcommands:
        out["subcommands"] = _joined(k for k in parser.subcommands if k)
    if parser.rows_key:
        out["rows_key"] = parser.rows_key
    if parser.row_fields:
        out["row_fields"] = _joined(parser.row_fields)
    out["evidence"] = evidence_summary(parser)
    return {k: v for k, v in out.items() if v not in ("", None)}


def evidence_summary(parser: Parser) -> str | None:
    """Which forms of this command give ``evidence`` spans (``explain_result``): the parser
    itself, or the subcommands whose parsers do."""
    if parser.evidence:
        return "rows fields"
    subs = [k for k, sub in parser.subcommands.items() if k and sub.evidence]
    return f"rows fields (subcommands: {_joined(subs)})" if subs else None


def _guard_flags(cfg: Any, cmd: str) -> set[str] | None:
    policy = cfg.policy(cmd)
    if policy is None:
        return None
    names = set(policy.flags) | set(policy.leading_flags)
    for flags in policy.sub_flags.values():
        names |= set(flags)
    return names


def _examples(parser: Parser) -> list[list[str]]:
    seen: list[list[str]] = [list(e) for e in parser.examples]
    for key, sub in parser.subcommands.items():
        seen.extend(key.split() + list(e) for e in sub.examples)
    return seen


def _alternatives(cmd: str, os_name: str, allowed: Allowed,
                  packs: registry.PackParsers | None = None) -> list[dict[str, Any]]:
    out = []
    for sample in ALTERNATIVE_SAMPLES.get(cmd, []):
        try:
            outcome = registry.parse(cmd, sample, "", os_name, packs=packs)
        except Exception:  # noqa: BLE001
            continue
        err = outcome.parse_error
        if err is not None and err.hint is not None and allowed(cmd, err.hint.args):
            out.append({"from": sample, "args": err.hint.args, "reason": err.message})
    return out


# (section, key) removed in this order while the answer is over budget
_SHED: tuple[tuple[str, str], ...] = (
    ("parser", "values"), ("policy", "allowed_values"), ("policy", "sub_verbs"),
    ("policy", "sub_flags"), ("parser", "exclusive"), ("parser", "requires"),
    ("policy", "sub_positionals"), ("parser", "flags"), ("policy", "flags"),
)


def describe_command(cmd: str, cfg: Any, os_name: str, allowed: Allowed,
                     stats: CallStats | None = None, packs: registry.PackParsers | None = None) -> DescribeResult:
    """One command's rules.  A command the profile or a parser knows is described even when it
    is not allowed (with the refusal in ``failure``): an agent learns what enabling it would
    give; then ``examples`` and ``alternatives`` are those the command's own policy admits."""
    version = _version()
    is_allowed = cmd in cfg.settings.guard.allowed_commands
    refusal = None if is_allowed else Failure(
        kind="guard", reason="command_not_allowed", message=f"Command '{clip(cmd)}' is not in the allowed list",
        hint="guard.allowed_commands decides which commands run (describe() lists them)")
    try:
        parser = registry.get_parser(cmd)
    except Exception:  # noqa: BLE001 — a broken parser module must not break describe
        parser = None
    if not is_allowed and parser is None and cfg.policy(cmd) is None:
        return DescribeResult(version=version, cmd=clip(cmd), failure=refusal)
    admits = allowed if is_allowed else lambda _c, _a: True  # nothing passes the live guard
    result = DescribeResult(
        version=version, cmd=cmd, profile=cfg.profile.name, policy=policy_summary(cmd, cfg),
        parser=parser_summary(parser, _guard_flags(cfg, cmd)) if parser else None,
        alternatives=_alternatives(cmd, os_name, admits, packs) if parser else [],
        examples=[e for e in _examples(parser) if admits(cmd, e)][:MAX_EXAMPLES] if parser else [],
        stats=stats.of(cmd) if stats is not None else None,
        failure=refusal,
    )
    return fit(result)


class CallStats:
    """Per-command call statistics for ``describe`` when ``telemetry.enabled`` (kept in memory,
    never sent anywhere).  Only allowed commands get a row: a refused name is caller input."""

    def __init__(self, allowed: list[str]) -> None:
        self._allowed = frozenset(allowed)
        self._rows: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def record(self, cmd: str, decision: str, reason: str | None, exit_code: int | None, duration_ms: int) -> None:
        """One call: ``failed`` when it ran and exited non-zero, or could not run at all (a
        missing parser is not a failure of the command)."""
        key = cmd if cmd in self._allowed else "(not allowed)"
        with self._lock:
            row = self._rows.setdefault(key, {"calls": 0, "blocked": 0, "failed": 0, "total_ms": 0, "max_ms": 0})
            row["calls"] += 1
            row["blocked"] += decision == "blocked"
            row["failed"] += decision != "blocked" and (exit_code not in (0, None) or
                                                        (exit_code is None and reason is not None))
            row["total_ms"] += duration_ms
            row["max_ms"] = max(row["max_ms"], duration_ms)

    def of(self, cmd: str) -> dict[str, Any]:
        with self._lock:
            row = dict(self._rows.get(cmd, {"calls": 0}))
        if row["calls"]:
            row["mean_ms"] = round(row.pop("total_ms") / row["calls"], 1)
        return row

    def all(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            names = sorted(self._rows)
        return {name: self.of(name) for name in names}


def describe_host(cfg: Any, *, os_name: str, sandbox: dict[str, Any], regex: Any,
                  env: dict[str, Any], errors: list[str], stats: CallStats | None = None,
                  packs: list[dict[str, Any]] | None = None,
                  pack_parsers: registry.PackParsers | None = None,
                  memory: dict[str, Any] | None = None) -> DescribeResult:
    """The environment: what may run, with which limits, under which confinement. ``packs``:
    the engine's packs as ``describe`` lists them; ``pack_parsers``: the same table, whose names
    join the built-in parsers in ``available_parsers``; ``memory``: ``max_concurrency`` against
    the memory limit (``parism.run.memlimit.Budget.report``)."""
    guard = cfg.settings.guard
    return DescribeResult(
        version=_version(), profile=cfg.profile.name,
        allowed_commands=list(guard.allowed_commands),
        available_parsers=registry.available(pack_parsers), packs=packs or [],
        guard_summary={
            "block_patterns": list(guard.block_patterns), "allowed_paths": guard.allowed_paths or [],
            "timeout_ms": guard.timeout_ms, "max_timeout_ms": guard.max_timeout_ms,
            "max_stdin_bytes": guard.max_stdin_bytes,
            "max_output_bytes": guard.max_output_bytes,
            "max_items": guard.max_items, "max_concurrency": guard.max_concurrency,
            "default_page_size": guard.default_page_size, "max_page_size": guard.max_page_size,
            "command_arg_restrictions": {k: v.blocked_flags for k, v in guard.command_arg_restrictions.items()},
            **({"memory": memory} if memory is not None else {}),
        },
        tools=list(TOOLS), result_store={
            **cfg.settings.store.model_dump(),
            "ttl": f"a retained result is kept {cfg.settings.store.ttl_ms} ms after its last read; each "
                   "fetch_result, explain_result or compare_results that reads it renews that time"},
        telemetry_enabled=cfg.settings.telemetry.enabled, stats=stats.all() if stats is not None else None,
        host_os=os_name, sandbox=sandbox,
        regex_engine=regex, env=env,
        config={"errors": errors, "warnings": list(cfg.warnings), "files": list(cfg.files)},
    )


#: every MCP tool, in the order an agent uses them (the server registers the same names)
TOOLS = ("describe", "dry_run", "run", "run_paged", "fetch_result", "explain_result", "compare_results",
         "job_start", "job_status", "job_output", "job_stop")


def fit(result: DescribeResult) -> DescribeResult:
    """Shed detail until the serialised answer is under ``MAX_BYTES``."""
    shed: list[str] = []
    for section, key in _SHED:
        if len(result.to_json().encode()) <= MAX_BYTES:
            break
        part = getattr(result, section)
        if part and key in part:
            part.pop(key)
            shed.append(f"{section}.{key}")
            if result.policy is not None:
                result.policy["omitted"] = _joined(shed)
    while len(result.to_json().encode()) > MAX_BYTES and (result.alternatives or result.examples):
        if result.alternatives:
            result.alternatives.pop()
        elif result.examples:
            result.examples.pop()
    return result


def _version() -> str:
    from parism import __version__

    return __version__
