"""Reading one configuration layer into validated leaves.

A layer (a TOML/JSON file, the profile's tables, the environment) becomes a flat map of dotted
key → value, each leaf validated on its own against the ``Settings`` model.  Working on leaves
keeps every error precise (file + dotted key) and lets the loader record, per key, which layer
the effective value came from.  Nothing here raises: every problem is returned as a value.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from parism.wire.clip import clip
from parism.config.model import Settings, Strict

Leaves = dict[str, Any]


@dataclass(frozen=True)
class ConfigProblem:
    """One invalid value: which file (or ``env:NAME``), which dotted key, what is wrong."""

    file: str
    key: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.key}" if self.key else self.file
        return f"{where}: {self.message}"


def read_document(path: str) -> tuple[dict[str, Any] | None, list[ConfigProblem]]:
    """Parse a ``.toml`` or ``.json`` file; a missing file is ``(None, [])``."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None, []
    except OSError as exc:
        return None, [ConfigProblem(path, "", f"cannot read: {exc.strerror or exc}")]
    return parse_document(path, data)


def parse_document(path: str, data: bytes) -> tuple[dict[str, Any] | None, list[ConfigProblem]]:
    """The table of a ``.toml`` or ``.json`` file's content ``data``."""
    try:
        if path.endswith(".json"):
            doc = json.loads(data.decode("utf-8"))
        else:
            doc = tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        last_line = max(1, len(data.splitlines()))
        where = "" if "line" in str(exc) else f" (line {last_line})"
        return None, [ConfigProblem(path, "", f"invalid TOML: {exc}{where}")]
    except json.JSONDecodeError as exc:
        return None, [ConfigProblem(path, "", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")]
    except UnicodeDecodeError:
        return None, [ConfigProblem(path, "", "file is not valid UTF-8")]
    if not isinstance(doc, dict):
        return None, [ConfigProblem(path, "", "top level must be a table/object")]
    return doc, []


def _fields(model: type[BaseModel]) -> dict[str, tuple[str, Any]]:
    """Wire name (alias or name) → (attribute name, annotation)."""
    return {(f.alias or name): (name, f.annotation) for name, f in model.model_fields.items()}


def _submodel(annotation: Any) -> type[Strict] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, Strict) else None


def leaf_keys(model: type[BaseModel] = Settings, prefix: str = "") -> list[str]:
    """Every dotted leaf key of the settings tree, in declaration order."""
    keys: list[str] = []
    for wire, (_, ann) in _fields(model).items():
        sub = _submodel(ann)
        keys.extend(leaf_keys(sub, f"{prefix}{wire}.") if sub else [f"{prefix}{wire}"])
    return keys


def model_at(key: str) -> tuple[type[BaseModel], str, str] | None:
    """The model that owns dotted ``key``, the attribute name and the wire name of the leaf."""
    model: type[BaseModel] = Settings
    parts = key.split(".")
    for part in parts[:-1]:
        entry = _fields(model).get(part)
        sub = _submodel(entry[1]) if entry else None
        if sub is None:
            return None
        model = sub
    entry = _fields(model).get(parts[-1])
    if entry is None or _submodel(entry[1]):
        return None
    return model, entry[0], parts[-1]


def validate_leaf(key: str, value: Any) -> tuple[Any, str | None]:
    """Validate one leaf value; returns (normalised value, error message or None)."""
    found = model_at(key)
    if found is None:
        return None, "unknown key"
    model, attr, _ = found
    probe = model()
    try:
        setattr(probe, attr, value)
    except ValidationError as exc:
        return None, _short(exc)
    result = getattr(probe, attr)
    return (result.model_dump(by_alias=True) if isinstance(result, BaseModel) else _dump(result)), None


def _dump(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True)
    return value


def _short(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = error_location(err["loc"][1:])
        parts.append(f"{loc}: {err['msg']}" if loc else err["msg"])
    return "; ".join(parts)


def error_location(loc: Sequence[Any]) -> str:
    """A validation error's location as a dotted key, each part cut (a 1 MB table key past
    its bound is named, not echoed)."""
    return ".".join(clip(str(x), 64) for x in loc)


def flatten(doc: Mapping[str, Any], source: str, model: type[BaseModel] = Settings,
            prefix: str = "") -> tuple[Leaves, list[ConfigProblem]]:
    """Split a parsed document into validated leaves; unknown keys and wrong types are problems."""
    leaves: Leaves = {}
    problems: list[ConfigProblem] = []
    fields = _fields(model)
    for wire, value in doc.items():
        key = f"{prefix}{wire}"
        entry = fields.get(wire)
        if entry is None:
            problems.append(ConfigProblem(source, key, "unknown key"))
            continue
        sub = _submodel(entry[1])
        if sub is not None:
            if not isinstance(value, dict):
                problems.append(ConfigProblem(source, key, f"must be a table, got {type(value).__name__}"))
                continue
            sub_leaves, sub_problems = flatten(value, source, sub, f"{key}.")
            leaves.update(sub_leaves)
            problems.extend(sub_problems)
            continue
        normalised, error = validate_leaf(key, value)
        if error:
            problems.append(ConfigProblem(source, key, error))
        else:
            leaves[key] = normalised
    return leaves, problems


def resolve_paths(leaves: Leaves, base_dir: str) -> None:
    """Make ``guard.allowed_paths`` entries absolute: ``~`` expanded, relative to ``base_dir``
    (the directory of the file that named them, or the cwd for the environment)."""
    paths = leaves.get("guard.allowed_paths")
    if paths:
        leaves["guard.allowed_paths"] = [
            os.path.normpath(os.path.join(base_dir, os.path.expanduser(p))) for p in paths
        ]


def migrate_legacy(doc: dict[str, Any], source: str, warnings: list[str]) -> None:
    """``guard.env_secret_patterns`` → ``guard.secrets.env_patterns`` (contract §8.7)."""
    guard = doc.get("guard")
    if not isinstance(guard, dict) or "env_secret_patterns" not in guard:
        return
    legacy = guard.pop("env_secret_patterns")
    warnings.append(f"{source}: guard.env_secret_patterns is deprecated; use guard.secrets.env_patterns")
    secrets = guard.setdefault("secrets", {})
    if isinstance(secrets, dict):
        secrets.setdefault("env_patterns", legacy)


# Environment variables (contract §9.4 plus profile/sandbox/config selection).
_LIST, _INT, _BOOL, _STR = "list", "int", "bool", "str"
ENV_VARS: dict[str, tuple[str, str]] = {
    "PARISM_ALLOWED_COMMANDS": ("guard.allowed_commands", _LIST),
    "PARISM_ALLOWED_PATHS": ("guard.allowed_paths", _LIST),
    "PARISM_PROFILE": ("guard.profile", _STR),
    "PARISM_TIMEOUT_MS": ("guard.timeout_ms", _INT),
    "PARISM_MAX_OUTPUT_BYTES": ("guard.max_output_bytes", _INT),
    "PARISM_MAX_ITEMS": ("guard.max_items", _INT),
    "PARISM_DEFAULT_PAGE_SIZE": ("guard.default_page_size", _INT),
    "PARISM_MAX_PAGE_SIZE": ("guard.max_page_size", _INT),
    "PARISM_MAX_CONCURRENCY": ("guard.max_concurrency", _INT),
    "PARISM_OUTPUT_REDACTION_ENABLED": ("guard.secrets.output_redaction_enabled", _BOOL),
    "PARISM_STRICT_SCHEMAS": ("parsers.strict_schemas", _BOOL),
    "PARISM_ADAPTIVE_FORMAT_JSON": ("parsers.adaptive_format_threshold.json", _INT),
    "PARISM_ADAPTIVE_FORMAT_COMPACT": ("parsers.adaptive_format_threshold.compact", _INT),
    "PARISM_ADAPTIVE_FORMAT_JSON_NO_RAW": ("parsers.adaptive_format_threshold.json_no_raw", _INT),
    "PARISM_TELEMETRY_ENABLED": ("telemetry.enabled", _BOOL),
    "PARISM_AUDIT_ENABLED": ("audit.enabled", _BOOL),
    "PARISM_AUDIT_PATH": ("audit.path", _STR),
    "PARISM_SANDBOX": ("sandbox.mode", _STR),
    "PARISM_MAX_REQUEST_BYTES": ("server.max_request_bytes", _INT),
    "PARISM_MAX_QUEUED": ("server.max_queued", _INT),
    "PARISM_STORE_MAX_RESULT_BYTES": ("store.max_result_bytes", _INT),
    "PARISM_STORE_MAX_TOTAL_BYTES": ("store.max_total_bytes", _INT),
    "PARISM_STORE_MAX_ITEMS": ("store.max_items", _INT),
    "PARISM_STORE_TTL_MS": ("store.ttl_ms", _INT),
}
_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off", ""}


def _env_value(raw: str, kind: str) -> tuple[Any, str | None]:
    text = raw.strip()
    if kind == _LIST:
        return [p.strip() for p in text.split(",") if p.strip()], None
    if kind == _INT:
        if not re.fullmatch(r"[+-]?\d+", text):
            return None, f"must be an integer, got {raw!r}"
        return int(text), None
    if kind == _BOOL:
        if text.lower() in _TRUE:
            return True, None
        if text.lower() in _FALSE:
            return False, None
        return None, f"must be true/false or 1/0, got {raw!r}"
    return text, None


def env_layers(environ: Mapping[str, str], cwd: str) -> list[tuple[str, Leaves, list[ConfigProblem]]]:
    """One layer per set ``PARISM_*`` variable, so each value's origin names its variable."""
    layers: list[tuple[str, Leaves, list[ConfigProblem]]] = []
    for var, (key, kind) in ENV_VARS.items():
        if var not in environ:
            continue
        source = f"env:{var}"
        value, error = _env_value(environ[var], kind)
        if error is None:
            value, error = validate_leaf(key, value)
        if error:
            layers.append((source, {}, [ConfigProblem(source, key, error)]))
            continue
        leaves = {key: value}
        resolve_paths(leaves, cwd)
        layers.append((source, leaves, []))
    return layers
