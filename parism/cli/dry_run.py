"""``parism dry-run -- CMD ARGS…``: the guard's decision only; nothing is executed."""

from __future__ import annotations

import argparse
from typing import Any

from parism.cli.common import (
    EXIT_USAGE,
    add_command_operand,
    command_of,
    emit,
    exit_status,
)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("dry-run", parents=[common], help="check a command against the guard")
    p.add_argument("--cwd", help="working directory (default: the current one)")
    add_command_operand(p)
    p.set_defaults(handler=main)


def main(ns: argparse.Namespace) -> int:
    import parism

    cmd, args = command_of(ns)
    result = parism.create_engine(ns.config).dry_run(cmd, args, ns.cwd)
    emit(result)
    if result.reason == "invalid_config":
        return EXIT_USAGE
    return exit_status(result.would_pass, None)
