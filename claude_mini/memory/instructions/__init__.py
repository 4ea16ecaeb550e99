"""Layer 1: the instruction hierarchy — CLAUDE.md, AGENTS.md, rules and @imports.

    load_instructions(cwd) -> InstructionSet     discovery, reading, @imports, rules set aside
    InstructionSet.render()                       the system prompt section (built once per session)
    AttachmentTracker.on_path_touched(path)       path-scoped rules and nested files, lazily
    lint(), to_json()                             data for `claude-mini context [--lint|--json]`

One module per part:

    loader.py        discovery and load order, @imports, rules set aside (load_instructions)
    entries.py       what loading produces: InstructionFile, Skipped, ConditionalRule, InstructionSet
    scope.py         LoadContext: which folders count, excludes, trust, credential locations
    reading.py       reading one file safely (size, binary, UTF-8, text file types)
    markdown.py      HTML comments removed and @imports found, outside code
    attachments.py   AttachmentTracker and InstructionPart: lazy rules and nested files
    report.py        lint() and to_json() for `claude-mini context`

Frontmatter (a rule's `paths:`) is read by `claude_mini.base.frontmatter`, shared with Layer 2.

Load order, lowest priority first (position is priority, so nothing is merged):
managed CLAUDE.md, managed rules/ -> user CLAUDE.md, user rules/ -> for each
folder from the top of the filesystem (never `/`) down to the cwd: CLAUDE.md
(AGENTS.md when there is no CLAUDE.md), .claude/CLAUDE.md, the unconditional
rules under .claude/rules/ (recursive, sorted by relative path), CLAUDE.local.md.
Each file's @imports follow it, depth first.

Decisions the design leaves open:
- Every file is shown and deduplicated by its real path (symlinks resolved).
- Rules folders are searched recursively at every level (managed and user too).
  Globs of managed/user rules are relative to the project root; those of a
  `.claude/rules` folder to the folder holding `.claude/`, even when `rules`
  is a symlink elsewhere.
- The project root defaults to the checkout holding the cwd (`paths.checkout_root`:
  git's work-tree top when it holds the cwd, so a linked worktree is its own), else the cwd.
- `@~/` means the user's OS home, as in Claude Code. Imports may resolve inside
  the project root, the cwd, the OS home, $CLAUDE_MINI_HOME or the managed folder.
- Trust (DESIGN.md section 8): a project-level file whose real path is outside the project
  root, the cwd, $CLAUDE_MINI_HOME and the managed folder is loaded only when the
  folder is trusted, otherwise skipped with a notice: an import that resolves
  there, and a file found in the repository (CLAUDE.md, AGENTS.md, CLAUDE.local.md,
  a rule, a rules folder, a nested file) that is a link to there. Files found in
  folders above the repository are the user's and need no trust. `to_json` lists
  every such file for `claude-mini context`.
- Known credential locations (`base/credentials.py`: ~/.ssh, ~/.aws, .env files, ...)
  are never loaded, trusted or not, whatever kind of file, checked on the path as
  found and resolved.
- `@token` is an import only if it contains `/` or `.`; a missing target without
  a text extension (`@pytest.mark.skip`, `@types/node`) is prose and ignored.
- Code spans are recognised within one line; indented code blocks are not code
  (list items indented four spaces are far more common in instruction files).
- Files over MAX_FILE_BYTES are skipped; NUL bytes mean binary (skipped);
  invalid UTF-8 is loaded with U+FFFD replacements and a warning.
- Malformed frontmatter, or a `paths:` that is neither string nor list of
  strings: warning, and the whole file is loaded as unconditional text.
- Managed files cannot be excluded by `claudeMdExcludes` (managed always wins).
  Exclude globs are gitignore-style, matched against absolute paths. Those of an
  untrusted repository (`trust.RepositoryOnly`) exclude only files found inside it.
- A conditional rule's own @imports are resolved when it is attached.
- A nested folder (below the cwd) gets the same per-folder set as an ancestor:
  CLAUDE.md/AGENTS.md, .claude/CLAUDE.md, its unconditional .claude/rules,
  CLAUDE.local.md; its conditional rules join the pool from then on.
- Globs are matched both against the path as given and its real path.
- Paths in the records are absolute `str` (real paths): they go straight into
  the prompt and JSON, and building ~300 Path objects cost a third of the read time.
"""

from claude_mini.base.frontmatter import _simple_frontmatter, parse_frontmatter
from claude_mini.memory.instructions.attachments import (
    TOUCHING_TOOLS,
    Attachment,
    AttachmentTracker,
    InstructionPart,
    attachment_loads,
    instruction_loads,
)
from claude_mini.memory.instructions.entries import (
    CYCLE,
    DUPLICATE,
    EXCLUDED,
    HEADER,
    UNTRUSTED,
    ConditionalRule,
    Entry,
    InstructionFile,
    InstructionSet,
    Skipped,
    path_forms,
)
from claude_mini.memory.instructions.loader import MAX_IMPORT_DEPTH, load_instructions, rule_globs
from claude_mini.memory.instructions.markdown import (
    fenced_regions,
    find_imports,
    scan_markdown,
    strip_html_comments,
)
from claude_mini.memory.instructions.reading import MAX_FILE_BYTES, TEXT_EXTENSIONS, TEXT_NAMES
from claude_mini.memory.instructions.report import LINT_MAX_CHARS, lint, outside_imports, to_json
from claude_mini.memory.instructions.scope import LoadContext

__all__ = [
    "CYCLE",
    "DUPLICATE",
    "EXCLUDED",
    "HEADER",
    "LINT_MAX_CHARS",
    "MAX_FILE_BYTES",
    "MAX_IMPORT_DEPTH",
    "TEXT_EXTENSIONS",
    "TEXT_NAMES",
    "TOUCHING_TOOLS",
    "UNTRUSTED",
    "Attachment",
    "AttachmentTracker",
    "ConditionalRule",
    "Entry",
    "InstructionFile",
    "InstructionPart",
    "InstructionSet",
    "LoadContext",
    "Skipped",
    "attachment_loads",
    "instruction_loads",
    "_simple_frontmatter",  # tests pin the fast YAML path to PyYAML's answers
    "fenced_regions",
    "find_imports",
    "lint",
    "load_instructions",
    "outside_imports",
    "parse_frontmatter",
    "path_forms",
    "rule_globs",
    "scan_markdown",
    "strip_html_comments",
    "to_json",
]
