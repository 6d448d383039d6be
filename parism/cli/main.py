"""``parism`` entry point: argparse front door that dispatches to one module per subcommand.

Subcommand modules import the engine (and the MCP SDK, for ``serve``) only inside their
``main``, so ``parism --version`` or ``parism parse`` never pays for what it does not use.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from parism.cli import (
    config_cmd, describe, dry_run, eval_cmd, inspect_cmd, packs, parse, policy, run, selftest, serve,
)
from parism.cli.common import EXIT_USAGE

_SUBCOMMANDS = (serve, run, dry_run, describe, parse, config_cmd, policy, packs, inspect_cmd, eval_cmd, selftest)


class _VersionAction(argparse.Action):
    """``--version`` that resolves the version only when asked (keeps start-up lazy)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        # parism/__init__ is lazy: no engine, no pydantic
        from parism import __version__

        sys.stdout.write(f"parism {__version__}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--config", metavar="FILE", default=argparse.SUPPRESS,
        help="configuration file to use instead of the global and project ones",
    )
    parser = argparse.ArgumentParser(
        prog="parism", parents=[common],
        description="Run shell commands safely and get structured JSON. Without a subcommand: "
        "serve MCP on stdio.",
    )
    parser.add_argument("-V", "--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _SUBCOMMANDS:
        module.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the subcommand; returns the process exit status."""
    parser = build_parser()
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors exit 2
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if not hasattr(ns, "config"):
        ns.config = None
    handler = getattr(ns, "handler", serve.main)
    return int(handler(ns))

