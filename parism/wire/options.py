"""One typed options model per public call, built by the MCP server, the CLI and the library alike.

Why one layer: an unknown parameter, a wrong type or an out-of-range value must get the same
clear answer whichever surface the call came through (principle "nothing is ignored"), and the
engine's ``run``/``arun``/``run_paged``/``arun_paged`` must not each repeat a parameter list.

Rules (all models):
- unknown keys are refused, naming the key and listing the valid ones;
- types are strict: no bool↔int coercion (``includeDiff: 0``, ``page: true`` are refused), no
  string→number; integers are bounded (``page: 10**30`` is refused);
- a refusal is a value (:class:`OptionsError`), never an exception to the caller.

``build(RunOptions, mapping)`` is the only constructor the surfaces use; ``RunOptions.query()``
is the part of a run that a cursor is bound to (projection + budget), hashed by
:func:`parism.results.cursor.query_hash`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from parism.wire.clip import clip

PARAM_ECHO = 128  # characters of a parameter name repeated in a refusal
MAX_INT = 2**31 - 1  # every integer parameter is bounded (JSON clients differ above 2**53)

CMD = "Program name, looked up on PATH (never run through a shell)."
ARGS = "Arguments, passed as argv (one list item per argument)."
CWD = "Working directory; must be inside the allowed paths. Default: the server's."
TIMEOUT = ("Milliseconds this call may run before its process tree is killed (failure.reason: timeout). "
           "Default guard.timeout_ms; at most guard.max_timeout_ms (refused above it).")

FieldName = Annotated[str, StringConstraints(min_length=1, max_length=128)]
WhereOp = Literal["eq", "ne", "prefix", "contains", "gt", "gte", "lt", "lte"]
Tokenizer = Literal["parism/approx", "byte"]


class StrictOptions(BaseModel):
    """Base of every options model: unknown keys forbidden, no type coercion, frozen."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    #: Why a key another call takes is unknown here (appended to the refusal).
    unknown_notes: ClassVar[dict[str, str]] = {}


class Where(StrictOptions):
    """One condition on a row field; every condition of ``where`` must hold."""

    field: FieldName = Field(description="Row field name (see describe(cmd).parser.row_fields).")
    op: WhereOp = Field(description="eq ne: equality; prefix contains: strings; gt gte lt lte: order.")
    value: str | int | float | bool | None = Field(description="The value compared with, typed like the field.")


class SortBy(StrictOptions):
    """A stable sort on one row field (rows without it last)."""

    field: FieldName = Field(description="Row field to sort on.")
    order: Literal["asc", "desc"] = Field(default="asc", description="asc (default) or desc.")


class Budget(StrictOptions):
    """A ceiling on the answer's size; rows that do not fit are cut and the answer says how to
    get them."""

    max_tokens: int = Field(ge=1, le=MAX_INT, description=(
        "Largest answer, in tokens of `tokenizer`. No fixed minimum: refused, with the need, only "
        "when the answer with one row does not fit."))
    tokenizer: Tokenizer = Field(default="parism/approx", description=(
        "How tokens are counted: parism/approx estimates o200k (within 15 % on real outputs), byte "
        "counts UTF-8 bytes."))
    required_fields: list[FieldName] | None = Field(
        default=None, min_length=1, max_length=64, description="Row fields never dropped to fit.")
    overflow: Literal["page", "error"] = Field(
        default="page", description="page: cut rows and return a cursor; error: refuse instead.")


class CallOptions(StrictOptions):
    """What every command-running call takes."""

    cmd: str = Field(min_length=1, description=CMD)
    args: list[str] = Field(default_factory=list, description=ARGS)
    cwd: str | None = Field(default=None, description=CWD)
    includeDiff: bool = Field(
        default=False, description="Report files created/deleted/modified under cwd (depth 2).")


class RunOptions(CallOptions):
    """``run`` / ``Engine.run`` / ``parism run`` (contract §3.1)."""

    format: Literal["json", "compact", "json-no-raw"] | None = Field(
        default=None,
        description='Unset (the default, the fewest tokens): parsed rows as {schema, same, rows} tables, raw '
        'left out when the parse restates it (cat: raw alone). "json": parsed objects + raw; "compact": '
        'objects folded into {schema, rows} + raw; "json-no-raw": parsed objects only.')
    select: list[FieldName] | None = Field(
        default=None, min_length=1, max_length=64, description="Row fields to keep, in this order.")
    where: list[Where] | None = Field(
        default=None, min_length=1, max_length=16, description="Row conditions, all must hold.")
    sort_by: SortBy | None = Field(default=None, description="Sort the rows on one field.")
    limit: int | None = Field(
        default=None, ge=0, le=MAX_INT, description="Keep the first N rows (0: only the summary).")
    array: FieldName | None = Field(
        default=None, description="Which top-level row array to project when there are several.")
    budget: Budget | None = Field(default=None, description="Cap the answer's size in tokens.")
    contract_version: Literal["stable", "next"] = Field(
        default="stable", description='"next" adds the review block (result_id, warnings).')
    evidence: Literal["none", "rows", "fields"] = Field(
        default="none", description="Source spans in the raw output per row or per field.")
    retain: bool = Field(
        default=False, description=(
            "Keep the result for fetch_result/explain_result/compare_results, 15 minutes after its "
            "last read (store.ttl_ms)."))
    timeout_ms: int | None = Field(default=None, ge=1, le=MAX_INT, description=TIMEOUT)
    stdin: str | None = Field(default=None, description=(
        "Text given to the command's standard input (UTF-8, at most guard.max_stdin_bytes); never echoed "
        "back, and what the command prints of it is redacted like all output. Unset: /dev/null."))

    def projection_requested(self) -> bool:
        return any(v is not None for v in (self.select, self.where, self.sort_by, self.limit, self.array))

    def adaptive_allowed(self) -> bool:
        """contract §6.4: evidence and budget turn the adaptive compact form off (pointers must resolve)."""
        return self.budget is None and self.evidence == "none"

    def query(self) -> dict[str, Any]:
        """The part of the call a cursor is bound to (JSON data, stable key order)."""
        return self.model_dump(mode="json", include={"select", "where", "sort_by", "limit", "array", "budget"})


class PagedOptions(CallOptions):
    """``run_paged``: line pages of raw stdout; projection parameters are unknown here."""

    page: int = Field(default=0, ge=0, le=MAX_INT, description="0-based page number.")
    page_size: int | None = Field(
        default=None, ge=1, le=MAX_INT,
        description="Lines per page (default guard.default_page_size, max guard.max_page_size).")
    timeout_ms: int | None = Field(default=None, ge=1, le=MAX_INT, description=TIMEOUT)

    unknown_notes: ClassVar[dict[str, str]] = dict.fromkeys(
        ("format", "select", "where", "sort_by", "limit", "array", "budget", "evidence", "retain",
         "contract_version"),
        "run_paged returns pages of raw stdout lines (page, page_size); "
        "projection, formats and budgets are parameters of run")


class DescribeOptions(StrictOptions):
    """``describe``: the environment, or one command's rules."""

    cmd: str | None = Field(
        default=None, min_length=1, description="A command name: show only its policy, parser and examples.")


class DryRunOptions(StrictOptions):
    """``dry_run``: the guard's decision on a call, nothing executed."""

    cmd: str = Field(min_length=1, description=CMD)
    args: list[str] = Field(default_factory=list, description=ARGS)
    cwd: str | None = Field(default=None, description=CWD)


ResultId = Annotated[str, Field(min_length=1, max_length=128,
                                 description="review.result_id of a run made with retain: true.")]


class FetchOptions(StrictOptions):
    """``fetch_result``: the next page of a retained, budget- or limit-cut result."""

    result_id: ResultId
    cursor: str = Field(min_length=1, max_length=4096, description=(
        "continuation.cursor of the previous page, unchanged."))


class ExplainOptions(StrictOptions):
    """``explain_result``: where one value of a retained result came from."""

    result_id: ResultId
    pointer: str = Field(max_length=4096, description=(
        "RFC 6901 JSON Pointer into stdout.parsed, e.g. /processes/0/pid ('' is the root; "
        "'~1' stands for '/', '~0' for '~')."))


class CompareOptions(StrictOptions):
    """``compare_results``: what changed between two retained results of the same command."""

    base_id: ResultId
    current_id: ResultId
    keys: list[FieldName] | None = Field(default=None, min_length=1, max_length=64, description=(
        "Row fields that identify a row, for commands without built-in identity rules "
        "(git status/log/branch and kubectl -o json have them)."))
    ignore_fields: list[FieldName] | None = Field(default=None, max_length=64, description=(
        "Row fields whose changes are not reported (e.g. age, time)."))
    strict: bool = Field(default=False, description=(
        "Refuse (identity_unknown) instead of comparing when context, schema or tool versions differ."))


@dataclass(frozen=True)
class OptionsError:
    """A refused call: ``param`` is the dotted name of the first offending parameter."""

    param: str
    message: str
    valid: tuple[str, ...] = ()

    def text(self) -> str:
        tail = f" (valid: {', '.join(self.valid)})" if self.valid else ""
        return f"{self.message}{tail}"


O = TypeVar("O", bound=StrictOptions)

_TYPE_WORDS = {
    "bool_type": "a boolean", "int_type": "an integer", "string_type": "a string",
    "list_type": "a list", "dict_type": "an object", "float_type": "a number",
    "model_type": "an object", "literal_error": "one of the listed values",
}


def build(model: type[O], raw: Mapping[str, Any] | Any) -> O | OptionsError:
    """Validate ``raw`` (the call's arguments as received) into ``model``, or say what is wrong."""
    if not isinstance(raw, Mapping):
        return OptionsError("", f"arguments must be an object, got {type(raw).__name__}")
    try:
        opts = model.model_validate(dict(raw))
    except ValidationError as exc:
        return _first_error(model, exc)
    return _not_bytes(opts) or opts


#: A lone surrogate that stands for no byte: ``surrogateescape`` (how Python reads a shell's
#: argv, and how a JSON client writes a byte that is not UTF-8: ``\udcff``) uses U+DC80–U+DCFF only.
_NOT_A_BYTE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def _not_bytes(opts: StrictOptions) -> OptionsError | None:
    """``cmd``, ``args`` and ``cwd`` are byte strings (docs/envelope.md, "Exact names"): a lone
    surrogate U+DC80–U+DCFF is the byte 0x80–0xFF; any other cannot be passed to a program."""
    texts = [(name, getattr(opts, name, None)) for name in ("cmd", "cwd")]
    texts += [(f"args.{i}", a) for i, a in enumerate(getattr(opts, "args", None) or ())]
    for param, text in texts:
        if isinstance(text, str) and not text.isascii() and _NOT_A_BYTE.search(text):
            return OptionsError(param, f"parameter '{param}' holds a lone surrogate that stands for no byte "
                                       "(only \\udc80-\\udcff, a byte 0x80-0xff that is not UTF-8, can be passed)")
    return None


def _first_error(model: type[StrictOptions], exc: ValidationError) -> OptionsError:
    err = exc.errors(include_url=False)[0]
    loc = [str(p) for p in err["loc"]]
    param = clip(".".join(loc), PARAM_ECHO)  # a key is caller input too: a 10 MB name is not echoed
    kind = err["type"]
    if kind == "extra_forbidden":
        owner = _model_at(model, loc[:-1])
        note = owner.unknown_notes.get(loc[-1]) if owner else None
        return OptionsError(param, f"unknown parameter '{param}'" + (f": {note}" if note else ""),
                            tuple(owner.model_fields) if owner else ())
    if kind == "missing":
        return OptionsError(param, f"missing required parameter '{param}'")
    got = err.get("input")
    shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    if len(shown) > 80:
        shown = shown[:77] + "..."
    if kind == "literal_error":
        allowed = err.get("ctx", {}).get("expected", "")
        return OptionsError(param, f"parameter '{param}' must be one of {allowed}, got {shown}")
    want = _TYPE_WORDS.get(kind)
    if want is not None:
        return OptionsError(param, f"parameter '{param}' must be {want}, got {type(got).__name__} {shown}")
    return OptionsError(param, f"parameter '{param}': {err['msg']}, got {shown}")


def _model_at(model: type[StrictOptions], loc: list[str]) -> type[StrictOptions] | None:
    """The options model that owns the key at ``loc`` (list indices skipped)."""
    current: Any = model
    for part in loc:
        if part.isdigit():
            continue
        field = current.model_fields.get(part) if isinstance(current, type) else None
        if field is None:
            return None
        current = _inner_model(field.annotation)
    return current if isinstance(current, type) and issubclass(current, StrictOptions) else None


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, StrictOptions):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


# -- jobs (docs/jobs.md) ---------------------------------------------------------------------

JOB_TIMEOUT = ("Milliseconds the job may run before its process tree is killed (failure.reason: timeout in its "
               "envelope). Default guard.max_timeout_ms (jobs are for long commands); at most that.")
JobId = Annotated[str, Field(min_length=1, max_length=64, description="job_id as job_start answered it.")]


class JobStartOptions(RunOptions):
    """``job_start``: ``run``'s arguments; the command runs in the background (docs/jobs.md)."""

    timeout_ms: int | None = Field(default=None, ge=1, le=MAX_INT, description=JOB_TIMEOUT)


class JobIdOptions(StrictOptions):
    """``job_status`` / ``job_stop``: one job."""

    job_id: JobId


class JobOutputOptions(StrictOptions):
    """``job_output``: the next page of a job's output."""

    job_id: JobId
    cursor: str | None = Field(default=None, min_length=1, max_length=4096, description=(
        "next_cursor of the previous page, unchanged. Unset: from the oldest byte still kept."))


class JobStopOptions(JobIdOptions):
    """``job_stop``: end one job (its whole process tree)."""
