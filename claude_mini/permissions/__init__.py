"""Who may use which tool: one package, read in three files for a Bash call.

    decisions.py   Allow / Deny / Ask, the modes, the ToolPolicy protocol, RuleError
    rules.py       rules in Claude Code's syntax: parse_rule, Rule, CommandPattern, PathPattern
    policy.py      PermissionPolicy (the session's mode and rules, the decision order in its
                   docstring) and ExtractionPolicy (the memory-extraction fork's)
    chain.py       Guard and PolicyChain: the guards around a policy, built once by the runtime

What a shell line does comes from claude_mini/shell/ (the parser the rules are matched on).
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
from claude_mini.permissions.policy import ExtractionPolicy, PermissionPolicy
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
