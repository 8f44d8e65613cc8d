"""The command line of ``bounded-review``: a parser for each command (the commands
themselves are in ``commands.py`` and the modules it names)."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from .. import __version__
from ..core.errors import UsageError
from ..models import SCHEMA_NAMES


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse exits 2 on bad usage; usage errors are 4 here (CONTRACT §10).
        raise UsageError(f"{message}\n{self.format_usage().rstrip()}")


_REPORT_HELP = "report file (default: report.json in the state folder, state_dir)"


def _add_waive_parser(sub: Any) -> None:
    waive = sub.add_parser(
        "waive",
        help="waive a finding of the last report in the committed waivers file",
        description="Append a [[waiver]] for FINGERPRINT (a finding or check fingerprint of the "
        "last report) to the waivers file, keeping every other byte. A user waiver never waives "
        "a protected or unclassified finding; a security-reviewer waiver needs --evidence and "
        "holds for the reviewed revision only. Commit the file: it is reviewed like code.",
    )
    waive.add_argument("fingerprint", metavar="FINGERPRINT")
    waive.add_argument("--reason", required=True, help="why the finding does not apply (required)")
    waive.add_argument("--by", help="who answers for it (default: git config user.email)")
    waive.add_argument("--expires", metavar="YYYY-MM-DD", help="the day after which it is void")
    waive.add_argument("--disposition", choices=["user", "security-reviewer"], default="user")
    waive.add_argument(
        "--evidence",
        metavar="REFERENCE",
        help="security-reviewer: where the manual check is recorded; bound to the revision "
        "of the last report",
    )
    waive.add_argument("--report", metavar="PATH", help="the report (default: the last one)")


def _add_lanes_parsers(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--base", help="base revision (default: as a session would choose)")
    common.add_argument(
        "--target", choices=("auto", "pr", "local-diff", "staged"), help="what is reviewed"
    )
    common.add_argument("--risk", choices=("auto", "economy", "standard", "strict"))
    sub.add_parser(
        "lanes",
        parents=[common],
        help="show which reviewer lanes would run on the current target, and why",
        description="A dry run for the current target: the risk tier and its reasons, the "
        "budget, which lanes would run and why each other one would not, and for each lane "
        "the tool found (path, version), the model and whether it was verified. Dispatches "
        "nothing; exit 0, or 4 on a configuration error.",
    )
    prompt = sub.add_parser(
        "prompt",
        parents=[common],
        help="print the exact prompt a lane would receive",
        description="Print the prompt LANE would receive for the current target: the packet, "
        "its lens prompt (or prompt_file) and the contract. A session adds its test failures "
        "and the scout's findings to the packet; a dry run has neither.",
    )
    prompt.add_argument("lane", metavar="LANE", help="the name of a configured lane")


def parser() -> argparse.ArgumentParser:
    """The command line of ``bounded-review``: each command's parser, in the order ``--help``
    lists them."""
    made = _Parser(
        prog="bounded-review",
        description="A finite evidence gate for code review: the tests as the baseline, "
        "failures classified against the base, reviewer lanes within a budget, findings "
        "triaged, and a gate that blocks only on verified blockers.",
        epilog="exit statuses: 0 clean, 1 not clean, 2 indeterminate or no report, "
        "3 internal error, 4 usage or config error, 130 interrupted. "
        "`bounded-review COMMAND --help` explains each command.",
    )
    made.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = made.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from ..agentgate import stophook
    from . import loopargs
    from . import run as runcmd

    runcmd.add_parser(sub)
    stophook.add_parser(sub)
    _add_mcp_parser(sub)
    _add_gate_parser(sub)
    _add_report_parser(sub)
    _add_merge_parser(sub)
    loopargs.add_state_parsers(sub)
    _add_document_parsers(sub)
    _add_demo_parser(sub)
    loopargs.add_parser(sub)
    _add_lanes_parsers(sub)
    _add_waive_parser(sub)
    _add_init_parser(sub)
    return made


def _add_mcp_parser(sub: Any) -> None:
    """``mcp``: the read-only tools over MCP."""
    sub.add_parser(
        "mcp",
        help="serve the read-only tools gate, report, next_action and loop_status over MCP",
        description="Run a Model Context Protocol server on stdin/stdout with four read-only "
        "tools: gate (is there a report of exactly the working tree, and its gate), report "
        "(the last report), next_action (what to do next) and loop_status (the review loops: "
        "status, rounds, ceilings). Each takes an optional repository folder. Runs no tests "
        "and no reviewers. Needs the package's `mcp` extra (the MCP SDK); without it, exits 4 "
        "with the command that installs it.",
    )


def _add_gate_parser(sub: Any) -> None:
    """``gate``: the cheap check a commit or push hook runs."""
    gate = sub.add_parser(
        "gate",
        help="exit 0 only if a clean report exists for the snapshot being committed/pushed",
        description="Check, without running anything, that the last report is clean and is "
        "of the exact snapshot about to be committed or pushed (a pre-commit/pre-push hook).",
    )
    gate.add_argument(
        "--stage",
        default="auto",
        choices=["auto", "pre-commit", "pre-push", "manual", "working-tree"],
        help="pre-commit and manual: the staged tree; pre-push: the tree of each pushed ref, "
        "reviewed against the pushed range's base; working-tree: the working tree with its "
        "untracked files, as an agent left it, against the base its stop hook judges (auto: "
        "pre-push when --pushed-refs is given or pre-commit says a push runs)",
    )
    gate.add_argument("--report", metavar="PATH", help=_REPORT_HELP)
    gate.add_argument(
        "--pushed-refs",
        metavar="FILE",
        help="git's pre-push lines (<local ref> <local sha> <remote ref> <remote sha>); "
        "`-` reads them from stdin, as a pre-push hook receives them",
    )
    gate.add_argument(
        "--remote", metavar="NAME", help="the remote pushed to (a pre-push hook's first argument)"
    )


def _add_report_parser(sub: Any) -> None:
    """``report``: the last report, in a format."""
    report = sub.add_parser(
        "report",
        help="print the last report (exit by its gate)",
        description="Print the last report in a format; exit 0 if its gate is yes, 1 if no, "
        "2 if indeterminate or there is no report.",
    )
    report.add_argument(
        "--format",
        default="text",
        choices=["text", "json", "markdown", "sarif", "github", "codeclimate", "rdjson"],
        help="text (default), json, markdown (PR comments, step summaries), sarif (code "
        "scanning), github (workflow-command annotations), codeclimate (GitLab Code Quality) "
        "or rdjson (reviewdog)",
    )
    report.add_argument("--report", metavar="PATH", help=_REPORT_HELP)
    from . import run as runcmd

    runcmd.add_display_options(report)
    report.add_argument(
        "--max-bytes",
        type=int,
        metavar="N",
        help="markdown only: at most N bytes, the rest counted in a closing line (a pull "
        "request comment takes 65,536 characters)",
    )


def _add_merge_parser(sub: Any) -> None:
    """``merge``: CI shard reports into one review."""
    from . import run as runcmd

    merge = sub.add_parser(
        "merge",
        help="combine CI shard reports of one revision, then review and gate once",
        description="Combine the reports of `pytest --bounded-review --bounded-review-shard` "
        "runs of one revision, run the checks, scans and reviewer lanes once in this checkout "
        "(which must hold the same snapshot), gate once and write the final report.",
    )
    merge.add_argument("reports", nargs="+", metavar="REPORT", help="shard report files")
    runcmd.add_output_options(merge, "final JSON report (default: the state folder)")
    runcmd.add_display_options(merge)


def _add_document_parsers(sub: Any) -> None:
    """``validate`` and ``schema``: the documents' schemas."""
    validate = sub.add_parser(
        "validate",
        help="check files against their schemas",
        description="Check JSON documents (lane results, packets, reports, loop states, "
        "findings) against their schemas; exit 1 naming each problem.",
    )
    validate.add_argument("files", nargs="+", metavar="FILE", help="JSON files to check")
    validate.add_argument(
        "--schema",
        choices=sorted(SCHEMA_NAMES),
        help="schema to use (default: the file's `schema`)",
    )
    schema = sub.add_parser(
        "schema",
        help="print the JSON Schema of a document kind",
        description="Print the JSON Schema of a document kind, e.g. for a reviewer's prompt.",
    )
    schema.add_argument(
        "name", choices=sorted(SCHEMA_NAMES), metavar="NAME", help=", ".join(sorted(SCHEMA_NAMES))
    )


def _add_demo_parser(sub: Any) -> None:
    """``demo``: the built-in example."""
    demo_parser = sub.add_parser(
        "demo",
        help="review a built-in example change in a throwaway repository",
        description="Build a throwaway repository with a pre-existing failure, a regression, "
        "a style nit and a sample reviewer, review it and explain the report; exit 0 when the "
        "demonstration behaved as designed.",
    )
    demo_parser.add_argument(
        "--keep", action="store_true", help="keep the example repository and print its path"
    )
    demo_parser.add_argument(
        "--color",
        choices=("auto", "yes", "no"),
        default=None,
        help="colour the output: auto (default; a terminal, unless NO_COLOR), yes or no",
    )


def _add_init_parser(sub: Any) -> None:
    """``init``: lanes proposed, or an agent held to the gate."""
    from ..agentgate.agentsettings import AGENTS

    init = sub.add_parser(
        "init",
        help="propose reviewer lanes for the agents on PATH, or hold an agent to the gate",
        description="Look for claude, codex and gemini on PATH (and an OpenAI key) and "
        "propose a [tool.bounded-review] table: a surgical correctness lane, a deep security "
        "lane and, with a second tool, a scout. Prints it as a diff of pyproject.toml; "
        "--write adds it, keeping every other byte. Never replaces an existing table. "
        "With --agent NAME: add that agent's stop hook and turn-start hook to its project "
        "settings file (merged into what it holds) and the bounded-review skill to "
        ".claude/skills/ and .agents/skills/; never replaces an entry or a skill it did not "
        "write (exit 4).",
    )
    init.add_argument(
        "--agent",
        choices=sorted(AGENTS),
        metavar="NAME",
        help="set up this coding agent instead: "
        + ", ".join(f"{name} ({AGENTS[name].path})" for name in sorted(AGENTS)),
    )
    init.add_argument(
        "--write", action="store_true", help="write it (default: print the diff and write nothing)"
    )
