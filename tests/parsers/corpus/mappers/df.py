"""df: jc ``filesystem/type/1k_blocks|512_blocks|1024_blocks|size/used/available/use_percent|
capacity_percent/mounted_on/iused/ifree/iused_percent`` ↔ Parism filesystems."""

from __future__ import annotations

from typing import Any

from tests.parsers.fs.corpus_helpers import rows, same

_BLOCKS = {"1k_blocks": 1024, "512_blocks": 512, "1024_blocks": 1024}


def check(parsed: Any, expected: list[dict], entry: dict) -> list[str]:
    problems: list[str] = []
    got = rows(parsed, "filesystems", expected, problems)
    for i, (g, e) in enumerate(zip(got, expected)):
        where = f"row {i} ({e['filesystem']!r})"
        for key in ("filesystem", "mounted_on", "type", "iused", "ifree", "iused_percent"):
            same(problems, where, key, g.get(key), e.get(key))
        same(problems, where, "use_percent", g.get("use_percent"), e.get("use_percent", e.get("capacity_percent")))
        unit = next((u for k, u in _BLOCKS.items() if k in e), None)
        if unit is not None:
            block_key = next(k for k in _BLOCKS if k in e)
            same(problems, where, "size_bytes", g.get("size_bytes"), e[block_key] * unit)
            for k in ("used", "available"):
                same(problems, where, f"{k}_bytes", g.get(f"{k}_bytes"), e[k] * unit if e.get(k) is not None else None)
        elif "size" in e:
            # jc converts -h text with its own rounding; compare within 1 %
            for k in ("size", "used", "available"):
                want, have = e.get(k), g.get(f"{k}_bytes_approx")
                if want is not None and (have is None or abs(have - want) > max(0.01 * want, 1024)):
                    problems.append(f"{where}: {k}_bytes_approx = {have!r} ({g.get(k)!r}), jc says {want!r}")
    return problems
