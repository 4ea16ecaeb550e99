"""claude_mini: a terminal coding assistant with a five-layer memory system."""

__version__ = "0.1.0"
