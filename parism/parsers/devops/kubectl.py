"""kubectl — ``get pods`` and ``get events`` tables; everything else as native JSON.

Schemas::

    get pods    {"resource": "pods", "pods": [{"namespace"?, "name", "ready": {"current", "total"}|None,
                 "status", "restarts": int|None, "last_restart"?: str, "age", "ip"?, "node"?,
                 "nominated_node"?, "readiness_gates"?}]}
    get events  {"resource": "events", "events": [{"namespace"?, "last_seen", "type", "reason",
                 "object", "message", ...}]}

Columns are sliced at the header positions, so ``RESTARTS 3 (5m ago)`` (→ restarts 3,
last_restart "5m ago") and ``-A`` (a NAMESPACE column) no longer shift fields (contract §22 #36).
Leading ``-n ns``/``--context`` before ``get`` are understood. Any other ``get`` — or
``-o yaml`` — gets the hint ``-o json``; ``-o json`` output goes straight to ``parsed``.
"""

from __future__ import annotations

import re
from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.hints import drop_args
from parism.parsers.table import read_table, snake, to_int

_LEAD = {"-n": "value", "--namespace": "value", "--context": "value", "--cluster": "value",
         "--kubeconfig": "path", "--request-timeout": "value", "-A": "bool", "--all-namespaces": "bool"}
_GET = {**_LEAD, "-o": "value", "--output": "value", "-l": "data", "--selector": "data",
        "--field-selector": "data", "--show-labels": "bool", "--no-headers": "bool", "--sort-by": "data",
        "-w": "bool", "--watch": "bool"}
_MULTI = ("NOMINATED NODE", "READINESS GATES", "LAST SEEN", "FIRST SEEN")
_RESTARTS = re.compile(r"^(\d+)(?:\s+\((.+)\))?$")


def _json_hint(args: list[str]) -> list[str]:
    return drop_args(args, long=("--show-labels", "--no-headers"), valued=("-o", "--output")) + ["-o", "json"]


def _wants_json(args: list[str]) -> bool:
    return any(a in ("json",) or a in ("-ojson", "--output=json") for a in args)


def _table_contract() -> Contract:
    return Contract(
        flags=_GET, values={"-o": "wide", "--output": "wide"},
        supports=lambda t: "--show-labels/--no-headers change the columns" if t.has("--show-labels", "--no-headers")
        else ("--watch never ends" if t.has("-w", "--watch") else None),
        hint=_json_hint)


def _ready(text: str) -> dict[str, int] | None:
    m = re.fullmatch(r"(\d+)/(\d+)", text)
    return {"current": int(m.group(1)), "total": int(m.group(2))} if m else None


def parse_pods(text: str, pin: ParseInput) -> dict[str, Any]:
    names, rows = read_table(text, "NAME" if "NAMESPACE" not in text.split("\n", 1)[0] else "NAMESPACE", _MULTI)
    pods = []
    for r in rows:
        pod: dict[str, Any] = {snake(k): (v if v not in ("<none>", "") else None) for k, v in r.items()}
        pod["ready"] = _ready(r.get("READY", ""))
        m = _RESTARTS.match(r.get("RESTARTS", ""))
        pod["restarts"] = int(m.group(1)) if m else None
        if m and m.group(2):
            pod["last_restart"] = m.group(2)
        if not pod.get("name"):
            raise Unrecognized(f"pod row without a name: {r}")
        pods.append(pod)
    return {"resource": "pods", "pods": pods}


def parse_events(text: str, pin: ParseInput) -> dict[str, Any]:
    first = text.lstrip().split(None, 1)[0] if text.strip() else "LAST"
    _, rows = read_table(text, "NAMESPACE" if first == "NAMESPACE" else "LAST SEEN", _MULTI)
    events = [{snake(k): v for k, v in r.items()} for r in rows]
    for e in events:
        if "count" in e:
            e["count"] = to_int(e["count"])
    return {"resource": "events", "events": events}


_pods = Parser(id="kubectl-get-pods", contract=_table_contract(), parse=parse_pods, rows_key="pods",
               row_fields=("namespace", "name", "ready", "status", "restarts", "last_restart", "age", "ip", "node"),
               header_lines=1, json_output=_wants_json)
_events = Parser(id="kubectl-get-events", contract=_table_contract(), parse=parse_events, rows_key="events",
                 row_fields=("namespace", "last_seen", "type", "reason", "object", "message"), header_lines=1,
                 json_output=_wants_json)
_other_get = Parser(id="kubectl-get", evidence=True, contract=Contract(
    flags=_GET, supports=lambda t: "only pods and events tables are parsed; use -o json", hint=_json_hint),
    json_output=_wants_json)

PARSER = Parser(
    id="kubectl",
    contract=Contract(),
    leading_flags=_LEAD,
    subcommands={**{f"get {w}": _pods for w in ("pods", "pod", "po")},
                 **{f"get {w}": _events for w in ("events", "event", "ev")},
                 "get": _other_get},
    examples=(("get", "pods"), ("get", "pods", "-A"), ("get", "deployments", "-o", "json")),
)
