"""``bounded-review run``: the whole gate. A code target runs pytest with ``--bounded-review``
in a new process and exits by the report it wrote; ``--plan`` reviews a plan file."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..change import git
from ..core.errors import (
    NoReportError,
    UsageError,
)
from .interpreter import HANDED, handed_to
from .runplace import Place, place

if TYPE_CHECKING:
    from ..models.report import Report

VALUE_OPTIONS = ("base", "target", "mode", "risk", "markdown", "sarif")
FLAGS = ("no_lanes", "full", "reset")


def add_output_options(parser: argparse.ArgumentParser, report_help: str) -> None:
    """The options of a command that writes a report: where, what else, and ``--no-lanes``."""
    parser.add_argument("--report", metavar="PATH", help=report_help)
    parser.add_argument("--markdown", metavar="PATH", help="also write a Markdown report")
    parser.add_argument("--sarif", metavar="PATH", help="also write a SARIF 2.1.0 log")
    parser.add_argument("--no-lanes", action="store_true", help="deterministic gate only")


def add_display_options(parser: argparse.ArgumentParser) -> None:
    """The options of a command that shows a report on the terminal: colour, every status."""
    parser.add_argument(
        "--color",
        choices=("auto", "yes", "no"),
        default=None,
        help="colour the verdict: auto (default; a terminal, unless NO_COLOR), yes or no",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="show every status, those not checked too"
    )


def show(report: Report, workflow: list[str], args: argparse.Namespace) -> int:
    """Print ``report`` and its workflow commands, the verdict last with the exit status this
    command gives, coloured as the terminal and ``--color`` allow; return that status."""
    from ..render.terminal import lines
    from ..render.verdict import colour_wanted, console_exit, painted

    status = console_exit(report)
    shown = list(lines(report, status, verbose=bool(getattr(args, "verbose", False))))
    last = shown.pop()
    if colour_wanted(sys.stdout, getattr(args, "color", None) or "auto"):
        last = painted(last, report)
    print("\n".join([*shown, *workflow, last]))
    return status


def add_parser(sub: Any) -> None:
    """Register ``run`` on the top-level subparsers."""
    run = sub.add_parser(
        "run",
        usage="%(prog)s [options] [-- PYTEST_ARGS ...]\n       %(prog)s --plan PLAN.md [options]",
        help="run the whole gate: pytest --bounded-review, or a plan's review (--plan)",
        description="Run the test session as the baseline, classify failures against the "
        "base, run the reviewer lanes and gate once; exit by the report's gate. Arguments "
        "after `--` go to pytest.",
    )
    run.add_argument("--plan", metavar="PLAN.md", help="review this plan file instead of code")
    run.add_argument("--base", metavar="REF", help="base revision (default: CI base, upstream)")
    run.add_argument(
        "--target", choices=["auto", "pr", "local-diff", "staged"], help="what is reviewed"
    )
    run.add_argument(
        "--mode", choices=["review-only", "review-and-fix"], help="authorization (repair loops)"
    )
    run.add_argument(
        "--risk", choices=["auto", "economy", "standard", "strict"], help="risk tier (budget)"
    )
    add_output_options(run, "JSON report (default: the state folder)")
    run.add_argument("--full", action="store_true", help="force a full re-review round")
    run.add_argument("--reset", action="store_true", help="start a new loop for this target")
    add_display_options(run)
    run.add_argument("pytest_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def _report_path(args: argparse.Namespace, repo: git.Repo) -> tuple[Path, str]:
    """Where the session will write its report: ``--report``, else the configured one; and
    the target kind asked for."""
    from ..change.statedir import approver
    from ..core.settings.config import load_settings, option_overrides

    overrides = option_overrides({"report": args.report}, Path.cwd())
    settings, _ = load_settings(Path.cwd(), repo.root, overrides, approver(repo))
    # Not created here: the session checks the folder against its own pytest configuration
    # first, and creates it.
    return settings.report_file(repo.root / settings.state_dir), args.target or settings.target


def pytest_argv(args: argparse.Namespace, report: Path, where: Place | None = None) -> list[str]:
    argv = [sys.executable, "-m", "pytest", "--bounded-review"]
    for key in VALUE_OPTIONS:
        value = getattr(args, key)
        if value is not None:
            argv.append(f"--bounded-review-{key}={value}")
    argv += [f"--bounded-review-{key.replace('_', '-')}" for key in FLAGS if getattr(args, key)]
    argv.append(f"--bounded-review-report={report}")
    # its verdict line names the status this command exits with (run_exit), not pytest's
    argv.append("--bounded-review-exit-as-run")
    extra = list(args.pytest_args)
    extra = extra[1:] if extra[:1] == ["--"] else extra
    # pytest colours the verdict by its own rules; -v also shows the statuses not checked
    argv += [f"--color={args.color}"] if getattr(args, "color", None) else []
    argv += ["-v"] if getattr(args, "verbose", False) else []
    return argv + (extra if where is None else where.args(extra))


def _identity(path: Path) -> tuple[int, int, int] | None:
    """Which file ``path`` is and when it was written: a report written again atomically is a
    new file (its temporary file existed beside the old one, so it cannot reuse its inode)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino, stat.st_mtime_ns


def _exit_by(report: Path, status: int) -> int:
    """The exit status a fresh report gives: its gate, once it is shown to be of the tree its
    target names now and pytest agrees."""
    from ..change.current import live_tree
    from ..change.trees.livetree import differences
    from ..models.plain import validate
    from ..models.report import Report

    try:
        document = validate(Report, report.read_bytes())
    except (OSError, ValueError) as exc:
        raise NoReportError(
            f"pytest exited {status}; its report {report} is unreadable: {exc}"
        ) from None
    target, repo = document.target, git.open_repo(Path.cwd())
    now = live_tree(repo, target.kind, os.environ)
    changed = differences(repo, target.revision.removeprefix("tree:"), now)
    if changed:  # bytecode caches aside, as when the session compared them
        shown = ", ".join(changed[:5]) + (", ..." if len(changed) > 5 else "")
        raise NoReportError(
            f"the report {report} reviewed {target.revision}, but the {target.kind} snapshot is "
            f"now tree:{now}: the tree changed during the run ({shown}); "
            "let git ignore what the tests write (.gitignore), then run again"
        )
    from ..render.verdict import run_exit

    gate = document.gate.review_clean
    if gate == "yes" and status != 0:
        raise NoReportError(f"pytest exited {status} after a clean report: not clean")
    return run_exit(status, gate)


def run_code(args: argparse.Namespace) -> int:

    repo = git.open_repo(Path.cwd())
    python = handed_to(repo.root, os.environ)
    if python is not None:  # the project's interpreter runs all of it with its own version,
        env = {**os.environ, HANDED: python}  # its settings read by its own rules too
        argv = [python, "-m", "pytest_boundedreview", *args.argv]
        return subprocess.run(argv, env=env, check=False).returncode
    report, kind = _report_path(args, repo)
    before = _identity(report)
    with place(kind) as where:  # a checkout of the snapshot when the working tree differs
        argv = pytest_argv(args, report, where)
        status = subprocess.run(argv, cwd=where.cwd, env=where.env, check=False).returncode
    from ..render.verdict import ENDED_EARLY, run_exit

    if status in ENDED_EARLY:  # interrupted, internal or usage error: as the verdict said
        return run_exit(status, "indeterminate")
    # A session ended before its report (os._exit in a conftest) exits as it likes: only a
    # report this run wrote, of the tree reviewed, decides.
    if _identity(report) in (None, before):
        raise NoReportError(
            f"pytest exited {status} without writing a report to {report}: "
            "the session did not finish, so nothing was reviewed"
        )
    return _exit_by(report, status)


def run(args: argparse.Namespace) -> int:
    if args.plan is None:
        return run_code(args)
    from ..plan.command import review_plan

    if args.pytest_args or args.base or args.target:
        raise UsageError("--plan reviews a plan file: it takes no --base, --target or pytest args")
    report, workflow = review_plan(args, Path.cwd())
    return show(report, workflow, args)
