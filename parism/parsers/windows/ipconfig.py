"""ipconfig (Windows) — host IP configuration and one record per adapter.

Schema::

    {"hostname"?: str, "dns_suffix"?: str, "dns_suffix_search_list"?: [str], "node_type"?: str,
     "ip_routing_enabled"?: bool, "wins_proxy_enabled"?: bool,
     "adapters": [{"name": str, "type": str, "description"?: str, "mac_address"?: str|None,
                   "dhcp_enabled"?: bool, "ipv4": [str], "subnet_mask"?: str, "ipv6": [str],
                   "link_local_ipv6": [str], "gateway": [str], "dns_servers": [str],
                   "dhcp_server"?: str, "media_state"?: str, "dns_suffix"?: str,
                   "other": {label: str|[str]}}]}

Every address keeps all its values (several IPv6 addresses, IPv6 and IPv4 default gateways on
continuation lines — contract §22 #51); status suffixes such as ``(Preferred)`` are dropped from the
address. Labels other than the English ones land in ``other`` unchanged.
"""

from __future__ import annotations

import re
from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.windows._labels import Item, dotted, snake

_ADAPTER = re.compile(r"^(?P<type>\S.*?) adapter (?P<name>.+):\s*$")
_STATUS = re.compile(r"\((Preferred|Deprecated|Tentative|Duplicate)\)$")
_LISTS = {"ipv4_address": "ipv4", "autoconfiguration_ipv4_address": "ipv4", "ip_address": "ipv4",
          "ipv6_address": "ipv6", "temporary_ipv6_address": "ipv6", "link_local_ipv6_address": "link_local_ipv6",
          "default_gateway": "gateway", "dns_servers": "dns_servers"}
_SCALARS = {"description": "description", "physical_address": "mac_address", "subnet_mask": "subnet_mask",
            "dhcp_server": "dhcp_server", "media_state": "media_state",
            "connection_specific_dns_suffix": "dns_suffix"}
_BOOLS = {"dhcp_enabled", "autoconfiguration_enabled", "ip_routing_enabled", "wins_proxy_enabled",
          "netbios_over_tcpip"}


def _bool(v: str) -> bool | str:
    return {"yes": True, "no": False, "enabled": True, "disabled": False}.get(v.lower(), v)


def _addresses(item: Item) -> list[str]:
    return [_STATUS.sub("", v).strip() for v in [item.value, *item.more] if v]


def _adapter(kind: str, name: str, items: list[Item]) -> dict[str, Any]:
    a: dict[str, Any] = {"name": name, "type": kind, "ipv4": [], "ipv6": [], "link_local_ipv6": [],
                         "gateway": [], "dns_servers": [], "other": {}}
    for it in items:
        key = snake(it.label)
        if key in _LISTS:
            a[_LISTS[key]].extend(_addresses(it))
        elif key in _SCALARS:
            a[_SCALARS[key]] = it.value or None
        elif key in _BOOLS:
            a[key] = _bool(it.value)
        else:
            a["other"][it.label] = [it.value, *it.more] if it.more else it.value
    return a


def parse(text: str, pin: ParseInput) -> dict[str, Any]:
    sections: list[tuple[str, str, list[str]]] = [("", "", [])]
    for line in text.splitlines():
        line = line.rstrip("\r")
        m = _ADAPTER.match(line)
        if m:
            sections.append((m.group("type"), m.group("name"), []))
        elif line.strip() and not line.startswith(("Windows IP Configuration", "Windows-IP")):
            sections[-1][2].append(line)
    out: dict[str, Any] = {}
    for it in dotted(sections[0][2]):
        key = snake(it.label)
        if key == "host_name":
            out["hostname"] = it.value
        elif key == "primary_dns_suffix":
            out["dns_suffix"] = it.value or None
        elif key == "dns_suffix_search_list":
            out["dns_suffix_search_list"] = [v for v in [it.value, *it.more] if v]
        elif key in _BOOLS:
            out[key] = _bool(it.value)
        else:
            out[key] = it.value
    out["adapters"] = [_adapter(k, n, dotted(lines)) for k, n, lines in sections[1:]]
    if not out["adapters"] and "hostname" not in out:
        raise Unrecognized("no adapter sections and no Host Name")
    return out


PARSER = Parser(
    id="ipconfig",
    contract=Contract(max_positionals=1, positional_pattern=r"(?i)/all"),
    parse=parse,
    os=frozenset({"windows"}),
    rows_key="adapters",
    row_fields=("name", "type", "description", "mac_address", "dhcp_enabled", "ipv4", "subnet_mask", "ipv6",
                "link_local_ipv6", "gateway", "dns_servers", "dhcp_server", "media_state", "dns_suffix", "other"),
    examples=(("/all",), ()),
)
