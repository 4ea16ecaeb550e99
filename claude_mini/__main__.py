"""Entry point for `claude-mini` and `python -m claude_mini`.

`--version` and `--help` are answered here, and a bare `claude-mini` goes
straight to the REPL, before typer and rich (0.3 s) or
the anthropic SDK (over 1 s) are imported, so they are as fast as the
interpreter allows. The help text is typer's own rendering, saved in
cli_help.txt by scripts/update_help.py; a test fails when it is stale.

Print mode will send a request, so the SDK import starts here, in the background
(`preload_sdk`): a prompt piped in from a slow command arrives while it runs.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from claude_mini import __version__

        print(f"{__version__} (claude-mini)")
        return
    if args in (["-h"], ["--help"]):
        import os.path

        with open(os.path.join(os.path.dirname(__file__), "cli_help.txt"), encoding="utf-8") as fh:
            sys.stdout.write(fh.read())
        return
    if not args:  # the everyday `claude-mini`: straight to the REPL, without typer (0.1-0.5 s)
        from pathlib import Path

        from claude_mini.config import load_config
        from claude_mini.ui.repl import run_repl

        sys.exit(run_repl(load_config(Path.cwd())))
    from claude_mini.cli import SUBCOMMANDS, run

    if args[0] not in SUBCOMMANDS and _prints(args):
        from claude_mini.llm.client import preload_sdk

        preload_sdk()
    run(args)


def _prints(args: list[str]) -> bool:
    """A guess, before typer parses `args`, that this run is print mode with the Anthropic
    client (a wrong guess only costs a background import)."""
    import os

    flags = set(args)
    if not flags & {"-p", "--print"} or flags & {"-h", "--help", "--version"}:
        return False
    from claude_mini.llm.local import is_local_model

    models: list[str | None] = [b for a, b in zip(args, args[1:], strict=False) if a == "--model"]
    models += [a.removeprefix("--model=") for a in args if a.startswith("--model=")]
    models.append(os.environ.get("CLAUDE_MINI_MODEL"))
    return not any(is_local_model(m) for m in models)


if __name__ == "__main__":
    main()
