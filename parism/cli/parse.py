"""``parism parse [--os OS] -- CMD ARGS…``: parse saved output read from stdin, run nothing.

Example: ``ls -l | parism parse -- ls -l``.  Bytes that are not UTF-8 become U+FFFD.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from parism.cli.common import add_command_operand, command_of, emit, exit_status


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("parse", parents=[common], help="parse saved output from stdin")
    p.add_argument("--os", choices=("linux", "macos", "freebsd", "windows"),
                   help="the OS the output came from (default: this host's)")
    add_command_operand(p)
    p.set_defaults(handler=main)


def main(ns: argparse.Namespace) -> int:
    import parism

    cmd, args = command_of(ns)
    # bytes that are not UTF-8 stay themselves (lone surrogates): names come back exact, with
    # <field>_b64 (docs/envelope.md, "Exact names"); raw shows U+FFFD
    raw = sys.stdin.buffer.read().decode("utf-8", errors="surrogateescape")
    env = parism.create_engine(ns.config).parse_output(cmd, args, raw, os=ns.os)
    emit(env)
    return exit_status(env.ok, env.failure)
