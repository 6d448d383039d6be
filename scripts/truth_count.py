#!/usr/bin/env python3
"""Count issue #25's live truth cases: right / wrong / refused / crash.

    .venv/bin/python scripts/truth_count.py [-v]
    PYTHONPATH=/path/to/other/tree .venv/bin/python scripts/truth_count.py   # judge another version

Builds the hostile tree of ``tests/parsers/fs/truth_cases.py`` in a fresh directory, runs every
case through ``create_engine().run`` (real guard, sandbox, parser; TZ unset) and judges the JSON
text against the kernel. The harness is loaded by file path, so the ``parism`` judged is the one
on ``sys.path`` (``PYTHONPATH`` first).
"""

from __future__ import annotations

import collections
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent / "tests" / "parsers" / "fs" / "truth_cases.py"


def main() -> int:
    verbose = "-v" in sys.argv[1:]
    spec = importlib.util.spec_from_file_location("truth_cases", HARNESS)
    assert spec is not None and spec.loader is not None
    tc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tc)
    os.environ.pop("TZ", None)
    import parism
    from parism.engine import create_engine

    with tempfile.TemporaryDirectory(prefix="parism-truth-") as tmp:
        os.chmod(tmp, 0o755)
        root = Path(tmp) / "tree"
        root.mkdir()
        root.chmod(0o755)
        tc.build(root)
        cfg = Path(tmp) / "parism.toml"
        cfg.write_text(f'[guard]\nallowed_paths = ["{tmp}"]\n')
        engine = create_engine(str(cfg))
        counts: collections.Counter[str] = collections.Counter()
        for cmd, args in tc.cases():
            verdict, detail = tc.run_case(engine, root, cmd, args)
            counts[verdict] += 1
            if verbose and verdict != "right":
                print(f"{verdict:8} {cmd} {' '.join(map(repr, args))[:70]}  {detail[:160]}")
    total = sum(counts.values())
    print(f"parism from {os.path.dirname(parism.__file__)}")
    print(f"{total} cases: right {counts['right']}, wrong {counts['wrong']}, refused {counts['refused']}, "
          f"crash {counts['crash']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
