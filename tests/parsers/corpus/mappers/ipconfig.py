"""ipconfig /all: host_name → hostname; per adapter name, description, physical_address →
mac_address, dhcp_enabled, dns_servers, default_gateways → gateway, ipv4_addresses[].address →
ipv4, subnet_mask."""


def check(parsed, expected, entry):
    problems: list[str] = []
    if parsed.get("hostname") != expected["host_name"]:
        problems.append(f"hostname: {parsed.get('hostname')!r} vs {expected['host_name']!r}")
    ours = parsed.get("adapters", [])
    if len(ours) != len(expected["adapters"]):
        problems.append(f"adapter count {len(ours)} vs {len(expected['adapters'])}")
    for i, (o, e) in enumerate(zip(ours, expected["adapters"])):
        pairs = {"name": (o["name"], e["name"]), "description": (o.get("description"), e["description"]),
                 "mac_address": (o.get("mac_address"), e["physical_address"]),
                 "dhcp_enabled": (o.get("dhcp_enabled"), e["dhcp_enabled"]),
                 "dns_servers": (o["dns_servers"], e["dns_servers"]),
                 "gateway": (o["gateway"], e["default_gateways"]),
                 "ipv4": (o["ipv4"], [a["address"] for a in e["ipv4_addresses"]]),
                 "subnet_mask": (o.get("subnet_mask"), e["ipv4_addresses"][0]["subnet_mask"]
                                 if e["ipv4_addresses"] else None)}
        problems += [f"adapters[{i}].{k}: parism={a!r} jc={b!r}" for k, (a, b) in pairs.items() if a != b]
    return problems
