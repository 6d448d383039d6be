"""What an untrusted project layer may change: only tighten (spec decision 3, contract §9.2 [rec]).

A repository an agent was pointed at is not a trusted source: its ``parism.toml`` could otherwise
re-enable ``rm`` or empty ``block_patterns``.  Each key has one rule; a value that would widen
the guard is a ``ConfigProblem`` naming the file and the key (not silently dropped), so the
operator sees the attempt.  Keys without a rule are refused: new keys are unsafe until someone
decides otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from parism.config.layers import ConfigProblem, Leaves

Check = Callable[[Any, Any], str | None]


def _limit(value: int) -> int | float:
    """0 means unlimited for these limits, which compares as infinitely large."""
    return float("inf") if value == 0 else value


def _decrease(new: int, old: int) -> str | None:
    return None if _limit(new) <= _limit(old) else f"may only be lowered (0 = unlimited; now {old})"


def _decrease_min1(new: int, old: int) -> str | None:
    return None if new <= old else f"may only be lowered (below {old})"


def _increase(new: int, old: int) -> str | None:
    return None if new >= old else f"may only be raised (above {old})"


def _to_true(new: bool, old: bool) -> str | None:
    return None if new or not old else "may only be switched on"


def _to_false(new: bool, old: bool) -> str | None:
    return None if not new or old else "may only be switched off"


def _subset(new: list[str], old: list[str]) -> str | None:
    extra = sorted(set(new) - set(old))
    return f"may not add {', '.join(extra)}" if extra else None


def _superset(new: list[str], old: list[str]) -> str | None:
    missing = sorted(set(old) - set(new))
    return f"may not remove {', '.join(missing)}" if missing else None


def _inside(path: str, roots: list[str]) -> bool:
    return any(os.path.commonpath([path, r]) == r for r in roots)


def _paths(new: list[str], old: list[str]) -> str | None:
    if not old:
        return None  # lower layer is unrestricted: any list narrows it
    if not new:
        return "may not be emptied (that removes the path restriction)"
    outside = [p for p in new if not _inside(os.path.realpath(p), [os.path.realpath(o) for o in old])]
    return f"may not add paths outside the allowed ones: {', '.join(outside)}" if outside else None


def _restrictions(new: dict[str, Any], old: dict[str, Any]) -> str | None:
    for cmd, entry in old.items():
        lost = set(entry.get("blocked_flags", [])) - set(new.get(cmd, entry).get("blocked_flags", []))
        if lost:
            return f"may not unblock {', '.join(sorted(lost))} for {cmd}"
    return None


def _order(*ranks: str) -> Check:
    def check(new: str, old: str) -> str | None:
        ok = ranks.index(new) >= ranks.index(old) if new in ranks and old in ranks else new == old
        return None if ok else f"may only become stricter ({' < '.join(ranks)})"
    return check


def _any(new: Any, old: Any) -> str | None:
    return None


def _patterns(new: list[str], old: list[str] | None) -> str | None:
    """Extra patterns only add masking; ``[]`` turns output redaction off."""
    if new == [] and old != []:
        return "may not turn output redaction off (output_patterns = [])"
    return None


def _never(new: Any, old: Any) -> str | None:
    return None if new == old else "may only be set by the global configuration"


def _profile(new: str, old: str) -> str | None:
    if new == old or new == "readonly":
        return None
    return "may only switch to the shipped 'readonly' profile (the project never chooses the profile file)"


RULES: dict[str, Check] = {
    "guard.allowed_commands": _subset,
    "guard.allowed_paths": _paths,
    "guard.profile": _profile,
    "guard.timeout_ms": _decrease,
    "guard.max_timeout_ms": _decrease_min1,
    "guard.max_stdin_bytes": _decrease_min1,
    "guard.max_output_bytes": _decrease,
    "guard.max_stderr_bytes": _decrease,
    "guard.max_items": _decrease,
    "guard.default_page_size": _any,
    "guard.max_page_size": _decrease_min1,
    "guard.max_concurrency": _decrease_min1,
    "guard.max_args": _decrease_min1,
    "guard.max_arg_bytes": _decrease,
    "guard.block_patterns": _superset,
    "guard.command_arg_restrictions": _restrictions,
    "guard.command_policies": _never,
    "guard.secrets.env_patterns": _superset,
    "guard.secrets.env_allow": _subset,
    "guard.secrets.output_patterns": _patterns,
    "guard.secrets.output_patterns_mode": _order("replace", "extend"),
    "guard.secrets.output_redaction_enabled": _to_true,
    "guard.secrets.redaction_marker": _any,
    "audit.enabled": _to_true,
    "audit.path": _never,
    "parsers.strict_schemas": _to_true,
    "parsers.adaptive_format_threshold.json": _any,
    "parsers.adaptive_format_threshold.compact": _any,
    "parsers.adaptive_format_threshold.json_no_raw": _any,
    "parsers.external_isolation": _order("none", "worker"),
    "parsers.external_time_limit_ms": _decrease,
    "parsers.external_memory_limit_mb": _decrease,
    "parsers.external_capabilities.fs_read": _never,
    "parsers.external_capabilities.env": _never,
    "parsers.pack_paths": _subset,
    "parsers.pack_overrides": _subset,
    "telemetry.enabled": _any,
    "sandbox.mode": _order("off", "auto", "required"),
    "sandbox.bwrap_path": _never,
    "sandbox.tmp_size_mb": _decrease_min1,
    "sandbox.writable_project": _to_false,
    "sandbox.network": _to_false,
    "sandbox.network_allow": _subset,
    "sandbox.limits.nproc": _decrease,
    "sandbox.limits.as_mb": _decrease,
    "sandbox.limits.fsize_mb": _decrease,
    "sandbox.limits.cpu_grace_s": _decrease_min1,
    "sandbox.limits.nofile": _decrease,
    "sandbox.limits.core": _decrease_min1,
    "sandbox.limits.oom_score_adj": _increase,
    "server.max_request_bytes": _decrease,
    "server.max_jobs": _decrease,
    "server.job_output_bytes": _decrease_min1,
    "server.job_page_bytes": _decrease_min1,
    "server.max_queued": _decrease,
    "store.max_result_bytes": _decrease_min1,
    "store.max_total_bytes": _decrease_min1,
    "store.max_items": _decrease_min1,
    "store.ttl_ms": _decrease_min1,
    "trust_project_config": _never,
}


# Even a trusted project never chooses the profile file or trusts itself.
ALWAYS_CHECKED = ("guard.profile", "trust_project_config")


def widening(leaves: Leaves, current: dict[str, Any], source: str, trusted: bool = False) -> list[ConfigProblem]:
    """Problems for every leaf of a project layer that would widen ``current``."""
    problems = []
    for key, new in leaves.items():
        if trusted and key not in ALWAYS_CHECKED:
            continue
        rule = RULES.get(key, _never)
        message = rule(new, current.get(key))
        if message:
            who = "project configuration" if trusted else "untrusted project configuration"
            problems.append(ConfigProblem(source, key, f"{who} {message}"))
    return problems
