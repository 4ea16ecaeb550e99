"""MCP: the Model Context Protocol servers a session connects to (config.py: which ones and how)."""
