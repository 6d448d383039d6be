"""systeminfo: host_name → hostname, *_physical_memory_mb → *_memory_mb, hotfixs → hotfixes,
network_cards (dhcp_enabled only where the output prints it: jc defaults it to false), and the
plain text labels."""

TEXT = ("os_name", "os_version", "time_zone", "bios_version", "domain", "logon_server", "system_locale")


def check(parsed, expected, entry):
    problems: list[str] = []
    pairs = {"hostname": (parsed.get("hostname"), expected["host_name"]),
             "total_memory_mb": (parsed.get("total_memory_mb"), expected["total_physical_memory_mb"]),
             "available_memory_mb": (parsed.get("available_memory_mb"), expected["available_physical_memory_mb"]),
             "hotfixes": (parsed.get("hotfixes"), expected["hotfixs"]),
             "processors": (parsed.get("processors"), expected["processors"])}
    pairs.update({k: (parsed.get(k), expected.get(k)) for k in TEXT})
    problems += [f"{k}: parism={a!r} jc={b!r}" for k, (a, b) in pairs.items() if a != b]
    cards, jc_cards = parsed.get("network_cards", []), expected["network_cards"]
    if len(cards) != len(jc_cards):
        problems.append(f"network card count {len(cards)} vs {len(jc_cards)}")
    for i, (o, e) in enumerate(zip(cards, jc_cards)):
        for k, v in e.items():
            if v is None or (k == "dhcp_enabled" and k not in o):
                continue
            if o.get(k) != v:
                problems.append(f"network_cards[{i}].{k}: parism={o.get(k)!r} jc={v!r}")
    return problems
