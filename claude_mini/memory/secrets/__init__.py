"""The secret guard: no credential is written into the memory folder (nor the team folder).

    guard.py   SecretGuard: the policy guard that refuses a Write/Edit whose result holds one
    scan.py    what looks like a credential: typed tokens, assignments, cookies, key bodies
    values.py  what a value looks like: stand-ins, references, key categories, length checks
    rules.py   the well-kept rule set (gitleaks/Betterleaks and Veles rules, offline)
    fold.py    the text as the scan sees it (invisible characters, confusables, escapes)

Importing this package has no side effects; import the modules themselves.
"""
