"""Entry point for `claude-mini` and `python -m claude_mini`.

`--version` is answered here, before typer (0.1 s) or the anthropic SDK (over
1 s) is imported, so it is as fast as the interpreter allows.
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
    from claude_mini.cli import run

    run(args)


if __name__ == "__main__":
    main()
