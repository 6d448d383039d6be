"""Bounded configuration (issue 23 class 6): every string, list, table and number a layer can
set has a bound, checked at load with an error naming the key and the bound.

The cases are generated from the models' own JSON schema (``Settings`` and, through
``guard.command_policies``, the profile's ``CommandPolicy``), so a field added without a bound
fails :func:`test_every_value_a_layer_can_set_has_a_bound`, and every bounded string, list,
table and number is loaded through the real loader at its bound (no bound error) and one past
it (an error naming the key and the bound). The bounds themselves are read from
``parism/config/bounds.py``'s documentation table in docs/security.md, not from Parism's output.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from parism.config import LoadedConfig
from parism.config.model import Settings

SCHEMA = Settings.model_json_schema(by_alias=True)
DEFS = SCHEMA["$defs"]
DOCS = Path(__file__).resolve().parents[3] / "docs"


def deref(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = DEFS[node["$ref"].rsplit("/", 1)[-1]]
    return node


def variants(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The non-null alternatives of a node (``X | None`` is ``anyOf [X, null]``)."""
    node = deref(node)
    if "anyOf" in node:
        return [deref(n) for n in node["anyOf"] if n.get("type") != "null"]
    return [node]


# A step into a value: ("prop", name) | ("item",) | ("value",) dict value | ("key",) dict key
Steps = tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Leaf:
    steps: Steps
    node: dict[str, Any]
    kind: str  # "string" | "array" | "object" | "integer"

    @property
    def key(self) -> str:
        return ".".join(s[1] for s in self.steps if s[0] == "prop")

    @property
    def name(self) -> str:
        return ".".join(s[1] if s[0] == "prop" else f"[{s[0]}]" for s in self.steps)


def leaves(node: dict[str, Any], steps: Steps = ()) -> Iterator[Leaf]:
    for v in variants(node):
        kind = v.get("type")
        if "enum" in v or "const" in v or kind in ("boolean", "null"):
            continue
        if kind == "object" and "properties" in v:
            for name, sub in v["properties"].items():
                yield from leaves(sub, (*steps, ("prop", name)))
        elif kind == "object":
            yield Leaf(steps, v, "object")
            yield Leaf((*steps, ("key",)), v.get("propertyNames", {}), "string")
            if isinstance(v.get("additionalProperties"), dict):
                yield from leaves(v["additionalProperties"], (*steps, ("value",)))
        elif kind == "array":
            yield Leaf(steps, v, "array")
            yield from leaves(v.get("items", {}), (*steps, ("item",)))
        else:
            yield Leaf(steps, v, str(kind))


LEAVES = list(leaves(SCHEMA))
BOUND_OF = {"string": "maxLength", "array": "maxItems", "object": "maxProperties", "integer": "maximum"}


def test_the_walk_reaches_every_kind_of_setting() -> None:
    names = {leaf.name for leaf in LEAVES}
    for expected in ("guard.secrets.redaction_marker", "guard.command_policies.[value].flags.[key]",
                     "guard.command_policies.[value].sub_flags.[value].[key]", "sandbox.network_allow.[item]",
                     "guard.timeout_ms", "parsers.external_capabilities.fs_read.[item].[item]"):
        assert expected in names, expected
    assert len(LEAVES) > 100


def test_every_value_a_layer_can_set_has_a_bound() -> None:
    unbounded = [f"{leaf.name} ({leaf.kind})" for leaf in LEAVES if BOUND_OF[leaf.kind] not in leaf.node]
    assert unbounded == [], "configurable values without a bound: " + ", ".join(unbounded)


def test_the_documented_marker_bound_is_the_models() -> None:
    """docs/security.md's table states redaction_marker ≤ 64: the model must agree."""
    (marker,) = [leaf for leaf in LEAVES if leaf.name == "guard.secrets.redaction_marker"]
    assert marker.node["maxLength"] == 64
    table = (DOCS / "security.md").read_text()
    assert re.search(r"\| `guard\.secrets\.redaction_marker` \| 64 characters", table)


# -- building a document with one value at (or past) its bound ------------------------------


def minimal(node: dict[str, Any]) -> Any:
    """The smallest value the model accepts for ``node`` (required fields filled)."""
    v = variants(node)[0]
    if "enum" in v:
        return v["enum"][0]
    if "const" in v:
        return v["const"]
    kind = v.get("type")
    if kind == "object" and "properties" in v:
        return {name: minimal(v["properties"][name]) for name in v.get("required", [])}
    return {"object": {}, "array": [], "string": "a", "integer": max(0, v.get("minimum", 0)),
            "boolean": False}.get(kind)


def build(node: dict[str, Any], steps: Steps, make: Callable[[dict[str, Any]], Any]) -> Any:
    """A value for ``node`` whose part at ``steps`` is ``make(node there)``."""
    v = variants(node)[0]
    if not steps:
        return make(v)
    step, rest = steps[0], steps[1:]
    if step[0] == "prop":
        out = minimal(v) if "properties" in v else {}
        out[step[1]] = build(v["properties"][step[1]], rest, make)
        return out
    if step[0] == "item":
        return [build(v["items"], rest, make)]
    if step[0] == "value":
        return {"x": build(v["additionalProperties"], rest, make)}
    assert step[0] == "key"
    return {make(v.get("propertyNames", {})): minimal(v["additionalProperties"]) if isinstance(
        v.get("additionalProperties"), dict) else "a"}


#: Tables a layer merges into the defaults entry by entry: their bound counts the defaults' entries.
MERGED = {"guard.command_arg_restrictions", "guard.command_policies"}


def sized(leaf: Leaf, past: bool) -> Callable[[dict[str, Any]], Any]:
    bound = leaf.node[BOUND_OF[leaf.kind]] + (1 if past else 0)
    if leaf.kind == "object" and leaf.name in MERGED:
        bound -= len(getattr(Settings().guard, leaf.name.split(".")[-1]))

    def make(v: dict[str, Any]) -> Any:
        if leaf.kind == "string":
            return "/" + "a" * (bound - 1)  # absolute: a relative path is resolved, and longer
        if leaf.kind == "integer":
            return bound
        if leaf.kind == "array":
            item = minimal(v["items"])
            return [item if not isinstance(item, str) else f"a{i}" for i in range(bound)]
        value = minimal(v["additionalProperties"]) if isinstance(v.get("additionalProperties"), dict) else "a"
        return {f"k{i}": value for i in range(bound)}
    return make


BOUNDED = [leaf for leaf in LEAVES if BOUND_OF[leaf.kind] in leaf.node]
# the key a value's own validator also checks, with the words of that check (not a bound error)
BOUND_WORDS = re.compile(r"at most|less than or equal")


def problems_for(load: Callable[..., LoadedConfig], tmp_path: Path, leaf: Leaf, past: bool) -> list[str]:
    doc = build(SCHEMA, leaf.steps, sized(leaf, past))
    path = tmp_path / "explicit.toml"
    path.write_text(tomli_w.dumps(doc))
    cfg = load(str(path))
    top = leaf.key
    return [f"{p.key}: {p.message}" for p in cfg.errors if top.startswith(p.key) or p.key.startswith(top)]


@pytest.mark.parametrize("leaf", BOUNDED, ids=[leaf.name for leaf in BOUNDED])
def test_each_value_at_its_bound_loads_and_one_past_it_is_refused_naming_the_key(
        load: Callable[..., LoadedConfig], tmp_path: Path, leaf: Leaf) -> None:
    at = problems_for(load, tmp_path, leaf, past=False)
    assert not any(BOUND_WORDS.search(p) for p in at), at
    past = problems_for(load, tmp_path, leaf, past=True)
    bound = leaf.node[BOUND_OF[leaf.kind]]
    assert any(BOUND_WORDS.search(p) and str(bound) in p for p in past), (leaf.name, bound, past)
    assert all(len(p) < 600 for p in past), past  # the refused value is never echoed whole


def test_a_project_marker_of_100_kb_is_refused_at_load(load: Callable[..., LoadedConfig], dirs: Any) -> None:
    dirs.write(dirs.project_toml, '[guard.secrets]\nredaction_marker = "' + "M" * 100_000 + '"\n')
    cfg = load()
    assert [(p.key, "64" in p.message) for p in cfg.errors] == [("guard.secrets.redaction_marker", True)], cfg.errors
    assert all(len(p.message) < 300 for p in cfg.errors)


def test_a_profile_with_too_many_commands_or_a_long_name_is_refused(load: Callable[..., LoadedConfig],
                                                                    tmp_path: Path) -> None:
    from parism.config.bounds import COMMANDS, NAME_CHARS

    for commands, needle in (({f"c{i}": {} for i in range(COMMANDS + 1)}, f"at most {COMMANDS} commands"),
                             ({"x" * (NAME_CHARS + 1): {}}, f"at most {NAME_CHARS} characters")):
        profile = tmp_path / "p.toml"
        profile.write_text(tomli_w.dumps({"commands": commands}))
        cfg = load(PARISM_PROFILE=str(profile))
        assert any(needle in p.message and p.key.startswith("commands") for p in cfg.errors), cfg.errors
    ok = tmp_path / "ok.toml"
    ok.write_text(tomli_w.dumps({"commands": {"x" * NAME_CHARS: {}}}))
    assert not [p for p in load(PARISM_PROFILE=str(ok)).errors if p.key.startswith("commands")]


def test_a_value_valid_in_its_layer_but_not_once_resolved_is_a_problem_not_an_exception(
        load: Callable[..., LoadedConfig], tmp_path: Path) -> None:
    """A relative path is resolved against its file's directory, so 4,090 characters become
    more than 4,096: the loader reports the key instead of raising (it raised before)."""
    path = tmp_path / "explicit.toml"
    path.write_text(tomli_w.dumps({"guard": {"allowed_paths": ["a" * 4090]}}))
    cfg = load(str(path))
    assert any(p.key == "guard.allowed_paths" and "4096" in p.message for p in cfg.errors), cfg.errors
    assert cfg.settings.guard.allowed_paths == [str(Path(cfg.cwd))]  # the safe fallback, not None
