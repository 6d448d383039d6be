"""The fast path's fence: every use of the MCP SDK's internals is in this module.

Parism serves the SDK's ``MCPServer`` over its own stdio transport (:mod:`parism.server.stdio`:
bounded lines, early start of ``run``, answers written by their worker). That needs what the
SDK does not publish: the low-level server an ``MCPServer`` drives (``_lowlevel_server``), its
handler table (``_request_handlers``, to advertise only what Parism serves) and middleware list
(to drop the no-op tracing middleware, ``mcp.server._otel``) and extensions table (tasks is a core capability, not an extension to advertise), and the context-carrying memory
streams its run loop reads (``mcp.shared._context_streams``).

:func:`check` looks for every one of them once, at start-up, on the server being built. When
the installed SDK lacks one (another release than the tested range below), nothing of the fast
path is used: the server runs the SDK's own ``run_stdio_async`` (slower, and without Parism's
line bound and early start, but correct), logs a warning naming what is missing, and
``describe`` says so (``server.fast_path``). ``PARISM_FAST_PATH=off`` forces that fallback.

``tests/unit/test_fastpath.py`` fails loudly when the installed SDK falls back, and checks the
answers of the fallback are the fast path's.
"""

from __future__ import annotations

import importlib
import logging
import os
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger("parism.server")

#: The SDK releases the tests ran on; ``pyproject.toml`` pins the same range.
TESTED_SDK = ">=2.3,<2.4"

#: ``PARISM_FAST_PATH``: ``auto`` (default: the fast path when the SDK has what it needs) or
#: ``off`` (the plain SDK path).
MODES = ("auto", "off")

#: (module, attribute) the fast path imports from the SDK
_IMPORTS = (
    ("mcp.shared._context_streams", "create_context_streams"),
    ("mcp.shared._context_streams", "ContextReceiveStream"),
    ("mcp.shared._context_streams", "ContextSendStream"),
    ("mcp.server._otel", "OpenTelemetryMiddleware"),
)


@dataclass(frozen=True)
class FastPath:
    """Whether this server uses the fast path, and why not."""

    active: bool
    sdk: str
    missing: tuple[str, ...] = ()
    forced_off: bool = False

    def describe(self) -> dict[str, Any]:
        """``describe.server``: what the MCP side runs on."""
        out: dict[str, Any] = {"fast_path": self.active, "sdk": self.sdk, "sdk_tested": TESTED_SDK}
        if not self.active:
            why = ("PARISM_FAST_PATH=off" if self.forced_off else
                   f"the installed SDK lacks {', '.join(self.missing)}")
            out["note"] = (f"plain SDK stdio path ({why}): slower; no early start of run, no bound on "
                           "request lines before the SDK reads them")
            out["missing"] = list(self.missing)
        return out


def sdk_version() -> str:
    try:
        return version("mcp")
    except PackageNotFoundError:
        return "unknown"


def mode(environ: os._Environ[str] | dict[str, str] = os.environ) -> str:
    """``PARISM_FAST_PATH``, checked: an unknown value is an error naming the valid ones."""
    value = environ.get("PARISM_FAST_PATH", "auto") or "auto"
    if value not in MODES:
        raise ValueError(f"PARISM_FAST_PATH={value!r} is not one of {', '.join(MODES)}")
    return value


def _missing_imports() -> list[str]:
    missing = []
    for module, name in _IMPORTS:
        try:
            if not hasattr(importlib.import_module(module), name):
                missing.append(f"{module}.{name}")
        except ImportError:
            missing.append(f"{module}.{name}")
    return missing


def _missing_on(server: MCPServer) -> list[str]:
    low = getattr(server, "_lowlevel_server", None)
    if low is None:
        return ["MCPServer._lowlevel_server"]
    missing = []
    for name, kind in (("run", None), ("create_initialization_options", None),
                       ("middleware", list), ("_request_handlers", dict), ("extensions", dict)):
        value = getattr(low, name, None)
        if value is None or (kind is not None and not isinstance(value, kind)) or (kind is None and not callable(value)):
            missing.append(f"lowlevel.Server.{name}")
    return missing


def check(server: MCPServer, environ: os._Environ[str] | dict[str, str] = os.environ) -> FastPath:
    """Whether ``server`` can take the fast path (everything it needs is there); a fallback is
    logged as a warning naming what is missing."""
    forced = mode(environ) == "off"
    missing = () if forced else tuple(_missing_imports() + _missing_on(server))
    status = FastPath(active=not forced and not missing, sdk=sdk_version(), missing=missing, forced_off=forced)
    if not status.active:
        log.warning("MCP fast path off: %s", status.describe()["note"])
    return status


# -- the internals, used only when check() found them ---------------------------------------

def lowlevel(server: MCPServer) -> Server[Any]:
    """The low-level server ``run_stdio_async`` drives (no public seam takes our streams)."""
    return server._lowlevel_server


def serve_only(server: MCPServer, served: frozenset[str]) -> None:
    """Drop the handlers of methods Parism does not serve, so they are not advertised
    (``MCPServer`` registers prompts and resources, which Parism has none of)."""
    handlers = lowlevel(server)._request_handlers
    for method in [m for m in handlers if m not in served]:
        del handlers[method]


def drop_extension(server: MCPServer, identifier: str) -> None:
    """Stop advertising an extension the server serves as a core capability (tasks)."""
    lowlevel(server).extensions.pop(identifier, None)


def drop_tracing(server: MCPServer) -> None:
    """The SDK's documented opt-out of its per-request span: drop its middleware."""
    from mcp.server._otel import OpenTelemetryMiddleware

    low = lowlevel(server)
    low.middleware = [m for m in low.middleware if not isinstance(m, OpenTelemetryMiddleware)]


def context_streams() -> Any:
    """``mcp.shared._context_streams``: the streams the low-level run loop reads and writes."""
    return importlib.import_module("mcp.shared._context_streams")
