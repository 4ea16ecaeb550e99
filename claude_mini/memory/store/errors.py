"""Why a memory operation cannot be done: one base class, so callers catch one thing."""

from __future__ import annotations


class MemoryStoreError(Exception):
    """A memory operation that cannot be done; the message says why and what to do."""


class MemoryNotFound(MemoryStoreError):
    """No memory matches the given name or filename."""


class AmbiguousMemoryName(MemoryStoreError):
    """A `name:` value is shared by several files; the message lists them."""


class InvalidMemory(MemoryStoreError, ValueError):
    """Arguments to `write` that would produce a bad memory file."""
