"""The published outputSchema (``parism.server.schema.inline``) accepts exactly what the schema
pydantic and the SDK derive accepts: real answers of the engine, and every mutation of them a
hypothesis search tries (a value replaced by another JSON type, a key added or removed)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata

from parism.engine import Engine
from parism.wire.envelope import DescribeResult, DryRunResult, Envelope, WireModel
from parism.server import tools
from parism.server.schema import inline

REPLACEMENTS = [None, "x", "", 0, -3, 1.5, True, False, [], ["x"], {}, {"zz": 1}]


@functools.cache
def validators(model: type[WireModel]) -> tuple[Draft202012Validator, Draft202012Validator]:
    derived = FuncMetadata(arg_model=ArgModelBase, output_model=model).output_schema
    assert derived is not None
    published = tools.output_schema(model)
    Draft202012Validator.check_schema(published)
    return Draft202012Validator(derived), Draft202012Validator(published)


@pytest.fixture
def answers(engine: Engine, tmp_path: Path) -> list[tuple[type[WireModel], dict[str, Any]]]:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "d").mkdir()
    cwd = str(tmp_path)
    envelopes = [
        engine.run("ls", ["-la"], cwd=cwd),                                    # parsed, lean
        engine.run("ls", ["-la"], cwd=cwd, format="json", budget={"max_tokens": 400}),
        engine.run("ls", ["-1", "missing"], cwd=cwd),                          # exec failure
        engine.run("rm", ["-rf", "/"], cwd=cwd),                               # guard refusal
        engine.run("parism-missing-tool", [], cwd=cwd),                        # availability
        engine.run("echo", ["hello"], cwd=cwd, include_diff=True),             # fs diff
        engine.run_paged("ls", ["-la"], cwd=cwd, page=0, page_size=2),         # page_info
    ]
    out: list[tuple[type[WireModel], dict[str, Any]]] = [(Envelope, e.to_wire()) for e in envelopes]
    out.append((DryRunResult, engine.dry_run("ls", ["-la"], cwd=cwd).to_wire()))
    out.append((DryRunResult, engine.dry_run("rm", ["x"], cwd=cwd).to_wire()))
    out.append((DescribeResult, engine.describe("ls").to_wire()))
    return out


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (the root excluded)."""
    found: list[tuple[Any, ...]] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        found.append((*prefix, key))
        found.extend(paths(child, (*prefix, key)))
    return found


def mutated(value: Any, path: tuple[Any, ...], how: str, replacement: Any) -> Any:
    """A deep copy of ``value`` with the place at ``path`` replaced, removed, or given a sibling."""
    if not path:
        return replacement
    head, *rest = path
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    if rest:
        copy[head] = mutated(value[head], tuple(rest), how, replacement)
    elif how == "replace":
        copy[head] = replacement
    elif how == "remove":
        del copy[head]
    elif isinstance(copy, dict):
        copy["zz_unknown"] = replacement
    else:
        copy.append(replacement)
    return copy


def test_real_answers_are_valid_and_the_schema_is_inlined(answers: list[tuple[type[WireModel], dict[str, Any]]]) -> None:
    for model, answer in answers:
        derived, published = validators(model)
        assert derived.is_valid(answer) and published.is_valid(answer), model.__name__
        assert "$ref" not in str(published.schema) and "title" not in published.schema
        assert "'type': [" not in str(published.schema)  # no type arrays: unportable (mcp-clients.md)
    derived, published = validators(Envelope)
    wrong = {**answers[0][1], "exitCode": "0"}  # the control: a wrong type is refused by both
    assert not derived.is_valid(wrong) and not published.is_valid(wrong)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_inlined_schema_agrees_with_the_derived_one(answers: list[tuple[type[WireModel], dict[str, Any]]],
                                                    data: st.DataObject) -> None:
    model, answer = data.draw(st.sampled_from(answers))
    path = data.draw(st.sampled_from(paths(answer)))
    how = data.draw(st.sampled_from(["replace", "remove", "add"]))
    candidate = mutated(answer, path, how, data.draw(st.sampled_from(REPLACEMENTS)))
    derived, published = validators(model)
    assert derived.is_valid(candidate) == published.is_valid(candidate), (path, how)


def test_recursive_refs_and_a_field_named_title() -> None:
    schema = {
        "$defs": {
            "Node": {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}},
                     "title": "Node"},
            "Leaf": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "title": "Leaf"},
        },
        "type": "object",
        "properties": {
            "leaf": {"anyOf": [{"$ref": "#/$defs/Leaf"}, {"type": "null"}], "default": None},
            "head": {"$ref": "#/$defs/Node"},
            "title": {"type": "string", "title": "Title"},  # a field named like the keyword
        },
    }
    flat = inline(schema)
    assert flat["properties"]["leaf"]["anyOf"][0] == {"type": "object", "properties": {"n": {"type": "integer"}},
                                                      "required": ["n"]}
    assert flat["properties"]["head"]["properties"]["next"] == {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}
    assert set(flat["$defs"]) == {"Node"}
    assert flat["properties"]["title"] == {"type": "string"}
    derived, published = Draft202012Validator(schema), Draft202012Validator(flat)
    for value in ({"leaf": None}, {"leaf": {"n": 1}}, {"leaf": {}}, {"leaf": {"n": "1"}}, {"head": {"next": {"next": None}}},
                  {"head": {"next": {"next": 3}}}, {"head": None}, {"title": 1}, {"title": "t"}):
        assert derived.is_valid(value) == published.is_valid(value), value
