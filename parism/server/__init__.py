"""The MCP side: the server (:mod:`parism.server.app`), the tool table (:mod:`parism.server.tools`)
and, in front of the SDK, Parism's own JSON-RPC reading and stdio transport."""
