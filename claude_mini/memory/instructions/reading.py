"""Reading one instruction file safely: regular text files of a bounded size, nothing else.

Files over MAX_FILE_BYTES are skipped; NUL bytes mean binary (skipped);
invalid UTF-8 is loaded with U+FFFD replacements and a note. Imports must
name a text file type, which keeps `@id_rsa` or `@build/app.bin` out of the prompt.
"""

from __future__ import annotations

import os

from claude_mini.base.safe_read import Unreadable, kind_refusal, os_reason, read_capped

__all__ = ["MAX_FILE_BYTES", "TEXT_EXTENSIONS", "TEXT_NAMES", "Unreadable", "is_text_name", "os_reason", "read_text"]

MAX_FILE_BYTES = 200_000  # larger files are skipped: they would swamp the context

# Imports must name a text file; this keeps `@id_rsa` or `@build/app.bin` out of the prompt.
TEXT_EXTENSIONS = frozenset(
    {
        ".md",
        ".markdown",
        ".mdx",
        ".txt",
        ".text",
        ".rst",
        ".adoc",
        ".org",
        ".json",
        ".jsonc",
        ".yaml",
        ".yml",
        ".toml",
        ".ini",
        ".cfg",
        ".conf",
        ".xml",
        ".csv",
        ".tsv",
        ".html",
        ".htm",
        ".css",
        ".scss",
        ".sql",
        ".graphql",
        ".proto",
        ".py",
        ".pyi",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".go",
        ".rs",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".swift",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".rb",
        ".php",
        ".pl",
        ".lua",
        ".r",
        ".dart",
        ".ex",
        ".exs",
        ".erl",
        ".hs",
        ".ml",
        ".clj",
        ".sh",
        ".bash",
        ".zsh",
        ".fish",
        ".ps1",
        ".vue",
        ".svelte",
        ".tf",
        ".gradle",
        ".cmake",
        ".mk",
    }
)
TEXT_NAMES = frozenset({"Makefile", "Dockerfile", "Justfile", "LICENSE", "README", "CODEOWNERS"})


def read_text(real: str, info: os.stat_result) -> tuple[str, list[str]]:
    """Decoded text of a regular file (`info` is its stat) and notes about it; raises Unreadable.

    The bytes come through safe_read, the reader every file that reaches a prompt shares: a
    non-blocking open, the type checked again on what was opened, at most the cap + 1 read.
    """
    problem = kind_refusal(info.st_mode)  # a FIFO would block, a folder is no file
    if problem:
        raise Unreadable("not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise Unreadable(f"too large ({info.st_size:,} bytes; limit {MAX_FILE_BYTES:,})")
    data = read_capped(real, MAX_FILE_BYTES)
    if b"\0" in data:
        raise Unreadable("binary file")
    try:
        return data.decode("utf-8").removeprefix("\ufeff"), []
    except UnicodeDecodeError:
        note = "not valid UTF-8: undecodable bytes shown as U+FFFD"
        return data.decode("utf-8", errors="replace").removeprefix("\ufeff"), [note]


def is_text_name(path: str) -> bool:
    """Whether the file name says text (an extension in TEXT_EXTENSIONS or a name in TEXT_NAMES)."""
    name = os.path.basename(path)
    return name in TEXT_NAMES or os.path.splitext(name)[1].lower() in TEXT_EXTENSIONS
