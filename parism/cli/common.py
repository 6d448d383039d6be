"""What the subcommands share: the ``-- CMD ARGS`` operand, JSON layout, exit statuses (spec decision 9)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # keep --help/--version free of pydantic
    from parism.wire.envelope import Failure, WireModel

EXIT_OK = 0
EXIT_NOT_OK = 1
EXIT_USAGE = 2


def emit(model: WireModel) -> None:
    """Print the wire JSON: indented for a person at a terminal, compact for a pipe."""
    sys.stdout.write(model.to_json(indent=2 if sys.stdout.isatty() else None) + "\n")
    sys.stdout.flush()


def exit_status(ok: bool, failure: Failure | None) -> int:
    """0 when ok, 2 when the configuration is unusable (spec decision 12), 1 for any other failure."""
    if failure is not None and failure.kind == "config" and failure.reason == "invalid_config":
        return EXIT_USAGE
    return EXIT_OK if ok else EXIT_NOT_OK


def add_command_operand(parser: argparse.ArgumentParser) -> None:
    """The command to act on, written after ``--`` so its flags are not read as ours (argparse's
    own usage line for ``nargs="+"`` repeats the metavar: ``CMD [ARGS ...] [CMD [ARGS ...] ...]``)."""
    parser.usage = "%(prog)s [OPTIONS] -- CMD [ARGS ...]"
    parser.add_argument("argv", nargs="+", metavar="CMD [ARGS ...]", help="command and its arguments (after --)")


def command_of(ns: argparse.Namespace) -> tuple[str, list[str]]:
    argv: list[str] = ns.argv
    return argv[0], argv[1:]


def split_command(words: list[str]) -> list[str]:
    """The seed's rule (contract §18): one word is split on spaces, several are taken as they are."""
    return words[0].split() if len(words) == 1 else list(words)
