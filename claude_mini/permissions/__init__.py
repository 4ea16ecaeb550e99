"""Who may use which tool: one package; a Bash call's decision reads in three files.

    decisions.py      Allow / Deny / Ask, the modes, the ToolPolicy protocol, RuleError
    rules.py          rules in Claude Code's syntax: parse_rule, Rule, CommandPattern, PathPattern
    policy.py         PermissionPolicy: the session's mode and rules, the decision order in its docstring
    bash.py           the Bash steps: which commands rules match, reads of denied files, allow rules, suggestions
    request.py        one tool call as the rules see it (paths both ways, a Bash line's candidates)
    secret_reads.py   reads of credentials, which ask over any allow rule
    protected.py      files whose edit asks in every mode but bypass
    memory_folder.py  the memory folder's layout, refused in every mode
    extraction.py     ExtractionPolicy (the memory-extraction fork's) and Restrictions
    chain.py          Guard and PolicyChain: the guards around a policy, built once by the runtime

Where is the Bash decision: policy.py (the order), bash.py (each step for a Bash line) and
claude_mini/shell/read_only.py (which commands run unasked); what a line might run, which deny
and ask rules match, comes from claude_mini/shell/candidates.py.
"""

from claude_mini.permissions.chain import Guard, PolicyChain
from claude_mini.permissions.decisions import (
    MODES,
    Allow,
    Ask,
    Decision,
    Deny,
    RuleError,
    ToolPolicy,
)
from claude_mini.permissions.extraction import ExtractionPolicy
from claude_mini.permissions.policy import PermissionPolicy
from claude_mini.permissions.rules import (
    EDIT_TOOLS,
    READ_TOOLS,
    CommandPattern,
    PathPattern,
    Rule,
    parse_rule,
)

__all__ = [
    "EDIT_TOOLS",
    "MODES",
    "READ_TOOLS",
    "Allow",
    "Ask",
    "CommandPattern",
    "Decision",
    "Deny",
    "ExtractionPolicy",
    "Guard",
    "PathPattern",
    "PermissionPolicy",
    "PolicyChain",
    "Rule",
    "RuleError",
    "ToolPolicy",
    "parse_rule",
]
