"""`/bashes`: the session's background shells (Bash with run_in_background), and ending them."""

from __future__ import annotations

from claude_mini.base.text import one_line
from claude_mini.tools.background import BackgroundShell, BackgroundShells, UnknownShell
from claude_mini.ui.commands import CommandContext, command, print_lines

USAGE = "Usage: /bashes (list them, then pick one to kill), /bashes kill ID, /bashes kill all."
KEEP = ""


@command("bashes", help="List the background shells; kill one or all of them.", usage="[kill ID|all]")
async def bashes(ctx: CommandContext) -> None:
    """List the shells; with running ones and no argument, offer to kill one (Esc keeps them)."""
    shells = ctx.rt.agent.ctx.shells
    words = ctx.args.split()
    if shells is None or not shells.shells():
        print_lines(ctx, ["No background shells in this session. The model starts one with Bash run_in_background."])
        return
    if words[:1] == ["kill"] and len(words) == 2:
        await _kill(ctx, shells, words[1])
        return
    if words:
        print_lines(ctx, [USAGE])
        return
    print_lines(ctx, shell_lines(shells.shells()))
    running = shells.running()
    if not running:
        return
    options = [(s.id, f"Kill {s.id}: {one_line(s.command, 60, terminal=True)}") for s in running]
    if len(running) > 1:
        options.append(("all", "Kill them all"))
    options.append((KEEP, "Keep them running"))
    choice = await ctx.host.choose("Kill a background shell?", options)
    if choice:
        await _kill(ctx, shells, choice)


def shell_lines(shells: list[BackgroundShell]) -> list[str]:
    """One line a shell: id, state, age, command (and its description when it has one)."""
    width = max(len(s.state()) for s in shells)
    lines = []
    for shell in shells:
        what = one_line(shell.command, 80, terminal=True) + (
            f"  ({one_line(shell.description, 40, terminal=True)})" if shell.description else ""
        )
        lines.append(f"{shell.id:<8} {shell.state():<{width}} {shell.age():>4}  {what}")
    return lines


async def _kill(ctx: CommandContext, shells: BackgroundShells, which: str) -> None:
    targets = [s.id for s in shells.running()] if which == "all" else [which]
    if not targets:
        print_lines(ctx, ["No background shell is running."])
        return
    for shell_id in targets:
        try:
            was_running = shells.get(shell_id).running
            shell = await shells.kill(shell_id)
        except UnknownShell as exc:
            print_lines(ctx, [str(exc)])
            return
        done = "killed" if was_running else f"had already ended: {shell.state()}"
        print_lines(ctx, [f"{shell.id} {done}."])
