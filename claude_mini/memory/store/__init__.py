"""Layer 2: the project's memory folder, its topic files, the MEMORY.md index and the usage record.

Layout of the folder (`paths.memory_dir(cwd)`, DESIGN.md sections 4 and 5):

    MEMORY.md       the index, one line per memory: `- [Title](file.md) — short hook`
    <topic>.md      one memory: YAML frontmatter (name, description, type, ...) + body
    usage.json      how often and when each memory was recalled (for forgetting)
    archive/        deleted memories: moved here, never unlinked; archive/ARCHIVE.md keeps
                    each one's index line, why and when it left, and its usage entry
    logs/           daily logs (memory.mode "log"); not memories

One module per part:

    folder.py        file names of the layout, which files are memories, reading one safely
    topic.py         a topic file: parse (never raises) and format; MemoryRecord
    index.py         MEMORY.md: entries, the locked rewrite, the capped view for the prompt
    archive.py       archive/ and ARCHIVE.md
    usage.py         usage.json
    memory_store.py  MemoryStore: list, read, write, delete, using the four above
    prompt.py        the system-prompt section
    errors.py        MemoryStoreError and its kinds

Frontmatter YAML is read by `claude_mini.base.frontmatter`, shared with Layer 1.
The folder is created on the first write, never on construction or import.
Every write is atomic and every read-modify-write of a shared file (MEMORY.md,
usage.json) holds a cross-process lock, so two sessions saving at once lose
nothing. Bad files (broken frontmatter, binary, non-UTF-8) are listed with a
flag or skipped with a reason; they never raise out of `list()`.
"""

from claude_mini.base.frontmatter import dump_frontmatter
from claude_mini.memory.store.archive import (
    ARCHIVE_HEADER,
    ArchivedMemory,
    ArchiveEntry,
    ArchiveIndex,
    archive_index_line,
    parse_archive_index,
)
from claude_mini.memory.store.errors import (
    AmbiguousMemoryName,
    InvalidMemory,
    MemoryNotFound,
    MemoryStoreError,
)
from claude_mini.memory.store.folder import (
    ARCHIVE_DIR,
    ARCHIVE_INDEX_FILENAME,
    HEAD_LINES,
    HEAD_READ_BYTES,
    INDEX_FILENAME,
    LIST_READ_BYTES,
    LOGS_DIR,
    READ_MAX_BYTES,
    USAGE_FILENAME,
    SkippedFile,
    iter_memory_entries,
    not_a_file,
    read_text_head,
    safe_filename,
    slugify,
)
from claude_mini.memory.store.index import (
    INDEX_HOOK_MAX_CHARS,
    INDEX_MAX_BYTES,
    INDEX_MAX_LINES,
    IndexEntry,
    MemoryIndex,
    index_line,
    normalise_target,
    parse_index,
    render_index_for_prompt,
    retarget_index_line,
)
from claude_mini.memory.store.memory_store import MemoryStore
from claude_mini.memory.store.prompt import memory_prompt_section
from claude_mini.memory.store.topic import (
    MEMORY_TYPES,
    MemoryRecord,
    ParsedMemory,
    derive_memory,
    epoch_of,
    format_memory,
    iso_utc,
    parse_memory_text,
    record_from_parsed,
    record_from_text,
)
from claude_mini.memory.store.usage import UsageEntry, UsageRecord

__all__ = [
    "ARCHIVE_DIR",
    "ARCHIVE_HEADER",
    "ARCHIVE_INDEX_FILENAME",
    "HEAD_LINES",
    "HEAD_READ_BYTES",
    "INDEX_FILENAME",
    "INDEX_HOOK_MAX_CHARS",
    "INDEX_MAX_BYTES",
    "INDEX_MAX_LINES",
    "LIST_READ_BYTES",
    "LOGS_DIR",
    "MEMORY_TYPES",
    "READ_MAX_BYTES",
    "USAGE_FILENAME",
    "AmbiguousMemoryName",
    "ArchiveEntry",
    "ArchiveIndex",
    "ArchivedMemory",
    "IndexEntry",
    "InvalidMemory",
    "MemoryIndex",
    "MemoryNotFound",
    "MemoryRecord",
    "MemoryStore",
    "MemoryStoreError",
    "ParsedMemory",
    "SkippedFile",
    "UsageEntry",
    "UsageRecord",
    "archive_index_line",
    "derive_memory",
    "dump_frontmatter",
    "epoch_of",
    "format_memory",
    "index_line",
    "iso_utc",
    "iter_memory_entries",
    "memory_prompt_section",
    "normalise_target",
    "not_a_file",
    "parse_archive_index",
    "parse_index",
    "parse_memory_text",
    "read_text_head",
    "record_from_parsed",
    "record_from_text",
    "render_index_for_prompt",
    "retarget_index_line",
    "safe_filename",
    "slugify",
]
