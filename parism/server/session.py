"""What the session advertises and how it refuses a call before the handshake.

- Capabilities are derived by the SDK from the handlers it has: ``MCPServer`` always registers
  prompts and resources, which Parism has none of, so a client was told to list both and got
  empty lists.  ``fastpath.serve_only`` keeps the handlers of :data:`SERVED`.
- ``tools/call`` before ``initialize`` got the SDK's generic ``-32602 Invalid request
  parameters`` (``mcp/server/runner.py``, the init gate, "pinned compat").  The code stays
  (clients key off it); :func:`initialise_first` says what is wrong and what to send.
- A second ``initialize`` on an initialised connection was accepted and answered again (issue
  27): :func:`initialise_first` refuses it with ``-32600`` (``reason: already_initialised``),
  and the session keeps what the first one negotiated.
"""

from __future__ import annotations

from typing import Any

from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import INVALID_PARAMS, INVALID_REQUEST

#: Methods Parism answers (``ping`` and the handshake are the SDK's own).
SERVED = frozenset({"ping", "tools/list", "tools/call", "server/discover",
                    # MCP 2025-11-25 tasks (parism/server/tasks.py; version-gated there)
                    "tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "parism/tasks/call"})

#: The SDK's init-gate error (``runner.py``): the only MCPError of that exact shape.
_SDK_GATE = (INVALID_PARAMS, "Invalid request parameters", "")


async def initialise_first(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Middleware: the SDK's init-gate refusal, reworded (same code, the method in ``data``);
    ``initialize`` once per connection (the SDK commits the first one's parameters to the
    connection, ``client_params``; a refusal here commits nothing)."""
    if ctx.method == "initialize" and getattr(ctx.session, "client_params", None) is not None:
        raise MCPError(
            INVALID_REQUEST,
            "Session already initialised: 'initialize' is sent once per session; this one was not applied",
            data={"method": "initialize", "reason": "already_initialised"},
        )
    try:
        return await call_next(ctx)
    except MCPError as exc:
        if (exc.code, exc.message, exc.data) != _SDK_GATE:
            raise
        raise MCPError(
            INVALID_PARAMS,
            f"Session not initialised: send 'initialize' (then 'notifications/initialized') before "
            f"'{ctx.method}'",
            data={"method": ctx.method, "reason": "not_initialised"},
        ) from None
