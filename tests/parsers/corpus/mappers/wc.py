"""wc: jc rows {filename, lines, words, characters} ↔ Parism entries + total (README mapping).

jc's ``characters`` is the third column of the default form, which wc documents as bytes."""

from __future__ import annotations


def check(parsed: dict, expected: list[dict], entry: dict) -> list[str]:
    rows = [dict(r) for r in parsed.get("entries", [])]
    if "total" in parsed:
        rows.append({**parsed["total"], "file": "total"})
    problems = []
    if len(rows) != len(expected):
        problems.append(f"{len(rows)} rows, jc has {len(expected)}")
    for i, (got, exp) in enumerate(zip(rows, expected)):
        want = {"file": exp.get("filename"), "lines": exp.get("lines"), "words": exp.get("words"),
                "bytes": exp.get("characters")}
        have = {k: got.get(k) for k in want}
        if have != want:
            problems.append(f"row {i}: {have} != {want}")
    return problems
