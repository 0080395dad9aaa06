"""Front ends over the API: the CLI, the MCP server, the evaluation harness."""
