"""The console face: ``bounded-review <command>``; each command is a small function."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ..core.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    FatalError,
    LedgerError,
    UsageError,
)
from .documents import cmd_report, cmd_schema, cmd_validate
from .parser import parser

# pydantic and the engine are imported inside the commands that need them, so the cheap ones
# (`gate` in a commit hook) start fast.


def cmd_demo(args: argparse.Namespace) -> int:
    from . import demo

    return demo.run(keep=args.keep, color=args.color or "auto")


def cmd_gate(args: argparse.Namespace) -> int:
    """Exit 0 only when a clean report exists for the exact snapshot being committed or
    pushed (for a push: against the pushed range's base); else say why (1 not clean, 2 no
    report for this snapshot)."""
    from ..change import git
    from ..render.escape import terminal
    from . import gate as gatecheck
    from .paths import default_state_folder

    repo = git.open_repo(Path.cwd())
    state = default_state_folder()
    report = Path(args.report) if args.report else state / "report.json"
    pushed = None
    if args.pushed_refs is not None:
        from ..change.push import parse

        if args.pushed_refs == "-":
            pushed = parse(sys.stdin.read())
        else:
            pushed = parse(_pushed_refs_file(args.pushed_refs))

    def configured() -> tuple[str, str]:
        """The base a new branch's push is reviewed against, chosen as a review chooses it:
        a `base` the change itself sets is not taken (change/baseconfig.py)."""
        from ..change.base import resolve_base
        from ..change.baseconfig import chosen
        from ..core.settings.config import load_settings

        settings, _ = load_settings(Path.cwd(), repo.root, {})
        head = repo.resolve("HEAD")
        held = chosen(repo, settings, {}, Path.cwd(), head, os.environ)
        base = settings.base if held is None else held.base
        return resolve_base(repo, base, os.environ, "the `base` setting")

    status, why = gatecheck.check(
        repo,
        report,
        args.stage,
        pushed=pushed,
        remote=args.remote,
        configured=configured,
        state_dir=_relative_to(state, repo.root),
    )
    out = sys.stdout if status == 0 else sys.stderr
    for line in why.splitlines():
        print(f"bounded-review gate: {terminal(line)}", file=out)
    return status


def _relative_to(folder: Path, root: Path) -> str | None:
    """``folder`` as ``state_dir`` spells it, from the repository root (``None`` outside)."""
    try:
        return folder.relative_to(root).as_posix()
    except ValueError:
        return None


def _pushed_refs_file(name: str) -> str:
    """The text of the ``--pushed-refs`` file; one that cannot be read is a usage error."""
    try:
        return Path(name).read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise UsageError(
            f"--pushed-refs {name}: cannot read it ({exc.strerror or exc}): give a file of git's "
            "pre-push lines, or - to read them from stdin"
        ) from exc


def cmd_run(args: argparse.Namespace) -> int:
    from . import run as runcmd

    return runcmd.run(args)


def cmd_hook(args: argparse.Namespace) -> int:
    from ..agentgate import stophook

    return stophook.cmd_hook(args)


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the read-only MCP tools on stdio; exit 4 without the ``mcp`` extra."""
    from ..agentgate import mcpserver

    mcpserver.serve()
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    """Combine shard reports of one revision, review and gate once; exit by the gate."""
    from ..core.settings.config import option_overrides
    from .merge import merge
    from .run import show

    keys = ("report", "markdown", "sarif", "no_lanes")
    overrides = option_overrides({key: getattr(args, key) for key in keys}, Path.cwd())
    report, workflow = merge([Path(p) for p in args.reports], overrides)
    return show(report, workflow, args)


def cmd_loop(args: argparse.Namespace) -> int:
    from . import loop as loopcli

    return loopcli.cmd_loop(args)


def cmd_status(args: argparse.Namespace) -> int:
    from . import loop as loopcli

    return loopcli.cmd_status(args)


def cmd_reset(args: argparse.Namespace) -> int:
    from . import loop as loopcli

    return loopcli.cmd_reset(args)


def cmd_init(args: argparse.Namespace) -> int:
    """Propose a [tool.bounded-review] table from the agents on PATH, or with --agent the
    agent's hooks and the skill; --write writes it."""
    if args.agent:
        from ..agentgate import agentsetup

        return agentsetup.cmd_setup(args)
    from . import init

    return init.cmd_init(args)


def cmd_lanes(args: argparse.Namespace) -> int:
    """Dry-run the lane selection for the current target; dispatch nothing."""
    from . import lanes

    return lanes.cmd_lanes(args)


def cmd_prompt(args: argparse.Namespace) -> int:
    """Print the exact prompt a lane would receive."""
    from . import lanes

    return lanes.cmd_prompt(args)


def cmd_waive(args: argparse.Namespace) -> int:
    """Append a typed waiver for a finding of the last report."""
    from . import waive

    return waive.cmd_waive(args)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": cmd_run,
    "hook": cmd_hook,
    "mcp": cmd_mcp,
    "merge": cmd_merge,
    "schema": cmd_schema,
    "validate": cmd_validate,
    "demo": cmd_demo,
    "loop": cmd_loop,
    "report": cmd_report,
    "gate": cmd_gate,
    "status": cmd_status,
    "reset": cmd_reset,
    "init": cmd_init,
    "lanes": cmd_lanes,
    "prompt": cmd_prompt,
    "waive": cmd_waive,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; map errors to exit statuses (CONTRACT §10)."""
    try:
        args = parser().parse_args(argv)
        args.argv = list(sys.argv[1:] if argv is None else argv)  # as given, to hand on
        return COMMANDS[args.command](args)
    except LedgerError as exc:  # the loop protocol's own form: `BR_<CODE>: detail`
        print(str(exc), file=sys.stderr)
        return exc.exit_code
    except FatalError as exc:
        print(f"bounded-review: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("bounded-review: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except Exception:
        import traceback

        traceback.print_exc()
        print("bounded-review: internal error (a bug; please report it)", file=sys.stderr)
        return EXIT_INTERNAL
