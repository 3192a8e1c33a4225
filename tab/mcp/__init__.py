"""The tab as a Model Context Protocol server, for agents that run in other harnesses.

    python -m tab.mcp --workspace DIR [--record DIR] [--transport stdio|http]

Every tool call goes through one `WorkspaceEnv` with the `Tab` plugged in, exactly as in our loop:
same capture, status line, replies and `tab.json`. Docs: docs/mcp.md.
"""
