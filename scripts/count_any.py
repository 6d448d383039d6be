#!/usr/bin/env python3
"""Count function parameters annotated bare ``Any`` (issue #24's typed seams).

Reads the source with ``ast`` (nothing is imported): a parameter counts when its annotation is
exactly ``Any`` / ``typing.Any`` (also as the string ``"Any"``); ``dict[str, Any]`` and the
like do not. Prints one line per parameter and the total.

    python3 scripts/count_any.py [--root DIR] [PATH ...]   # default: the seam packages

Run it on another checkout with ``--root`` to compare (e.g. a ``git worktree`` of an old commit).
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

#: engine, pipeline, sandbox and guard, and the packages they moved to (docs/architecture.md)
SEAMS = ("parism/engine.py", "parism/pipeline.py", "parism/guard", "parism/run", "parism/output",
         "parism/cli/run.py")


def bare_any(ann: ast.expr | None) -> bool:
    return ((isinstance(ann, ast.Name) and ann.id == "Any")
            or (isinstance(ann, ast.Attribute) and ann.attr == "Any")
            or (isinstance(ann, ast.Constant) and ann.value == "Any"))


def params(path: Path) -> list[tuple[int, str, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]:
                if bare_any(arg.annotation):
                    out.append((node.lineno, node.name, arg.arg))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("paths", nargs="*", default=list(SEAMS))
    ns = ap.parse_args(argv)
    total = 0
    for name in ns.paths:
        target = ns.root / name
        if not target.exists():
            continue  # an old layout: the path did not exist there
        for f in [target] if target.is_file() else sorted(target.rglob("*.py")):
            for line, func, arg in params(f):
                print(f"{f.relative_to(ns.root)}:{line} {func}({arg})")
                total += 1
    print(f"total {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
