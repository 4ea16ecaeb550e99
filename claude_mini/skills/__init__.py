"""Custom slash commands and skills in Claude Code's file formats.

    catalog.py    find and parse `.claude/commands/**/*.md` and `.claude/skills/<name>/SKILL.md`
                  (project and `$CLAUDE_MINI_HOME`) into a Catalog; the model's listing within a budget
    expand.py     a body -> the text sent: arguments, `!` shell snippets, `${CLAUDE_SKILL_DIR}`
    tool.py       the Skill tool: loads one body into the conversation on demand
    lifecycle.py  SkillPart: the session's catalog and listing, invoked skills, turn-scoped
                  allowed-tools and model, the attachment after a compaction, /context lines

The design, and where it differs from Claude Code 2.1.332, is in docs/extensions.md "Custom commands and skills".
"""
