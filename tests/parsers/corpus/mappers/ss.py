"""ss: names agree with jc (netid, state, recv_q, send_q, local/peer address and port); jc moves a
``%iface`` scope into ``interface`` while Parism keeps it in the address and also sets
``interface``; jc's ``opts.process_id`` ↔ Parism ``processes``."""

from __future__ import annotations

from typing import Any

from tests.parsers.corpus.mappers._util import compare_rows, num, same

_FIELDS = [("netid", "netid", same), ("state", "state", same), ("recv_q", "recv_q", num),
           ("send_q", "send_q", num), ("local_address", "local_address", same),
           ("local_port", "local_port", same), ("peer_address", "peer_address", same),
           ("peer_port", "peer_port", same), ("path", "path", same), ("channel", "channel", same),
           ("pid", "pid", num), ("interface", "interface", same), ("link_layer", "link_layer", same)]


def _jc_row(r: dict[str, Any]) -> dict[str, Any]:
    out = dict(r)
    if out.get("interface") and out.get("local_address") and "%" not in out["local_address"]:
        out["local_address"] = f"{out['local_address']}%{out['interface']}"
    procs = (out.get("opts") or {}).get("process_id")
    if procs:
        out["_pids"] = sorted(int(p) for p in procs)
    return out


def check(parsed: dict[str, Any], expected: list[Any], entry: dict[str, Any]) -> list[str]:
    ours = parsed.get("connections", [])
    theirs = [_jc_row(r) for r in expected]
    problems = compare_rows("connections", ours, theirs, _FIELDS)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if "_pids" in b and sorted({p["pid"] for p in a.get("processes", [])}) != b["_pids"]:
            problems.append(f"connections[{i}].processes pids != jc {b['_pids']}")
    return problems
