"""What a shell line does, read from its text: the second line behind the sandbox.

    parse.py         a Bash line -> its simple commands; the strict parser's refusals
    read_only.py     which commands only read (the allow-list and each program's options)
    candidates.py    every command a line might run, looked for inside substitutions and wrappers
    runners.py       the catalogue of programs that run other programs or code
    unseeable.py     commands that run something their text does not show
    bash_reads.py    which files a read-only line reads (for Read deny rules and credentials)
    git_safety.py    the environment and options that keep read-only git from running code

Used by the permission chain (claude_mini/permissions/) and by the Bash tool.
"""
