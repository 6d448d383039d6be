"""``parism config``: every effective setting and the layer it came from.

Text by default (``key = value  # origin``, one per line, sorted); ``--json`` for tools.  A bad
configuration prints each problem naming the file and the key, and exits 2 (spec decision 12).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from parism.cli.common import EXIT_OK, EXIT_USAGE


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("config", parents=[common], help="print the effective configuration")
    p.add_argument("--json", action="store_true", help="print {key: {value, origin}} as JSON")
    p.set_defaults(handler=main)


def main(ns: argparse.Namespace) -> int:
    from parism.config import load_config
    from parism.run.sandbox.identity import readable_by_calls

    loaded = load_config(ns.config, project_access=readable_by_calls)
    if loaded.errors:
        for problem in loaded.errors:
            print(f"parism: invalid configuration: {problem}", file=sys.stderr)
        return EXIT_USAGE
    effective: dict[str, dict[str, Any]] = loaded.effective()
    if ns.json:
        indent = 2 if sys.stdout.isatty() else None
        print(json.dumps(effective, indent=indent, sort_keys=True, ensure_ascii=False))
        return EXIT_OK
    for key in sorted(effective):
        entry = effective[key]
        value = json.dumps(entry["value"], ensure_ascii=False)
        print(f"{key} = {value}  # {entry['origin']}")
    return EXIT_OK
