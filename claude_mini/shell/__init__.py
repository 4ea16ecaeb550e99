"""What a shell line does, read from its text: the second line behind the sandbox.

    bash_safety.py   parse a Bash line into the commands it may run; which are read-only
    bash_reads.py    which files a read-only line reads (for Read deny rules and credentials)
    git_safety.py    the environment and options that keep read-only git from running code

Used by the permission chain (claude_mini/permissions/) and by the Bash tool.
"""
