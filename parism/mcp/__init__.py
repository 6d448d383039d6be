"""The MCP surface's parts that are not the server object itself: the tool table
(:mod:`parism.mcp.tools`) and, in front of the SDK, Parism's own JSON-RPC reading."""
