"""The published ``outputSchema`` in the form a client validates fastest, accepting exactly
what the schema pydantic and the SDK derive accepts.

Every client that follows the spec validates each ``structuredContent`` against the tool's
``outputSchema`` (the Python SDK with ``jsonschema`` after every ``tools/call``, the TypeScript
SDK and the Inspector with Ajv). ``jsonschema`` pays for each subschema it enters, and a
``$ref`` is one more: a lookup and a new validator. Pydantic writes every nested model as a
``$ref`` into ``$defs``; in the SDK client, validation alone cost a ``git log`` answer 0.68 ms
of CPU (``docs/performance.md``). ``inline`` rewrites the schema without changing its meaning:

- a ``$ref`` to a ``$defs`` entry is replaced by that entry (a model that refers to itself,
  directly or not, keeps its ``$ref`` and its ``$defs`` entry);
- pydantic's ``title`` keys (the field name again) go; descriptions and defaults stay.

Optional fields keep pydantic's ``anyOf [X, {"type": "null"}]``: a ``type`` array would be
cheaper to check, but the Inspector's ``--strict`` flags it as unportable (docs/mcp-clients.md).
"""

from __future__ import annotations

from typing import Any

#: Keywords whose value maps names (a field may be called "title") to subschemas.
_NAMED = ("properties", "patternProperties", "dependentSchemas")


def inline(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``$defs`` inlined and pydantic's titles left out."""
    defs: dict[str, Any] = schema.get("$defs", {})
    kept: dict[str, Any] = {}

    def walk(node: Any, path: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, path) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) == 1:
            name = ref.removeprefix("#/$defs/")
            if name in path:  # recursive: keep the reference, and its target once
                if name not in kept:
                    kept[name] = None
                    kept[name] = walk(defs[name], path)
                return node
            return walk(defs[name], (*path, name))
        return {key: ({name: walk(sub, path) for name, sub in value.items()} if key in _NAMED else walk(value, path))
                for key, value in node.items() if key not in ("$defs", "title")}

    out = walk(schema, ())
    if kept:
        out["$defs"] = kept
    return out
