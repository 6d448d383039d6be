"""Configuration: profile → global → project → ``PARISM_*`` environment (spec decisions 2, 3, 12).

``load_config`` never raises.  Every invalid value becomes a ``ConfigProblem`` in
``LoadedConfig.errors`` (the engine then answers ``config/invalid_config`` for every tool but
``describe``); the settings still hold the valid values, so ``describe`` can show them.

Layers, later overriding earlier per dotted key:

1. code defaults (origin ``default``)
2. the profile file's ``[guard]`` / ``[sandbox]`` tables (``profile:<file>``)
3. global ``~/.parism/prism.config.json`` then ``~/.parism/config.toml`` (``global:<file>``)
4. project ``<cwd>/prism.config.json`` then ``<cwd>/parism.toml`` (``project:<file>``) — may only
   tighten unless the global layer sets ``trust_project_config = true``
5. ``PARISM_*`` variables (``env:PARISM_X``)

An explicit file (``config_path`` or ``PARISM_CONFIG``) replaces layers 3 and 4 and is trusted.
The profile file is chosen by the global/explicit layer or ``PARISM_PROFILE``; a project may
only switch to the shipped ``readonly`` profile.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from parism.config.workspace import AccessCheck, read_project_file
from parism.config.layers import (
    error_location,
    ConfigProblem,
    Leaves,
    env_layers,
    flatten,
    leaf_keys,
    migrate_legacy,
    parse_document,
    read_document,
    resolve_paths,
)
from parism.config.model import (
    CommandPolicy,
    GuardSettings,
    Profile,
    SandboxSettings,
    Settings,
)
from parism.config.profiles import load_profile
from parism.config.trust import widening

__all__ = ["CommandPolicy", "ConfigProblem", "LoadedConfig", "Profile", "Settings", "load_config"]


@dataclass
class LoadedConfig:
    """The effective configuration and its provenance."""

    settings: Settings
    profile: Profile
    origins: dict[str, str]
    errors: list[ConfigProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cwd: str = ""  # the server's working directory at load time (default cwd of every call)
    files: list[str] = field(default_factory=list)  # configuration files actually read

    @property
    def ok(self) -> bool:
        return not self.errors

    def policy(self, cmd: str) -> CommandPolicy | None:
        """The command's policy: ``guard.command_policies`` replaces the profile's entry."""
        return self.settings.guard.command_policies.get(cmd) or self.profile.commands.get(cmd)

    def effective(self) -> dict[str, dict[str, Any]]:
        """Dotted key → ``{value, origin}`` for ``parism config``."""
        flat = _flat_values(self.settings)
        return {key: {"value": flat[key], "origin": self.origins.get(key, "default")} for key in flat}

    def error_message(self) -> str:
        """One line naming every problem (file and key), for ``failure.message``."""
        return "invalid configuration: " + "; ".join(str(p) for p in self.errors)


def _flat_values(settings: Settings) -> dict[str, Any]:
    data = settings.model_dump(by_alias=True)
    out = {}
    for key in leaf_keys():
        node: Any = data
        for part in key.split("."):
            node = node[part]
        out[key] = node
    return out


_MERGED_PER_ENTRY = {"guard.command_arg_restrictions", "guard.command_policies"}


class _Stack:
    """Applies layers in order, remembering which layer set each key."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = _flat_values(Settings())
        self.origins: dict[str, str] = {key: "default" for key in self.values}
        self.floor: dict[str, Any] = dict(self.values)  # what a key refused late falls back to

    def apply(self, leaves: Leaves, origin: str) -> None:
        for key, value in leaves.items():
            if key in _MERGED_PER_ENTRY and isinstance(self.values.get(key), dict):
                value = {**self.values[key], **value}
            self.values[key] = value
            self.origins[key] = origin

    def settings(self) -> tuple[Settings, list[ConfigProblem]]:
        """The validated settings, and a problem for each value that is valid in its layer but
        not once merged or resolved (a table merged past its bound, a relative path made longer
        than PATH_MAX by its base): that key falls back to its default, the loader never raises."""
        problems: list[ConfigProblem] = []
        defaults = self.floor
        for _ in range(len(self.values) + 1):
            try:
                return Settings.model_validate(self._tree()), problems
            except ValidationError as exc:
                bad: set[str] = set()
                for err in exc.errors():
                    loc = [str(x) for x in err["loc"]]
                    key = next((".".join(loc[:n]) for n in range(len(loc), 0, -1) if ".".join(loc[:n]) in self.values),
                               None)
                    if key is None or key in bad:
                        continue
                    bad.add(key)
                    rest = error_location(loc[len(key.split(".")):])
                    problems.append(ConfigProblem(self.origins.get(key, "default"), key,
                                                  f"{rest}: {err['msg']}" if rest else err["msg"]))
                if not bad:
                    raise
                for key in bad:
                    self.values[key] = defaults.get(key)
                    self.origins[key] = "default"
        raise AssertionError("unreachable: each round resets at least one key")

    def _tree(self) -> dict[str, Any]:
        tree: dict[str, Any] = {}
        for key, value in self.values.items():
            node = tree
            *parents, leaf = key.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = value
        return tree


def _file_layer(path: str, origin_kind: str, warnings: list[str], cwd: str | None = None,
                access: AccessCheck | None = None) -> tuple[str, Leaves, list[ConfigProblem]] | None:
    """One file's layer; ``cwd``: a project file, read only as that directory's calls could
    (``config/workspace.py``)."""
    if cwd is None:
        doc, problems = read_document(path)
    else:
        data, why = read_project_file(path, cwd, access)
        doc, problems = (None, [ConfigProblem(path, "", why)]) if why else \
            parse_document(path, data) if data is not None else (None, [])
    if doc is None and not problems:
        return None
    origin = f"{origin_kind}:{path}"
    if doc is None:
        return origin, {}, problems
    migrate_legacy(doc, path, warnings)
    leaves, more = flatten(doc, path)
    resolve_paths(leaves, os.path.dirname(path))
    return origin, leaves, problems + more


def _profile_layer(profile: Profile, cwd: str) -> tuple[Leaves, list[ConfigProblem]]:
    leaves: Leaves = {}
    problems: list[ConfigProblem] = []
    for table, model in (("guard", GuardSettings), ("sandbox", SandboxSettings)):
        raw = getattr(profile, table)
        if "profile" in raw and table == "guard":
            problems.append(ConfigProblem(profile.path, "guard.profile", "a profile cannot select a profile"))
            raw = {k: v for k, v in raw.items() if k != "profile"}
        got, more = flatten(raw, profile.path, model, f"{table}.")
        resolve_paths(got, os.path.dirname(profile.path) if os.path.isabs(profile.path) else cwd)
        leaves.update(got)
        problems.extend(more)
    return leaves, problems


FileLayer = tuple[str, Leaves, list[ConfigProblem], bool]  # origin, leaves, problems, trusted


def _choose_profile(file_layers: list[FileLayer],
                    envs: list[tuple[str, Leaves, list[ConfigProblem]]]) -> tuple[str, str]:
    """(profile name or file, origin).  Chosen before stacking, because the profile is the base:
    by the global/explicit file, then ``PARISM_PROFILE``; a project may only step down to
    ``readonly``."""
    name, origin = "readonly", "default"
    candidates = [(o, leaves) for o, leaves, _, _ in file_layers if not o.startswith("project:")]
    for source, leaves in candidates + [(o, leaves) for o, leaves, _ in envs]:
        if "guard.profile" in leaves:
            name, origin = leaves["guard.profile"], source
    for source, leaves, _, _ in file_layers:
        if source.startswith("project:") and leaves.get("guard.profile") == "readonly":
            name, origin = "readonly", source
    return name, origin


def load_config(config_path: str | None = None, *, cwd: str | None = None,
                environ: Mapping[str, str] | None = None, project_access: AccessCheck | None = None) -> LoadedConfig:
    """Load and validate every layer; never raises (problems are in ``.errors``).

    ``project_access``: whether the calls in the start directory could read a project file
    (``run/sandbox/identity.readable_by_calls``; the project file is read only then). Without
    it a project file is still read only if it is a regular file outside ``/proc``."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    warnings: list[str] = []
    try:
        server_cwd = os.path.abspath(cwd or os.getcwd())
    except OSError as exc:  # the start directory was removed
        server_cwd = home
        warnings.append(f"cannot read the working directory ({exc.strerror}); using {home}")
    errors: list[ConfigProblem] = []
    explicit = config_path or env.get("PARISM_CONFIG") or None

    file_layers: list[FileLayer] = []
    if explicit:
        layer = _file_layer(os.path.abspath(os.path.expanduser(explicit)), "explicit", warnings)
        if layer is None:
            errors.append(ConfigProblem(explicit, "", "configuration file not found"))
        else:
            file_layers.append((*layer, True))
    else:
        for name in ("prism.config.json", "config.toml"):
            layer = _file_layer(os.path.join(home, ".parism", name), "global", warnings)
            if layer:
                file_layers.append((*layer, True))
        trusted = any(leaves.get("trust_project_config") for _, leaves, _, _ in file_layers)
        for name in ("prism.config.json", "parism.toml"):
            layer = _file_layer(os.path.join(server_cwd, name), "project", warnings, server_cwd, project_access)
            if layer:
                file_layers.append((*layer, trusted))
    envs = env_layers(env, server_cwd)

    profile_name, profile_from = _choose_profile(file_layers, envs)
    profile, problems = load_profile(profile_name)
    errors.extend(problems)

    stack = _Stack()
    stack.values["guard.allowed_paths"] = [server_cwd]
    stack.floor["guard.allowed_paths"] = [server_cwd]
    profile_origin = f"profile:{profile.path}"
    leaves, problems = _profile_layer(profile, server_cwd)
    errors.extend(problems)
    stack.apply(leaves, profile_origin)
    for origin, leaves, problems, trusted in file_layers:
        errors.extend(problems)
        if origin.startswith("project:"):
            bad = widening(leaves, stack.values, origin.split(":", 1)[1], trusted)
            errors.extend(bad)
            leaves = {k: v for k, v in leaves.items() if not any(p.key == k for p in bad)}
            leaves.pop("trust_project_config", None)
        stack.apply(leaves, origin)
    for origin, leaves, problems in envs:
        errors.extend(problems)
        stack.apply(leaves, origin)
    stack.values["guard.profile"] = profile_name
    stack.origins["guard.profile"] = profile_from

    settings, late = stack.settings()
    errors.extend(late)
    if settings.guard.allowed_paths == []:
        warnings.append(
            "WARNING: guard.allowed_paths is [] — path checks are OFF: commands may read any path "
            f"the server can read (set by {stack.origins['guard.allowed_paths']})"
        )
    for p in settings.guard.allowed_paths or []:
        if not os.path.isdir(p):
            warnings.append(f"guard.allowed_paths entry {p} is not an existing directory")
    return LoadedConfig(
        settings=settings,
        profile=profile,
        origins=stack.origins,
        errors=errors,
        warnings=warnings,
        cwd=server_cwd,
        files=[o.split(":", 1)[1] for o, *_ in file_layers],
    )
