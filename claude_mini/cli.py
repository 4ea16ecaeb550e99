"""The `claude-mini` command: parse flags into a Config and hand over to print mode, the REPL or a subcommand.

`--version` answers before anything heavy is imported; the anthropic SDK is
only imported once a model is really needed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from typer._click.core import Context as TyperClickContext
from typer._click.formatting import HelpFormatter

from claude_mini import __version__
from claude_mini.base.notices import say
from claude_mini.config import Config, load_config
from claude_mini.config.flag_files import FlagValueError, mcp_config_servers, read_flag_json
from claude_mini.llm.anthropic_client import preload_sdk
from claude_mini.llm.local import is_local_model
from claude_mini.log_route import route_log
from claude_mini.signals import install_exit_handlers

SUBCOMMANDS = ("memory", "context", "hooks", "mcp", "checkpoints", "sandbox")
RULE_FLAGS = ("--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools")
MULTI_FLAGS = (*RULE_FLAGS, "--mcp-config", "--add-dir")  # flags that take every word up to the next flag
RESUME_FLAGS = ("-r", "--resume")
INPUT_FORMATS = ("text", "stream-json")
RULE_SHAPE = re.compile(r"[A-Z][A-Za-z0-9_]*(\(.*\))?$|mcp__")  # Read, Bash(git log:*), mcp__server__tool
TYPE_LABEL = re.compile(r" <(list\[)?(str|int|float|bool|path|file|text)\]?>")  # typer's `<str>`, `<list[str]>`


class PlainHelp(HelpFormatter):
    """--help rows without typer's Python type labels, rewritten before the columns are aligned so
    every command's help reads like the root's: `--type <str>` -> `--type TYPE`, `text... <list[str]>`
    -> `TEXT...`."""

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        super().write_dl([(plain_term(term), text) for term, text in rows], col_max, col_spacing)


def plain_term(term: str) -> str:
    """One --help row's left side without its type label (an option's value named after the option)."""
    label = TYPE_LABEL.search(term)
    if label is None:
        return term
    head = term[: label.start()]
    longs = re.findall(r"--([\w-]+)", head)
    return f"{head} {longs[-1].upper()}" if longs else head.upper()


# typer (0.29) vendors click and offers no per-parameter way to drop those labels; its Context's
# formatter is the one place every command's help goes through (tests/test_cli_help.py checks it).
TyperClickContext.formatter_class = PlainHelp

root_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


def _split_rules(values: list[str] | None) -> list[str]:
    """`--allowedTools "Read,Bash(git log:*)" Edit` -> individual rules (commas inside parentheses kept)."""
    rules: list[str] = []
    for value in values or []:
        depth, current = 0, ""
        for ch in value:
            if ch in ", " and depth == 0:
                if current.strip():
                    rules.append(current.strip())
                current = ""
                continue
            depth += (ch == "(") - (ch == ")")
            current += ch
        if current.strip():
            rules.append(current.strip())
    return rules


def _flag_settings(
    model: str | None, permission_mode: str | None, allowed: list[str] | None, disallowed: list[str] | None
) -> dict[str, Any]:
    """The command-line flags as a settings layer (it sits below managed settings)."""
    flags: dict[str, Any] = {}
    if model:
        flags["model"] = model
    perms: dict[str, Any] = {}
    if permission_mode:
        perms["defaultMode"] = permission_mode
    if allowed:
        perms["allow"] = _split_rules(allowed)
    if disallowed:
        perms["deny"] = _split_rules(disallowed)
    if perms:
        flags["permissions"] = perms
    return flags


def _fail(message: str, code: int, debug: bool = False) -> NoReturn:
    """Print a one-line error (a traceback too with --debug) and exit."""
    if debug:
        import traceback

        traceback.print_exc()
    say(message)
    raise typer.Exit(code)


@root_app.command(context_settings={"help_option_names": ["-h", "--help"]})
def root(
    prompt: Annotated[
        str | None,
        typer.Argument(metavar="PROMPT", help="Your request. With -p it runs once and exits.", show_default=False),
    ] = None,
    print_: Annotated[bool, typer.Option("-p", "--print", help="Run once, print the answer, exit.")] = False,
    output_format: Annotated[
        str, typer.Option("--output-format", metavar="FORMAT", help="With -p: text, json or stream-json.")
    ] = "text",
    model: Annotated[
        str | None,
        typer.Option("--model", metavar="NAME", help="Model id or alias: opus, sonnet, haiku (env CLAUDE_MINI_MODEL)."),
    ] = None,
    permission_mode: Annotated[
        str | None,
        typer.Option("--permission-mode", metavar="MODE", help="default, acceptEdits, plan or bypassPermissions."),
    ] = None,
    skip_permissions: Annotated[
        bool,
        typer.Option(
            "--dangerously-skip-permissions",
            help="Start in bypassPermissions mode (Claude Code's flag): nothing asks; deny and ask rules still apply.",
        ),
    ] = False,
    allowed_tools: Annotated[
        list[str] | None,
        typer.Option(
            "--allowedTools",
            "--allowed-tools",
            metavar="RULES...",
            help='Allow rules, comma- or space-separated: --allowedTools "Bash(git log:*)" Read. '
            "The flag takes every word up to the next flag: put a prompt before it or after --.",
        ),
    ] = None,
    disallowed_tools: Annotated[
        list[str] | None,
        typer.Option(
            "--disallowedTools", "--disallowed-tools", metavar="RULES...", help="Deny rules, read the same way."
        ),
    ] = None,
    add_dir: Annotated[
        list[str] | None,
        typer.Option(
            "--add-dir", metavar="DIRS...", help="More folders the tools may work in (read, and write as rules allow)."
        ),
    ] = None,
    append_system_prompt: Annotated[
        str | None,
        typer.Option("--append-system-prompt", metavar="TEXT", help="Text added at the end of the system prompt."),
    ] = None,
    system_prompt: Annotated[
        str | None,
        typer.Option(
            "--system-prompt",
            metavar="TEXT",
            help="Replace claude-mini's built-in instructions (CLAUDE.md files and memory are still sent).",
        ),
    ] = None,
    settings: Annotated[
        str | None,
        typer.Option(
            "--settings", metavar="FILE|JSON", help="One more settings file (or JSON text), above the local one."
        ),
    ] = None,
    mcp_config: Annotated[
        list[str] | None,
        typer.Option(
            "--mcp-config",
            metavar="CONFIGS...",
            help="MCP servers from JSON files or JSON text shaped like .mcp.json (no approval asked).",
        ),
    ] = None,
    strict_mcp_config: Annotated[
        bool, typer.Option("--strict-mcp-config", help="Start only the --mcp-config servers.")
    ] = False,
    input_format: Annotated[
        str,
        typer.Option(
            "--input-format",
            metavar="FORMAT",
            help="With -p: text, or stream-json (one user message per stdin line, each a turn).",
        ),
    ] = "text",
    verbose: Annotated[
        bool, typer.Option("--verbose", help="With -p: each tool call on stderr (stream-json shows them anyway).")
    ] = False,
    max_turns: Annotated[
        int | None, typer.Option("--max-turns", min=1, metavar="N", help="Stop after N model requests.")
    ] = None,
    continue_: Annotated[bool, typer.Option("-c", "--continue", help="Continue the latest session here.")] = False,
    resume: Annotated[
        str | None,
        typer.Option(
            "-r", "--resume", metavar="[ID]", help="Resume the session with this id; without one, pick it from a list."
        ),
    ] = None,
    trust_folder: Annotated[
        bool, typer.Option("--trust-folder", help="Trust this folder's settings and imports for this run only.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks and request details.")] = False,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    """claude-mini: a coding assistant in your terminal, with memory.

    Without -p it opens the interactive assistant (type /help there). Also:
    `claude-mini memory ...` (list, show, add, forget, doctor, gc, restore; the
    team memory in the repository: promote, demote, blame; import --from
    claude-code|codex|gemini),
    `claude-mini context [--json] [--lint]` (which instruction files are loaded),
    `claude-mini hooks list [--json]` (the hooks from the settings files),
    `claude-mini mcp list|get|add|remove` (the MCP servers),
    `claude-mini checkpoints list|restore` (/rewind for scripts) and
    `claude-mini sandbox status [--json]` (what the Bash sandbox enforces).
    """
    if version:
        print(f"{__version__} (claude-mini)")
        return

    install_exit_handlers()  # SIGTERM/SIGHUP end the running tools' processes too (-p and the REPL)
    route_log(debug)  # __main__ routed it nowhere; --debug is known only now

    # Imported only when a flag needs checking: they pull in the runtime (0.1 s) the REPL
    # prompt must not wait for.
    if output_format != "text":
        from claude_mini.ui.printmode import OUTPUT_FORMATS  # startup: loads the runtime

        if output_format not in OUTPUT_FORMATS:
            raise typer.BadParameter(f"expected one of {', '.join(OUTPUT_FORMATS)}", param_hint="--output-format")
    if skip_permissions:
        if permission_mode not in (None, "bypassPermissions"):
            raise typer.BadParameter(
                f"conflicts with --permission-mode {permission_mode}", param_hint="--dangerously-skip-permissions"
            )
        permission_mode = "bypassPermissions"
    if permission_mode:
        from claude_mini.permissions import MODES  # startup: loads the runtime

        if permission_mode not in MODES:
            raise typer.BadParameter(f"expected one of {', '.join(MODES)}", param_hint="--permission-mode")
    if input_format not in INPUT_FORMATS:
        raise typer.BadParameter(f"expected one of {', '.join(INPUT_FORMATS)}", param_hint="--input-format")
    if input_format == "stream-json" and not (print_ and output_format == "stream-json"):
        _fail("--input-format stream-json needs -p and --output-format stream-json, as in Claude Code.", 2)
    if resume == "" and print_:
        _fail("-r/--resume without an id opens a picker, which needs the interactive mode: give the id with -p.", 2)
    flags = _flag_settings(model, permission_mode, allowed_tools, disallowed_tools)
    if add_dir:
        flags.setdefault("permissions", {})["additionalDirectories"] = _added_dirs(add_dir, debug)
    misread = [
        *_misread_prompts("--allowedTools", allowed_tools),
        *_misread_prompts("--disallowedTools", disallowed_tools),
    ]
    try:
        settings_flag = read_flag_json(settings, "--settings") if settings else None
        mcp_configs = mcp_config_servers(mcp_config or [])
    except FlagValueError as exc:
        _fail(str(exc), 2)
    config = load_config(
        Path.cwd(),
        flags,
        trust_folder=trust_folder,
        settings_flag=settings_flag,
        debug=debug,
        max_turns=max_turns,
        append_system_prompt=append_system_prompt or "",
        system_prompt=system_prompt,
        verbose=verbose,
        mcp_configs=mcp_configs,
        strict_mcp_config=strict_mcp_config,
    )
    if input_format == "stream-json":
        _preload_sdk(config)
        from claude_mini.ui.printmode import run_print_stream  # startup: imported while the SDK preloads

        raise typer.Exit(run_print_stream(config, sys.stdin, say, resume=resume, continue_=continue_))
    if print_:
        _preload_sdk(config)  # a prompt piped in from a slow command arrives while it loads
        from claude_mini.ui.printmode import print_prompt  # startup: imported while the SDK preloads

        text = print_prompt(prompt, sys.stdin, say)
        if not text.strip():
            _fail(misread[0] if misread else "no prompt: give it as an argument or on stdin when using -p/--print.", 2)
    for line in misread:
        say(line)
    if print_:
        from claude_mini.ui.printmode import run_print  # startup: imported while the SDK preloads

        raise typer.Exit(run_print(config, text, output_format, say, resume=resume, continue_=continue_))
    from claude_mini.ui.repl import run_repl  # startup: -p never loads the REPL

    raise typer.Exit(run_repl(config, prompt, resume=resume, continue_=continue_))


def _misread_prompts(flag: str, values: list[str] | None) -> list[str]:
    """A line for each value of a rule flag with a word not shaped like a rule ("summarize",
    "fix the bug", not "Bash(git log:*) Edit"): the flag took a prompt, as it takes every word
    up to the next flag."""
    return [
        f'"{value}" was read as a rule of {flag}, not as the prompt: put the prompt before {flag} or after --.'
        for value in values or []
        if not all(RULE_SHAPE.match(rule) for rule in _split_rules([value]))
    ]


def _added_dirs(values: list[str], debug: bool) -> list[str]:
    """--add-dir's folders as absolute paths; one that is not a folder stops with one line (exit 2)."""
    folders = []
    for value in values:
        folder = Path(value).expanduser().absolute()
        if not folder.is_dir():
            _fail(
                f"--add-dir {value}: {'not a folder' if folder.exists() else 'no such folder'}; nothing was run.",
                2,
                debug,
            )
        folders.append(str(folder))
    return folders


def _preload_sdk(config: Config) -> None:
    """Start importing the anthropic SDK in the background when print mode will use it."""
    if not is_local_model(config.model):
        preload_sdk()


def run(args: list[str]) -> None:
    """Dispatch to a subcommand or the root command (typer handles usage errors, exit 2)."""
    if args and args[0] in SUBCOMMANDS:
        from claude_mini.subcommands.app import sub_app  # startup: only subcommands need it

        sub_app(args, prog_name="claude-mini")
    else:
        root_app(spread_rule_flags(args), prog_name="claude-mini")


def spread_rule_flags(args: list[str]) -> list[str]:
    """`--allowedTools A B -p` -> `--allowedTools A --allowedTools B -p`, as Claude Code reads them
    (--add-dir too).

    A rule flag (and --mcp-config) takes every following word up to the next one starting with
    `-`; a prompt goes before the flag or after `--` (click's end of options). `-r`/`--resume`
    followed by a flag or nothing gets an empty id (the picker), so it does not swallow `-p`.
    """
    out: list[str] = []
    flag, values = None, 0
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        if flag is not None and not arg.startswith("-"):
            out += [flag, arg] if values else [arg]
            values += 1
            continue
        flag, values = (arg if arg in MULTI_FLAGS else None), 0
        if arg in RESUME_FLAGS and (i + 1 == len(args) or args[i + 1].startswith("-")):
            arg = "--resume="
        out.append(arg)
    return out


def render_help() -> str:
    """The root command's --help as typer renders it at 80 columns (saved in cli_help.txt)."""
    from typer.testing import CliRunner

    env = {"COLUMNS": "80", "NO_COLOR": "1", "TERM": "dumb"}
    return CliRunner().invoke(root_app, ["--help"], prog_name="claude-mini", env=env).output
