"""systeminfo (Windows) — host, OS, hardware and patch facts.

Schema: every label becomes a snake_case key with its text value (``host_name``, ``os_name``,
``os_version``, ``os_build_type`` … — the ``OS Build Type`` label is its own key, never confused
with ``OS Version``'s build, contract §22 #51), plus typed extras::

    {"hostname": str, "total_memory_mb": int, "available_memory_mb": int,
     "processors": [str], "hotfixes": [str], "network_cards": [{"name", "connection_name"?,
     "dhcp_enabled"?: bool, "dhcp_server"?, "status"?, "ip_addresses": [str]}], ...}

English labels are mapped to the stable names above; other languages keep their own snake_case
labels (no guessing).
"""

from __future__ import annotations

import re
from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.table import to_int
from parism.parsers.windows._labels import Item, by_column, snake

_MB = {"total_physical_memory": "total_memory_mb", "available_physical_memory": "available_memory_mb",
       "virtual_memory_max_size": "virtual_memory_max_size_mb",
       "virtual_memory_available": "virtual_memory_available_mb",
       "virtual_memory_in_use": "virtual_memory_in_use_mb"}
_INDEX = re.compile(r"^\[\d+\]:\s*(.*)$")


def _listed(item: Item) -> list[str]:
    return [m.group(1) for v in item.more if (m := _INDEX.match(v))]


def _nics(item: Item) -> list[dict[str, Any]]:
    """Cards are the least-indented ``[NN]:`` lines; deeper lines are their details, and
    ``[NN]:`` lines under ``IP address(es)`` are that card's addresses."""
    indents = [len(ln) - len(ln.lstrip()) for ln in item.raw_more if _INDEX.match(ln.strip())]
    card_indent = min(indents) if indents else 0
    cards: list[dict[str, Any]] = []
    for ln in item.raw_more:
        v = ln.strip()
        m = _INDEX.match(v)
        if m and len(ln) - len(ln.lstrip()) == card_indent:
            cards.append({"name": m.group(1), "ip_addresses": []})
        elif not cards:
            continue
        elif m:
            cards[-1]["ip_addresses"].append(m.group(1))
        elif ":" in v:
            key, _, val = v.partition(":")
            k, val = snake(key), val.strip()
            cards[-1][k] = {"yes": True, "no": False}.get(val.lower(), val) if k == "dhcp_enabled" else val
    return cards


def parse(text: str, pin: ParseInput) -> dict[str, Any]:
    items = by_column(text.splitlines())
    if not items:
        raise Unrecognized("no 'Label: value' lines")
    out: dict[str, Any] = {}
    for item in items:
        key = snake(item.label)
        if key == "hotfixs":
            out["hotfixes"] = _listed(item)
        elif key == "processors":
            out["processors"] = _listed(item)
        elif key == "network_cards":
            out["network_cards"] = _nics(item)
        elif key in _MB:
            out[_MB[key]] = to_int(item.value.split()[0]) if item.value else None
        else:
            out[key] = item.value if not item.more else [item.value, *item.more] if item.value else item.more
    if "host_name" in out:
        out["hostname"] = out["host_name"]
    if "os_name" not in out and "hostname" not in out:
        raise Unrecognized("no Host Name / OS Name labels")
    return out


PARSER = Parser(
    id="systeminfo",
    contract=Contract(max_positionals=0),
    parse=parse,
    os=frozenset({"windows"}),
    row_fields=("hostname", "os_name", "os_version", "total_memory_mb", "hotfixes", "network_cards"),
    examples=((),),
)
