"""``parism describe [CMD]``: the environment, or one command's policy and parser."""

from __future__ import annotations

import argparse
from typing import Any

from parism.cli.common import emit, exit_status


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("describe", parents=[common], help="describe the environment or one command")
    p.add_argument("cmd", nargs="?", help="a command name")
    p.set_defaults(handler=main)


def main(ns: argparse.Namespace) -> int:
    import parism

    result = parism.create_engine(ns.config).describe(ns.cmd)
    emit(result)
    return exit_status(result.failure is None, result.failure)
