"""Subagents: the Agent tool runs a task in a child agent with its own context.

types.py       the built-in types (general-purpose, Explore) and `.claude/agents/*.md`
tool.py        the Agent tool: {description, prompt, subagent_type}; its description lists the types
runner.py      one child: a fork on the parent's exact prefix, or its own prompt and tools
lifecycle.py   SubagentPart (runtime.subagents): types, runs, limits, listeners for the UIs
"""
