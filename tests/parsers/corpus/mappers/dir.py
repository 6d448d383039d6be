"""dir: filename → name, dir → type == "directory", size → size_bytes, parent → directory,
date/time text as printed."""


def check(parsed, expected, entry):
    problems: list[str] = []
    ours = parsed.get("entries", [])
    if len(ours) != len(expected):
        problems.append(f"entry count: parism={len(ours)} jc={len(expected)}")
    for i, (o, e) in enumerate(zip(ours, expected)):
        pairs = {"name": (o.get("name"), e["filename"]), "directory?": (o.get("type") == "directory", e["dir"]),
                 "size_bytes": (o.get("size_bytes"), e["size"]), "date": (o.get("date"), e["date"]),
                 "time": (o.get("time"), e["time"]), "directory": (o.get("directory"), e.get("parent"))}
        problems += [f"entries[{i}].{k}: parism={a!r} jc={b!r}" for k, (a, b) in pairs.items() if a != b]
    return problems
