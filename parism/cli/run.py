"""``parism run [--cwd D] [--format F] -- CMD ARGS…``: one call through the whole pipeline."""

from __future__ import annotations

import argparse
from typing import Any

from parism.cli.common import add_command_operand, command_of, emit, exit_status


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("run", parents=[common], help="run a command, print the JSON envelope")
    p.add_argument("--cwd", help="working directory (default: the current one)")
    p.add_argument("--format", choices=("json", "compact", "json-no-raw"),
                   help="default: json, compacted automatically for many rows")
    p.add_argument("--include-diff", dest="include_diff", action="store_true",
                   help="report files created/deleted/modified under cwd")
    add_command_operand(p)
    p.set_defaults(handler=main)


def main(ns: argparse.Namespace) -> int:
    """Run through the cancellable async path so Ctrl-C/SIGTERM kill the command's tree too."""
    import parism
    from parism.cli.signals import run_until_signal

    cmd, args = command_of(ns)
    engine = parism.create_engine(ns.config)
    env = run_until_signal(
        lambda: engine.arun(cmd, args, ns.cwd, format=ns.format, includeDiff=ns.include_diff)
    )
    if isinstance(env, int):  # interrupted: the child tree is already gone, nothing to print
        return env
    emit(env)
    return exit_status(env.ok, env.failure)
