"""Parism: run shell commands safely and get structured JSON back (library entry point).

Imports are lazy (PEP 562): ``import parism`` must stay cheap because the CLI and the MCP
server import it before they know whether a call needs the engine, the parsers or the SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Engine", "__version__", "create_engine"]

if TYPE_CHECKING:
    from parism.engine import Engine, create_engine


def __getattr__(name: str) -> Any:
    if name in ("Engine", "create_engine"):
        from parism import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'parism' has no attribute {name!r}")
