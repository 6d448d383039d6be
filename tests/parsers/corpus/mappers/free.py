"""free: jc rows {type: Mem|Swap, ...} ↔ parism {mem, swap}; plain/-w values are KiB in both;
-h: jc converts with decimal multipliers, parism keeps the text and a 1024-based approximation,
so those are compared within 8 % (1024³/1000³ ≈ 1.074)."""

from tests.parsers.corpus.mappers._util import close, diff

FIELDS = ("total", "used", "free", "shared", "buff_cache", "buffers", "cache", "available")


def check(parsed, expected, entry):
    problems: list[str] = []
    human = "-h" in entry["argv"]
    for row in expected:
        key = row["type"].lower()
        ours = parsed.get(key) or {}
        for f in FIELDS:
            if f not in row:
                continue
            if human:
                close(problems, f"{key}.{f}", ours.get(f"{f}_bytes_approx"), row[f], 0.08)
            else:
                diff(problems, f"{key}.{f}", ours.get(f), row[f])
    if not human:
        diff(problems, "unit", parsed.get("unit"), "KiB")
    return problems
