"""The arguments of ``bounded-review loop ...``, ``status`` and ``reset`` (kept apart from the
commands so building the parser imports nothing heavy)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

MUTATIONS = (
    "begin",
    "mark-running",
    "record-result",
    "record-failure",
    "admit-retry",
    "complete-round",
    "next-round",
    "close",
)


def _lane_spec(text: str) -> tuple[str, str, str]:
    parts = text.split(":")
    if (
        len(parts) not in (2, 3)
        or not all(parts)
        or (len(parts) == 3 and parts[2] not in ("verdict", "scout"))
    ):
        raise argparse.ArgumentTypeError(f"{text!r}: give NAME:LENS or NAME:LENS:verdict|scout")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else "verdict"


def add_parser(sub: Any) -> None:
    """Register ``loop`` and its commands on the top-level subparsers."""
    loop = sub.add_parser("loop", help="drive a review loop's ledger from an orchestrator")
    commands = loop.add_subparsers(dest="loop_command", required=True, metavar="LOOP_COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = commands.add_parser(name, help=help_text)
        parser.add_argument("--loop-id", required=True, help="the loop (^[A-Za-z0-9._-]{1,128}$)")
        parser.add_argument(
            "--state-dir", default=".bounded-review", help="state folder (default: .bounded-review)"
        )
        if name in MUTATIONS:
            parser.add_argument(
                "--operation-id",
                required=True,
                help="idempotency key: a replay returns the same receipt",
            )
        return parser

    begin = command("begin", "open a loop with round 1")
    begin.add_argument(
        "--target-kind", required=True, choices=["pr", "local-diff", "staged", "plan"]
    )
    begin.add_argument(
        "--revision", required=True, help="what round 1 reviews (tree:, commit: or sha256: + hex)"
    )
    begin.add_argument(
        "--lane", action="append", type=_lane_spec, required=True, metavar="NAME:LENS[:ROLE]"
    )
    begin.add_argument("--max-repair-loops", type=int, default=2, choices=range(0, 4))
    begin.add_argument("--scope", action="append", default=[], metavar="PATH")
    begin.add_argument(
        "--model-review-lane",
        metavar="NAME",
        help="the lane that reviews the model when one defect class keeps reappearing at new "
        "places (default: the first lane with the architecture lens)",
    )
    begin.add_argument(
        "--require-assurances",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="refuse verdicts without assurances (default: for plan targets)",
    )
    running = command("mark-running", "start an attempt of a lane")
    running.add_argument("--lane", required=True)
    running.add_argument("--attempt-id", required=True)
    running.add_argument("--revision", required=True)
    echo = "the round's revision, echoed: an answer about another snapshot is refused"
    result = command("record-result", "record a lane's answer (a lane-result JSON file)")
    result.add_argument("--lane", required=True)
    result.add_argument("--attempt-id", required=True)
    result.add_argument("--revision", required=True, help=echo)
    result.add_argument("--result", required=True, type=Path, metavar="FILE")
    failure = command("record-failure", "record that an attempt failed")
    failure.add_argument("--lane", required=True)
    failure.add_argument("--attempt-id", required=True)
    failure.add_argument("--revision", required=True, help=echo)
    failure.add_argument("--kind", required=True, choices=["error", "died", "limit"])
    failure.add_argument("--detail", default="")
    retry = command(
        "admit-retry", "admit a retry of a failed attempt (the receipt names its new id)"
    )
    retry.add_argument("--lane", required=True)
    retry.add_argument("--retry-of", required=True, metavar="ATTEMPT_ID")
    complete = command("complete-round", "close the open round once every lane answered")
    complete.add_argument("--blocking", action="append", default=[], metavar="FINGERPRINT")
    following = command("next-round", "open the next round on a changed artifact")
    following.add_argument("--revision", required=True)
    coverage = following.add_mutually_exclusive_group()
    coverage.add_argument(
        "--full-review",
        action="store_true",
        help="every lane answers afresh (the default)",
    )
    coverage.add_argument(
        "--affected-lane",
        action="append",
        metavar="NAME",
        help="a delta: only these lanes answer again, the others keep their valid results "
        "(repeatable; a non-empty strict subset)",
    )
    closing = command("close", "close the loop")
    closing.add_argument("--outcome", required=True, choices=["converged", "drift", "deadlock"])
    command("show", "print the loop's state")
    command("validate", "check the loop's state file")


def add_state_parsers(sub: Any) -> None:
    """``status`` and ``reset``."""
    status = sub.add_parser(
        "status",
        help="show where each review loop stands",
        description="Show each review loop: status, round, repair loops used, flags and why "
        "it stopped, read from the state folder (nothing is written).",
    )
    reset = sub.add_parser(
        "reset",
        help="archive review loops so the next review starts anew",
        description="Archive review loops (to loops/ID/archive/NNNN.json, kept) so the next "
        "review of the target, or a `loop begin` with the same id, starts a new loop.",
    )
    for parser in (status, reset):
        parser.add_argument(
            "--state-dir",
            metavar="PATH",
            help="state folder (default: the configured state_dir, .bounded-review)",
        )
        parser.add_argument("--loop-id", metavar="ID", help="only this loop (default: every loop)")
    status.add_argument("--json", action="store_true", help="one JSON object per loop")
