"""Entry point for `claude-mini` and `python -m claude_mini`.

`--version` and `--help` are answered here, and a bare `claude-mini` goes
straight to the REPL, before typer and rich (0.3 s) or
the anthropic SDK (over 1 s) are imported, so they are as fast as the
interpreter allows. The help text is typer's own rendering, saved in
cli_help.txt by scripts/update_help.py; a test fails when it is stale.
"""

from __future__ import annotations

import sys

from claude_mini import __version__


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        print(f"{__version__} (claude-mini)")
        return
    if args in (["-h"], ["--help"]):
        import os.path

        with open(os.path.join(os.path.dirname(__file__), "cli_help.txt"), encoding="utf-8") as fh:
            sys.stdout.write(fh.read())
        return
    from claude_mini.log_route import route_log  # startup: --version and --help import nothing more

    route_log()  # internal warnings never reach the screen; cli.root routes them again for --debug
    if not args:  # the everyday `claude-mini`: straight to the REPL, without typer (0.1-0.5 s)
        from pathlib import Path

        from claude_mini.config import load_config  # startup: --version and --help import nothing more
        from claude_mini.signals import install_exit_handlers  # startup: --version and --help import nothing more
        from claude_mini.ui.repl import run_repl  # startup: --version and --help import nothing more

        install_exit_handlers()  # SIGTERM/SIGHUP end the running tools' processes too

        sys.exit(run_repl(load_config(Path.cwd())))
    from claude_mini.cli import run  # startup: typer and rich only for flags and subcommands

    run(args)


if __name__ == "__main__":
    main()
