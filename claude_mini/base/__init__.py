"""The bottom layer: general utilities every other package may use, importing nothing of claude_mini.

    paths.py           the home folder and the per-project folders (DESIGN.md section 4)
    fileutil.py        atomic_write (temp file + rename) and `locked` (a cross-process flock)
    safe_read.py       the one reader of files that reach a prompt or steer a session
    credentials.py     credential locations no prompt may carry
    frontmatter.py     the YAML header of a Markdown file (memories, rules, skills, agents)
    text.py            terminal-safe text (visible_controls), one_line, clip, within, estimate_tokens
    braces.py          brace expansion of globs (`*.{ts,tsx}`)
    clock.py           Clock: the wall clock a part is given (`time.time` outside tests)
    gitrun.py          git run with no repository config able to run code
    process_groups.py  a child's process group, ended as a whole
    notices.py         NoticeChannel: the one way anything tells the user something; say()

The layer contract (pyproject.toml, `lint-imports` in .ci/run) keeps it at the bottom: a module
here that needed a feature package would make every package depend on that one.
"""
