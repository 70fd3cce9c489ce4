"""The MCP server: agents and assistants ask the store through tools that are thin calls into the read layer."""
