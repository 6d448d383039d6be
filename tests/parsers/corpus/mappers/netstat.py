"""netstat: jc ``netstat`` rows by ``kind``: network → connections (jc splits host/port, Parism
keeps the text in local_address and splits into local_host/local_port), route → routes,
interface → interfaces. jc's socket and macOS kernel rows are sections Parism skips (documented)."""

from __future__ import annotations

from typing import Any

from tests.parsers.corpus.mappers._util import compare_rows, num, placeholder, same


def _program(v: object) -> object:
    """jc keeps Windows ``[svchost.exe]`` brackets; Parism strips them. jc also files the note
    ``Can not obtain ownership information`` as a program name; Parism keeps it in ``info``."""
    if isinstance(v, str) and v.startswith("[") and v.endswith("]"):
        return v[1:-1]
    if v == "Can not obtain ownership information":
        return None
    return placeholder(v)


_CONN = [("proto", "proto", same), ("local_host", "local_address", same), ("local_port", "local_port", placeholder),
         ("foreign_host", "foreign_address", same), ("foreign_port", "foreign_port", placeholder),
         ("state", "state", placeholder), ("recv_q", "recv_q", num), ("send_q", "send_q", num),
         ("pid", "pid", num), ("program", "program_name", _program), ("user", "user", same),
         ("inode", "inode", num)]
_ROUTE = [("destination", "destination", same), ("gateway", "gateway", same), ("flags", "route_flags", same),
          ("iface", "iface", same), ("genmask", "genmask", same), ("metric", "metric", num),
          ("ref", "route_refs", num), ("use", "use", num), ("mss", "mss", num), ("window", "window", num),
          ("irtt", "irtt", num), ("mtu", "mtu", num), ("expire", "expire", placeholder)]
_IFACE = [("iface", "iface", same), ("mtu", "mtu", num), ("network", "network", same),
          ("address", "address", same), ("rx_ok", "rx_ok", num), ("tx_ok", "tx_ok", num),
          ("rx_err", "rx_err", num), ("tx_err", "tx_err", num), ("ipkts", "ipkts", num),
          ("opkts", "opkts", num), ("ierrs", "ierrs", num), ("oerrs", "oerrs", num), ("flg", "flg", same)]


def _jc_fixed(row: dict[str, Any]) -> dict[str, Any]:
    """Two narrow, hand-checked jc defects on BSD rows whose optional columns are blank:

    - FreeBSD ``-AaT`` UDP rows print no Rexmit/OOORcv/0-win numbers
      (``fffff80003ae81e8 udp4                       *.syslog           *.*``); jc then leaves the
      addresses null; those four fields are not compared for such rows.
    - macOS ``-Abn`` rows without a state (``icm4 … *.* *.* 1325516 0``) get rxbytes in jc's
      ``state``; a digits-only state on a non-raw protocol is moved back to ``rxbytes``.
    """
    fixed = dict(row)
    state = fixed.get("state")
    if isinstance(state, str) and state.isdigit() and not str(fixed.get("proto", "")).startswith("raw"):
        fixed["rxbytes"], fixed["state"] = int(state), None
    if fixed.get("local_address") is None and str(fixed.get("proto", "")).startswith("udp"):
        fixed["_skip"] = ("local_address", "local_port", "foreign_address", "foreign_port")
    return fixed


def _compare_connections(ours: list[Any], theirs: list[Any]) -> list[str]:
    problems: list[str] = []
    fixed = [_jc_fixed(r) for r in theirs]
    for i, (a, b) in enumerate(zip(ours, fixed)):
        skip = b.get("_skip", ())
        fields = [f for f in _CONN if f[1] not in skip] + [("rxbytes", "rxbytes", num)]
        problems += compare_rows(f"connections[{i}]", [a], [b], fields, limit=5)
        if b.get("program_name") == "Can not obtain ownership information" and b["program_name"] not in a.get("info", []):
            problems.append(f"connections[{i}].info lacks the ownership note")
    if len(ours) != len(theirs):
        problems.append(f"connections: {len(ours)} rows, jc has {len(theirs)}")
    return problems


def check(parsed: dict[str, Any], expected: list[Any], entry: dict[str, Any]) -> list[str]:
    conns = [r for r in expected if r.get("kind", "network") == "network"]
    problems = _compare_connections(parsed.get("connections", []), conns)
    problems += compare_rows("routes", parsed.get("routes", []), [r for r in expected if r.get("kind") == "route"], _ROUTE)
    problems += compare_rows("interfaces", parsed.get("interfaces", []),
                             [r for r in expected if r.get("kind") == "interface"], _IFACE)
    return problems
