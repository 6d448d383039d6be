"""Loading a profile file (``profiles/<name>.toml``): the whole policy of a profile.

A profile has ``[guard]`` and ``[sandbox]`` defaults (validated like any settings layer) and
``[commands.<name>]`` policies.  ``extends = "readonly"`` starts from another shipped profile:
a command table in the extending file is deep-merged over the base's (tables merge key by key,
lists and scalars replace), so ``build`` restates only what it changes.
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Any

from pydantic import ValidationError

from parism.wire.clip import clip
from parism.config.bounds import COMMANDS, NAME_CHARS
from parism.config.layers import ConfigProblem, error_location, read_document
from parism.config.model import CommandPolicy, Profile

SHIPPED = ("readonly", "build")
_TOP_KEYS = {"description", "extends", "guard", "sandbox", "commands"}


def profile_path(name: str) -> str:
    """A shipped profile's file (package data), or ``name`` itself taken as a path."""
    if name in SHIPPED:
        return str(resources.files("parism").joinpath("profiles", f"{name}.toml"))
    return os.path.abspath(os.path.expanduser(name))


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _read_raw(name: str, seen: tuple[str, ...]) -> tuple[dict[str, Any], list[ConfigProblem]]:
    path = profile_path(name)
    doc, problems = read_document(path)
    if problems:
        return {}, problems
    if doc is None:
        return {}, [ConfigProblem(path, "guard.profile", f"profile file not found (profile {name!r})")]
    for key in doc:
        if key not in _TOP_KEYS:
            problems.append(ConfigProblem(path, key, "unknown key in profile"))
    base = doc.get("extends")
    if base is None:
        return doc, problems
    if base not in SHIPPED or base in seen:
        return doc, problems + [ConfigProblem(path, "extends", f"must name another shipped profile, got {base!r}")]
    base_doc, base_problems = _read_raw(base, seen + (base,))
    merged = _deep_merge(base_doc, {k: v for k, v in doc.items() if k != "extends"})
    return merged, problems + base_problems


def load_profile(name: str) -> tuple[Profile, list[ConfigProblem]]:
    """Read and validate a profile; an unreadable one gives an empty profile (nothing allowed)."""
    path = profile_path(name)
    doc, problems = _read_raw(name, (name,))
    label = os.path.basename(path) if name in SHIPPED else path
    commands: dict[str, CommandPolicy] = {}
    raw_commands = doc.get("commands", {})
    if not isinstance(raw_commands, dict):
        problems.append(ConfigProblem(path, "commands", "must be a table"))
        raw_commands = {}
    if len(raw_commands) > COMMANDS:
        problems.append(ConfigProblem(path, "commands", f"at most {COMMANDS} commands, got {len(raw_commands)}"))
        raw_commands = {}
    for cmd, table in raw_commands.items():
        if len(cmd) > NAME_CHARS:
            problems.append(ConfigProblem(path, f"commands.{clip(cmd, 64)}",
                                          f"a command name has at most {NAME_CHARS} characters"))
            continue
        try:
            commands[cmd] = CommandPolicy.model_validate(table)
        except ValidationError as exc:
            for err in exc.errors()[:5]:
                loc = error_location(err["loc"])
                problems.append(ConfigProblem(path, f"commands.{cmd}.{loc}".rstrip("."), err["msg"]))
    guard = doc.get("guard", {})
    sandbox = doc.get("sandbox", {})
    profile = Profile(
        name=name if name in SHIPPED else os.path.splitext(os.path.basename(path))[0],
        path=label,
        commands=commands,
        guard=guard if isinstance(guard, dict) else {},
        sandbox=sandbox if isinstance(sandbox, dict) else {},
    )
    return profile, problems
