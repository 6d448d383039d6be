"""Fixture manifests (contract §19.1) and their offline replay (contract §19.3).

A manifest is one JSON file: ``manifest_version`` 1, ``id``, ``captured_at``, ``tool {command,
args, args_redacted?}``, ``exit {code, signal?}``, ``stdout``, ``stderr``, ``content_hash``,
``versions``, ``redactions``, ``expected?``. Replay never runs the command and never rewrites an
expectation: an expectation without ``reviewed_by`` is a suggestion (a mismatch is reported, not
a failure); the comparison is a full match, reported as JSON-pointer differences.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parism.config.workspace import read_regular

REQUIRED = ("manifest_version", "id", "tool", "stdout")


def content_hash(stdout: str) -> str:
    return hashlib.sha256(stdout.encode("utf-8")).hexdigest()[:16]


def check_manifest(data: Any) -> str | None:
    """Why ``data`` is not a usable manifest, or None."""
    if not isinstance(data, dict):
        return "a manifest is a JSON object"
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        return f"missing field(s) {', '.join(missing)}"
    if data["manifest_version"] != 1:
        return f"manifest_version {data['manifest_version']!r} is not 1"
    tool = data["tool"]
    if not isinstance(tool, dict) or not isinstance(tool.get("command"), str) or \
            not isinstance(tool.get("args", []), list):
        return "tool must be {command: str, args: [str]}"
    if not isinstance(data["stdout"], str):
        return "stdout must be a string"
    if "content_hash" in data and data["content_hash"] != content_hash(data["stdout"]):
        return "content_hash does not match stdout (the captured text was edited)"
    exp = data.get("expected")
    if exp is not None and not isinstance(exp, dict):
        return "expected must be an object"
    return None


def diff(expected: Any, actual: Any, pointer: str = "") -> list[str]:
    """Full-match differences as ``/pointer  kind  expected → actual`` lines."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out: list[str] = []
        for k in expected:
            p = f"{pointer}/{_esc(k)}"
            if k not in actual:
                out.append(f"{p}  missing  expected {_show(expected[k])}")
            else:
                out += diff(expected[k], actual[k], p)
        out += [f"{pointer}/{_esc(k)}  extra  actual {_show(actual[k])}" for k in actual if k not in expected]
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        out = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            out += diff(e, a, f"{pointer}/{i}")
        if len(expected) != len(actual):
            out.append(f"{pointer}  length  expected {len(expected)} → actual {len(actual)}")
        return out
    if expected != actual or type(expected) is not type(actual):
        return [f"{pointer or '/'}  value  expected {_show(expected)} → actual {_show(actual)}"]
    return []


def _esc(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _show(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class Result:
    fixture: str
    reviewed: bool
    status: str  # match | changed | unreviewed | error
    lines: list[str] = field(default_factory=list)


MAX_MANIFEST_BYTES = 64 * 1024 * 1024


def load(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A manifest file: a regular file (a FIFO, a device or a /proc file is refused before it is
    opened: config/workspace.read_regular), read as whoever runs ``parism test``."""
    raw, why = read_regular(str(path), MAX_MANIFEST_BYTES)
    if raw is None:
        return None, f"cannot read: {why or 'no such file'}"
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        return None, f"cannot read: {exc}"
    return data, check_manifest(data)
