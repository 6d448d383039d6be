"""Build contract hints: the same argv without the display-only flags a parser does not read.

One implementation for every parser, so short bundles (``-sI``), ``--name=value`` and flags
that take a value (``-o json``, ``-ojson``, ``--output=json``) are handled the same way
everywhere; everything after ``--`` is kept as is.
"""

from __future__ import annotations

from collections.abc import Iterable


def drop_args(args: Iterable[str], short: str = "", long: Iterable[str] = (), add: Iterable[str] = (),
              valued: Iterable[str] = ()) -> list[str]:
    """Remove display-only flags: letters in ``short`` from bundles, exact ``long`` names (with
    or without ``=value``), and ``valued`` flags (``-B``, ``--block-size``) together with their
    value (attached, or the next argument). ``add`` flags that are missing are put first. Used
    by contract hints."""
    valued_set = set(valued)
    longs = set(long) | {v for v in valued_set if v.startswith("--")}
    valued_short = "".join(v[1] for v in valued_set if len(v) == 2)
    out: list[str] = []
    items = list(args)
    i = 0
    while i < len(items):
        a = items[i]
        i += 1
        if a == "--":
            out += items[i - 1:]
            break
        if a == "-" or not a.startswith("-"):
            out.append(a)
            continue
        if a.startswith("--"):
            name, eq, _ = a.partition("=")
            if name not in longs:
                out.append(a)
            elif not eq and name in valued_set and i < len(items):
                i += 1
            continue
        kept = ""
        for j, c in enumerate(a[1:], start=1):
            if c in valued_short:
                if j == len(a) - 1 and i < len(items):
                    i += 1  # the value is the next argument
                break
            if c not in short:
                kept += c
        if kept:
            out.append("-" + kept)
    for flag in add:
        if flag not in out:
            out.insert(0, flag)
    return out


def drop_flags(args: Iterable[str], names: Iterable[str]) -> list[str]:
    """``args`` without the flags in ``names`` (``-x`` letters, also inside bundles, and
    ``--long`` names with or without ``=value``); their values are not consumed."""
    names = set(names)
    short = "".join(n[1] for n in names if len(n) == 2 and n[0] == "-" and n[1] != "-")
    return drop_args(args, short, [n for n in names if n.startswith("--")])
