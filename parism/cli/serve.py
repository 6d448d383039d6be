"""``parism`` / ``parism serve``: the MCP server on stdio (the only subcommand that imports mcp)."""

from __future__ import annotations

import argparse
import gc
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("serve", parents=[common], help="serve MCP on stdio (the default)")
    p.set_defaults(handler=main)


def main(ns: argparse.Namespace) -> int:
    # Start-up only allocates what lives as long as the server (the SDK's ~80k objects of
    # models, ours, the engine): collector passes over them are wasted, about a quarter of the
    # import CPU. The server turns the collector back on, with all of it frozen, once the
    # engine is built (``mcp_server._warm_up``).
    gc.disable()
    try:
        from parism.server.app import serve

        return serve(ns.config)
    finally:
        gc.enable()  # for in-process callers, should the server end before its warm-up
