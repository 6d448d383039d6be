"""``parism`` / ``parism serve``: the MCP server on stdio (the only subcommand that imports mcp)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("serve", parents=[common], help="serve MCP on stdio (the default)")
    p.set_defaults(handler=main)


def main(ns: argparse.Namespace) -> int:
    from parism.mcp_server import serve

    return serve(ns.config)
