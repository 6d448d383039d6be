"""Wire models: the only place where JSON field names of the contract are spelled.

Serialisation follows spec decision 10: a field listed in a model's ``_always`` set is emitted
even when it is ``null`` (``stdout.parsed``, ``diff``, dry_run ``reason``/``message``); every
other field is left out while it is unset (``None``).  ``to_wire`` is what the MCP server, the
CLI and the library all print, so the three surfaces can never drift apart.

No ``from __future__ import annotations`` here: pydantic would evaluate every annotation string
again when it builds the classes, and the MCP server builds them before it can answer
``tools/list`` (about a third of this module's import time).
"""

import json
from functools import partial
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, model_serializer
from pydantic_core import to_jsonable_python

FailureKind = Literal["guard", "exec", "parse", "config"]


class WireModel(BaseModel):
    """Base: forbid unknown fields, drop unset optionals when serialising."""

    model_config = ConfigDict(extra="forbid")
    _always: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        return {k: v for k, v in data.items() if v is not None or k in self._always}

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_json(self, indent: int | None = None) -> str:
        if indent is None:
            return json.dumps(self.to_wire(), separators=(",", ":"), ensure_ascii=False)
        return json.dumps(self.to_wire(), indent=indent, ensure_ascii=False)


class Hint(WireModel):
    """Replacement arguments that give the same information in a supported form."""

    args: list[str]
    reason: str | None = None


class ParseError(WireModel):
    reason: Literal[
        "parser_exception", "schema_violation", "unsupported_format", "unrecognized_output", "parser_not_found"
    ]
    message: str
    hint: Hint | None = None


def _one_of_types(*types: str) -> list[dict[str, str]]:
    """``anyOf`` branches of one ``type`` each, not ``"type": [...]``: ajv's strict mode refuses
    union types and single-type dialects (Gemini's OpenAPI subset) drop them (Inspector --strict)."""
    return [{"type": t} for t in types]


#: ``parsed`` in the published schema: 43 parsers' shapes as one union would be most of
#: ``tools/list``; clients get the kind and learn a command's shape from ``describe(cmd)``.
PARSED_SCHEMA = {
    "anyOf": _one_of_types("object", "array", "null"),
    "description": "The parser's structured reading of the output (its shape per command: "
    "describe(cmd).parser); null when no parser ran or parsing failed (see parse_error).",
}

#: A value read out of ``parsed`` (explain_result, compare_results): any JSON value, said so
#: explicitly rather than by an empty schema that strict validators flag as constraining nothing.
JSON_VALUE_SCHEMA = {
    "anyOf": _one_of_types("object", "array", "string", "number", "boolean", "null"),
    "description": "Any JSON value: the value at that place in the parsed output.",
}


class OutputField(WireModel):
    _always = frozenset({"parsed"})
    raw: str
    parsed: Annotated[Any, WithJsonSchema(PARSED_SCHEMA)] = None
    parse_error: ParseError | None = None
    #: The stream's bytes (masked), base64, when they are not text (parism/output/redact/binary.py);
    #: ``raw`` is then "". Absent for text.
    raw_base64: str | None = Field(default=None, description=(
        "The stream's bytes, base64 (RFC 4648), when they are not text (control bytes or "
        "invalid UTF-8 in more than 1 byte of 20); raw is then empty and nothing is parsed."))


#: What ``model_dump(mode="json")`` makes of an ``Any`` field (the WireModel defaults: NaN and
#: infinities become null, field names not aliases), without the wrap serializer around it.
_jsonable = partial(to_jsonable_python, by_alias=False, inf_nan_mode="null")


class InstallHint(WireModel):
    command: str
    package: str
    manager: str


class Alternative(WireModel):
    cmd: str
    args: list[str]
    reason: str


class Availability(WireModel):
    status: Literal["missing", "not_executable", "present"]
    install: InstallHint | None = None
    alternatives: list[Alternative] = Field(default_factory=list)


class Failure(WireModel):
    kind: FailureKind
    reason: str
    message: str
    hint: str | None = None
    availability: Availability | None = None
    errorCode: str | None = None


class GuardError(WireModel):
    reason: str
    message: str


class FsDiff(WireModel):
    created: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    truncated: bool | None = None


class CacheInfo(WireModel):
    hit: bool
    age_ms: int
    reason: str | None = None


class PageInfo(WireModel):
    page: int
    page_size: int
    total_lines: int
    has_next: bool
    cache: CacheInfo | None = None


class Telemetry(WireModel):
    guard_ms: float
    exec_ms: float
    parse_ms: float
    redact_ms: float
    total_ms: float
    raw_bytes: int


class RegexFallback(WireModel):
    pattern: str
    reason: str


class RegexEngineReport(WireModel):
    used: str
    fallbacks: list[RegexFallback] = Field(default_factory=list)


class SandboxReview(WireModel):
    level: Literal["full", "nested-weak", "none"]
    namespace_class: str
    network: bool


class Review(WireModel):
    result_id: str
    parser_id: str | None = None
    parser_version: str | None = None
    schema_version: str | None = None
    content_hash: str
    source_complete: bool | Literal["unknown"]
    parse_complete: bool | Literal["unknown"]
    representation_lossless: bool | Literal["unknown"]
    privacy_transform: Literal["none", "masked", "unknown"]
    retained: bool
    warnings: list[str] = Field(default_factory=list)
    sandbox: SandboxReview | None = None


class Omission(WireModel):
    stage: Literal["capture", "parse", "projection", "budget", "privacy"]
    reason: str
    rows_total: int | None = None
    rows_selected: int | None = None
    rows_returned: int | None = None
    rows_omitted: int | None = None
    omitted_fields: list[str] | None = None
    unknown_counts: dict[str, int] | None = None
    next_cursor: str | None = None


class BudgetReport(WireModel):
    """What a ``budget`` measured (contract §12.2): the flat seed fields and upstream's."""

    requested: dict[str, Any]
    max_tokens: int
    measured_tokens: int
    budget_met: bool
    tokenizer_id: str
    tokenizer_version: str
    tokenizer_exact: bool
    tokenizer_scope: str


class Continuation(WireModel):
    """Where the rest of a budget-cut answer is: a cursor for ``fetch_result`` (retained), or
    ``retained: false`` with the ways that exist (re-run with ``retain``, ``run_paged``)."""

    result_id: str | None = None
    cursor: str | None = None
    retained: bool | None = None
    rows_left: int
    total: int
    hint: str | None = None


class Note(WireModel):
    """Something the call did that its output alone does not show, in every answer that has
    it (not only in ``review``): ``egress_refused`` — the egress proxy refused a destination
    during the call, so a 403 on stdout is the proxy's answer, not the destination's
    (docs/envelope.md, "Notes")."""

    name: Literal["egress_refused"]
    message: str
    count: int


class Envelope(WireModel):
    """The response of ``run``, ``run_paged`` and ``parse`` (contract §5)."""

    _always = frozenset({"diff"})
    ok: bool
    exitCode: int
    signal: str | None = None
    cmd: str
    args: list[str]
    cwd: str
    duration_ms: int
    stdout: OutputField
    stderr: OutputField
    diff: FsDiff | None = None
    truncated: Literal[True] | None = None
    page_info: PageInfo | None = None
    guard_error: GuardError | None = None
    failure: Failure | None = None
    notes: list[Note] | None = None
    telemetry: Telemetry | None = None
    review: Review | None = None
    omission: list[Omission] | None = None
    regex_engine: RegexEngineReport | None = None
    budget: BudgetReport | None = None
    continuation: Continuation | None = None

    def to_wire(self) -> dict[str, Any]:
        """The same dict as ``model_dump(mode="json")``, with ``parsed`` converted on its own.

        Under ``_drop_unset`` pydantic serialises an ``Any`` value about 2.5x slower than
        :func:`to_jsonable_python` does (``ls -la /usr/bin``: ~500 rows); ``parsed`` is the bulk
        of a large envelope.  The rest is dumped with both ``parsed`` set to ``None`` (they are
        ``_always`` fields, so their keys keep their place) and the converted values put back.
        The result is a fresh structure: nothing in it aliases the engine's parsed objects.
        """
        out, err = self.stdout, self.stderr
        if out.parsed is None and err.parsed is None:
            return self.model_dump(mode="json")
        light = self.model_copy(update={
            "stdout": out.model_copy(update={"parsed": None}),
            "stderr": err.model_copy(update={"parsed": None}),
        })
        wire = light.model_dump(mode="json")
        wire["stdout"]["parsed"] = _jsonable(out.parsed)
        wire["stderr"]["parsed"] = _jsonable(err.parsed)
        return wire


class DryRunResult(WireModel):
    """``dry_run``: exactly the guard's decision, nothing executed."""

    _always = frozenset({"reason", "message"})
    would_pass: bool
    reason: str | None = None
    message: str | None = None
    hint: str | None = None


class DescribeResult(WireModel):
    """``describe`` without ``cmd`` (environment) or with ``cmd`` (one command, ≤ 2 KB)."""

    version: str
    profile: str | None = None
    allowed_commands: list[str] | None = None
    available_parsers: list[str] | None = None
    packs: list[dict[str, Any]] | None = None  # parser packs: [{name, path, status, error?}]
    guard_summary: dict[str, Any] | None = None
    tools: list[str] | None = None
    result_store: dict[str, int | str] | None = None  # the [store] settings and "ttl": the rule in words
    telemetry_enabled: bool | None = None
    host_os: str | None = None
    sandbox: dict[str, Any] | None = None
    regex_engine: RegexEngineReport | None = None
    env: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    # over MCP: the server's side ({fast_path: {fast_path, sdk, sdk_tested, note?, missing?}}, server/fastpath.py)
    server: dict[str, Any] | None = None
    # describe(cmd)
    cmd: str | None = None
    policy: dict[str, Any] | None = None
    parser: dict[str, Any] | None = None
    alternatives: list[dict[str, Any]] | None = None
    examples: list[list[str]] | None = None
    # telemetry.enabled: calls, blocked, failed, mean_ms, max_ms (per command, or of this one)
    stats: dict[str, Any] | None = None
    failure: Failure | None = None


# -- the result tools: explain_result, compare_results (contract §4.4, §15) ------------------


class SourceSpan(WireModel):
    """``[start, end)`` UTF-8 byte offsets into the full masked stream; ``line`` is 1-based
    (0 with ``record`` for NUL-separated output: the offsets are absolute, ``record`` 1-based)."""

    source: Literal["stdout", "stderr"]
    start: int
    end: int
    line: int | None = None
    record: int | None = None
    transform: str | None = None


class ExplainResult(WireModel):
    """``explain_result``: where one value of a retained result came from."""

    ok: bool
    result_id: str
    pointer: str
    value: Annotated[Any, WithJsonSchema(JSON_VALUE_SCHEMA)] = None
    source_kind: Literal["verbatim", "derived", "none"] | None = None
    source_spans: list[SourceSpan] | None = None
    transform: str | None = None
    age_ms: int | None = None
    reason: str | None = None
    message: str | None = None
    warnings: list[str] | None = None


class FieldChange(WireModel):
    _always = frozenset({"before", "after"})
    field: str
    before: Annotated[Any, WithJsonSchema(JSON_VALUE_SCHEMA)] = None
    after: Annotated[Any, WithJsonSchema(JSON_VALUE_SCHEMA)] = None


class RowDiff(WireModel):
    key: str
    status: Literal["added", "removed", "changed"]
    changes: list[FieldChange] = Field(default_factory=list)
    base_pointer: str | None = None
    current_pointer: str | None = None


class CompareRefusals(WireModel):
    comparable: bool
    compatibility: Literal["same", "compatible", "unknown", "incompatible"]
    reasons: list[str] = Field(default_factory=list)
    ignored: list[str] = Field(default_factory=list)


class ComparePartial(WireModel):
    base_incomplete: bool
    current_incomplete: bool
    withheld_reasons: list[str] = Field(default_factory=list)


class KeyConflict(WireModel):
    key: str
    count: int
    side: Literal["base", "current"]


class CompareResult(WireModel):
    """``compare_results``: the semantic diff of two retained results, or why there is none."""

    ok: bool
    comparable: bool
    base_id: str
    current_id: str
    refusals: CompareRefusals | None = None
    refusal_reason: str | None = None
    reason: str | None = None  # a store miss (``unknown_id`` …) of either side
    message: str | None = None
    domain: str | None = None
    added: list[RowDiff] = Field(default_factory=list)
    removed: list[RowDiff] = Field(default_factory=list)
    changed: list[RowDiff] = Field(default_factory=list)
    unchanged_count: int | None = None
    ignored_fields: list[str] | None = None
    partial: ComparePartial | None = None
    key_conflicts: list[KeyConflict] | None = None
