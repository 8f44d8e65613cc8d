"""What holds the coding agent: its stop hook, the agents' settings it writes, the MCP server."""
