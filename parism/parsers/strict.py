"""``parsers.strict_schemas``: a parser's value must be exactly what its schema declares.

Why not ``schema.model_validate(value)`` (what the registry did): pydantic's default is lax —
``"2"`` passes for an integer and a key the schema does not declare is dropped without a word —
so no parser's output ever failed it and the setting had no effect. Here the value is validated
as the JSON it becomes on the wire, in strict mode (no coercion: ``"2"`` is not an integer, ``1``
is not ``true``; an ISO date string is a date, JSON has no other), and every key it holds must
be one the schema declares (a model with ``extra="allow"`` declares any key). Turned on over the
parser test corpus this found one real gap at once: netstat's ``groups`` rows (``netstat -g``)
were not in its schema. Shared by the registry (built-in parsers) and the pack worker (packs
whose schema is a pydantic model; a JSON Schema is already strict about types, and its own
``additionalProperties`` say which keys it allows).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import to_json


def violation(schema: type[BaseModel], value: Any) -> str | None:
    """None when ``value`` is exactly a ``schema``; else what is wrong, in one short line."""
    try:
        model = schema.model_validate_json(to_json(value), strict=True)
    except ValidationError as exc:
        return f"{exc.error_count()} schema error(s): {str(exc)[:300]}"
    extra = undeclared(value, model.model_dump(mode="json", exclude_unset=True))
    return None if extra is None else f"{extra}: a key the schema does not declare"


def undeclared(value: Any, declared: Any, path: str = "") -> str | None:
    """The JSON Pointer of the first key of ``value`` missing from ``declared`` (the validated
    value: what the schema kept of it)."""
    if isinstance(value, dict) and isinstance(declared, dict):
        for key, item in value.items():
            here = f"{path}/{key}"
            if key not in declared:
                return here
            found = undeclared(item, declared[key], here)
            if found is not None:
                return found
    elif isinstance(value, list) and isinstance(declared, list):
        for i, (item, kept) in enumerate(zip(value, declared)):
            found = undeclared(item, kept, f"{path}/{i}")
            if found is not None:
                return found
    return None
