"""``parism selftest [--json]``: the containment promises, checked on this host with the effective
configuration (:mod:`parism.selftest`). Exit 0 only when every promise held, 1 when any is broken
(``sandbox.mode = "off"`` included), 2 for a usage error or an unusable configuration (as every
subcommand, spec decision 12)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from parism.cli.common import EXIT_NOT_OK, EXIT_OK, EXIT_USAGE


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("selftest", parents=[common],
                       help="attack this host's sandbox with the effective configuration: a table of promises")
    p.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    p.set_defaults(handler=main)


def main(ns: argparse.Namespace) -> int:
    from parism.selftest import run_selftest

    report = run_selftest(ns.config)
    if ns.json:
        sys.stdout.write(json.dumps(report.to_json()) + "\n")
    else:
        sys.stdout.write(report.table())
    if report.rows and report.rows[0].name == "configuration":
        return EXIT_USAGE
    return EXIT_OK if report.ok else EXIT_NOT_OK
