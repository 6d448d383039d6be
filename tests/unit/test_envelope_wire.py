"""``Envelope.to_wire`` converts ``parsed`` apart from the rest of the envelope (it is faster);
every envelope must still serialise to exactly the bytes of the straightforward reference,
``model_dump(mode="json")`` (spec decision 10: ``_always`` fields keep null, others are absent),
on the CLI (``to_json``) and on both channels of an MCP tool result.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, Field
from pydantic_core import to_json

from parism.wire.envelope import (
    Alternative,
    Availability,
    CacheInfo,
    DescribeResult,
    DryRunResult,
    Envelope,
    Failure,
    FsDiff,
    Hint,
    InstallHint,
    Omission,
    OutputField,
    PageInfo,
    ParseError,
    RegexEngineReport,
    RegexFallback,
    Review,
    SandboxReview,
    Telemetry,
    WireModel,
)
from parism.server.tools import tool_result


class Aliased(BaseModel):
    """A model inside ``parsed`` whose alias differs from its name (the wire uses the name)."""

    value: int = Field(alias="VALUE")


def envelope(stdout: OutputField, stderr: OutputField | None = None, **extra: Any) -> Envelope:
    return Envelope(ok=True, exitCode=0, cmd="ls", args=["-la"], cwd="/tmp", duration_ms=3,
                    stdout=stdout, stderr=stderr or OutputField(raw=""), **extra)


LS_ROWS = {
    "entries": {
        "schema": ["mode", "links", "name", "target", "size_bytes", "permissions"],
        "rows": [
            ["drwxr-xr-x", 2, ".", None, 4096, {"owner": "rwx", "group": "r-x", "other": "r-x"}],
            ["lrwxrwxrwx", 1, "sh", "dash", 4, {"owner": "rwx", "group": "rwx", "other": "rwx"}],
        ],
    },
    "totals": {"blocks": 8, "unit": None},
    "_summary": "2 entries",
}

EXOTIC = {
    "nan": math.nan, "inf": math.inf, "-inf": -math.inf, "tiny": 1e-05, "big": 2**70, "neg0": -0.0,
    "tuple": (1, "a", None), "int_keys": {1: "one", 2: None}, "bytes": b"raw bytes",
    "when": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "model": Hint(args=["-l"]),
    "aliased": Aliased(VALUE=3), "text": 'é \u2028 \x00 "quoted" \\', "empty": [{}, [], ""],
    "nested": [[[{"deep": [1.5, True, False, None]}]]],
}

ENVELOPES = {
    "ok_rows": envelope(OutputField(raw="total 8\n", parsed=LS_ROWS)),
    "ok_list_and_stderr_parsed": envelope(OutputField(raw="[1]", parsed=[1, 2.5, "x", None]),
                                          OutputField(raw="{}", parsed={"warnings": ["w"]})),
    "falsy_parsed": envelope(OutputField(raw="0", parsed=0), OutputField(raw="", parsed="")),
    "false_parsed": envelope(OutputField(raw="false", parsed=False)),
    "exotic_parsed": envelope(OutputField(raw="?", parsed=EXOTIC)),
    "failure": Envelope(
        ok=False, exitCode=-1, cmd="rm", args=["-rf", "/"], cwd="/tmp", duration_ms=0,
        stdout=OutputField(raw=""), stderr=OutputField(raw=""),
        failure=Failure(kind="exec", reason="spawn_failed", message="not found", hint="install it",
                        availability=Availability(
                            status="missing",
                            install=InstallHint(command="apt-get install x", package="x", manager="apt"),
                            alternatives=[Alternative(cmd="busybox", args=["ls"], reason="present")])),
    ),
    "paged": envelope(OutputField(raw="a\nb\n"), page_info=PageInfo(
        page=1, page_size=2, total_lines=9, has_next=True, cache=CacheInfo(hit=True, age_ms=40))),
    "parse_error": envelope(OutputField(raw="garbage", parse_error=ParseError(
        reason="unsupported_format", message="ls: -Z is not parsed", hint=Hint(args=["-la"])))),
    "parsed_and_parse_error": envelope(OutputField(raw="{}", parsed={"rows": []}, parse_error=ParseError(
        reason="schema_violation", message="1 schema error(s)"))),
    "omission_telemetry_review": Envelope(
        ok=False, exitCode=1, signal="SIGKILL", cmd="ps", args=["aux"], cwd="/", duration_ms=12,
        stdout=OutputField(raw="", parsed={"rows": [{"pid": 1, "cmd": None}]}),
        stderr=OutputField(raw="warn\n"), diff=FsDiff(created=["a"], modified=["b"]), truncated=True,
        failure=Failure(kind="exec", reason="non_zero_exit", message="'ps' exited with code 1"),
        telemetry=Telemetry(guard_ms=0.1, exec_ms=10.25, parse_ms=1.0, redact_ms=0.0, total_ms=12,
                            raw_bytes=4096),
        review=Review(result_id="r1", content_hash="h", source_complete=True, parse_complete="unknown",
                      representation_lossless=False, privacy_transform="masked", retained=False,
                      warnings=["w"], sandbox=SandboxReview(level="full", namespace_class="isolated",
                                                            network=False)),
        omission=[Omission(stage="budget", reason="max_items", rows_total=900, rows_returned=500,
                           omitted_fields=["env"])],
        regex_engine=RegexEngineReport(used="re2", fallbacks=[RegexFallback(pattern="p", reason="r")]),
    ),
}

OTHERS: dict[str, WireModel] = {
    "dry_run": DryRunResult(would_pass=True),
    "describe": DescribeResult(version="0.1.0", guard_summary={"timeout_ms": 30000, "unset": None},
                               failure=Failure(kind="config", reason="invalid_config", message="m")),
}


def compact(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("name", list(ENVELOPES) + list(OTHERS))
def test_wire_bytes_equal_the_model_dump_reference(name: str) -> None:
    model = ENVELOPES.get(name) or OTHERS[name]
    reference = model.model_dump(mode="json")
    wire = model.to_wire()
    assert wire == reference
    assert compact(wire) == compact(reference)  # also tells true from 1 and 1.0 from 1
    assert to_json(wire) == to_json(reference)
    assert model.to_json() == compact(reference)  # the CLI
    result = tool_result(model, False)  # the MCP text block and structuredContent
    assert result["content"] == [{"type": "text", "text": to_json(reference).decode()}]
    assert result["structuredContent"] == reference


def test_reference_keeps_the_decision_10_nulls_and_drops_the_rest() -> None:
    """What the byte comparison above protects, spelled out once."""
    wire = ENVELOPES["paged"].to_wire()
    assert wire["stdout"] == {"raw": "a\nb\n", "parsed": None}
    assert "diff" in wire and wire["diff"] is None
    assert "failure" not in wire and "cache" in wire["page_info"]
    assert "reason" not in wire["page_info"]["cache"]
    exotic = ENVELOPES["exotic_parsed"].to_wire()["stdout"]["parsed"]
    assert exotic["nan"] is None and exotic["inf"] is None  # NaN is not JSON
    assert exotic["model"] == {"args": ["-l"]} and exotic["aliased"] == {"value": 3}
    assert exotic["int_keys"] == {"1": "one", "2": None} and exotic["tuple"] == [1, "a", None]


def test_wire_shares_nothing_with_the_envelope() -> None:
    """The wire dict goes to the SDK; the envelope's parsed value must not change under it."""
    env = envelope(OutputField(raw="", parsed={"rows": [{"a": 1}]}),
                   OutputField(raw="", parsed=["e"]))
    wire = env.to_wire()
    wire["stdout"]["parsed"]["rows"][0]["a"] = 2
    wire["stderr"]["parsed"].append("x")
    assert env.stdout.parsed == {"rows": [{"a": 1}]} and env.stderr.parsed == ["e"]
    assert env.to_wire()["stdout"]["parsed"] == {"rows": [{"a": 1}]}
