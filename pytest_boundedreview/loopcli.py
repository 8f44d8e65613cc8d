"""``bounded-review loop ...``: the loop ledger for orchestrators that dispatch reviewers
themselves. Each command prints one JSON receipt line; refusals print ``BR_<CODE>: detail`` on
stderr and exit with the status of their kind (CONTRACT §8, §10)."""

from __future__ import annotations

import argparse
import hashlib
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from . import loopops, strictjson
from .errors import EXIT_INTERRUPTED, LedgerError
from .ledger import Ledger, parse_state
from .models.lane import LaneResult
from .models.loop import LoopState
from .render.escape import terminal
from .validation import describe_all

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
        "--revision", required=True, help="what round 1 reviews (tree:… or sha256:…)"
    )
    begin.add_argument(
        "--lane", action="append", type=_lane_spec, required=True, metavar="NAME:LENS[:ROLE]"
    )
    begin.add_argument("--max-repair-loops", type=int, default=2, choices=range(0, 4))
    begin.add_argument("--scope", action="append", default=[], metavar="PATH")
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
    result = command("record-result", "record a lane's answer (a lane-result JSON file)")
    result.add_argument("--lane", required=True)
    result.add_argument("--attempt-id", required=True)
    result.add_argument("--result", required=True, type=Path, metavar="FILE")
    failure = command("record-failure", "record that an attempt failed")
    failure.add_argument("--lane", required=True)
    failure.add_argument("--attempt-id", required=True)
    failure.add_argument("--kind", required=True, choices=["error", "died", "limit"])
    failure.add_argument("--detail", default="")
    retry = command("admit-retry", "admit a new attempt as the retry of a failed one")
    retry.add_argument("--lane", required=True)
    retry.add_argument("--attempt-id", required=True)
    retry.add_argument("--retry-of", required=True)
    complete = command("complete-round", "close the open round once every lane answered")
    complete.add_argument("--blocking", action="append", default=[], metavar="FINGERPRINT")
    following = command("next-round", "open the next round on a changed artifact")
    following.add_argument("--revision", required=True)
    closing = command("close", "close the loop")
    closing.add_argument("--outcome", required=True, choices=["converged", "drift", "deadlock"])
    command("show", "print the loop's state")
    command("validate", "check the loop's state file")


def _result(path: Path) -> LaneResult:
    try:
        document = strictjson.loads(path.read_bytes(), max_bytes=16 * 1024 * 1024)
        return LaneResult.model_validate(document)
    except OSError as exc:
        raise LedgerError("INVALID", f"{path}: cannot read: {exc.strerror}") from None
    except strictjson.StrictJSONError as exc:
        raise LedgerError("INVALID", f"{path}: {exc}") from None
    except ValidationError as exc:
        raise LedgerError("INVALID", f"{path}: {'; '.join(describe_all(exc)[:5])}") from None


def _operation(
    args: argparse.Namespace,
) -> Callable[[LoopState | None], tuple[LoopState, dict[str, Any]]]:
    name = args.loop_command
    if name == "begin":
        return lambda s: loopops.begin(
            s,
            args.loop_id,
            args.target_kind,
            args.revision,
            args.lane,
            args.max_repair_loops,
            args.scope,
            args.require_assurances,
        )
    if name == "mark-running":
        return lambda s: loopops.mark_running(s, args.lane, args.attempt_id, args.revision)
    if name == "record-result":
        answer = _result(args.result)
        return lambda s: loopops.record_result(s, args.lane, args.attempt_id, answer)
    if name == "record-failure":
        return lambda s: loopops.record_failure(
            s, args.lane, args.attempt_id, args.kind, args.detail
        )
    if name == "admit-retry":
        return lambda s: loopops.admit_retry(s, args.lane, args.attempt_id, args.retry_of)
    if name == "complete-round":
        return lambda s: loopops.complete_round(s, args.blocking)
    if name == "next-round":
        return lambda s: loopops.next_round(s, args.revision)
    return lambda s: loopops.close(s, args.outcome)


def _request(args: argparse.Namespace) -> dict[str, Any]:
    request = {
        k: (str(v) if isinstance(v, Path) else v)
        for k, v in vars(args).items()
        if k not in ("operation_id", "state_dir", "command")
    }
    if args.loop_command == "record-result":
        with_content = args.result.read_bytes() if args.result.is_file() else b""
        request["result_digest"] = hashlib.sha256(with_content).hexdigest()
    return request


def cmd_loop(args: argparse.Namespace) -> int:
    """One loop command; prints its receipt line."""
    book = Ledger(Path(args.state_dir), args.loop_id)
    try:
        if args.loop_command == "show":
            state = book.read()
            if state is None:
                raise LedgerError("INVALID", f"no loop {args.loop_id!r} in {args.state_dir}")
            print(state.model_dump_json(indent=2))
            return 0
        if args.loop_command == "validate":
            if not book.path.exists():
                raise LedgerError("INVALID", f"no loop {args.loop_id!r} in {args.state_dir}")
            state = parse_state(book.path.read_bytes(), book.path)
            print(json.dumps(loopops.receipt(state, valid=True), sort_keys=True))
            return 0
        receipt = book.mutate(args.operation_id, _request(args), _operation(args))
    except KeyboardInterrupt:
        why = "interrupted: the state is as it was or fully written, never half"
        raise LedgerError("CANCELLED", why, EXIT_INTERRUPTED) from None
    print(json.dumps(receipt, sort_keys=True))
    return 0


def _state_dir(given: str | None) -> Path:
    """``--state-dir``, else ``.bounded-review`` at the root of the repository around here."""
    if given:
        return Path(given)
    from . import git
    from .errors import GitError

    try:
        return git.open_repo(Path.cwd()).root / ".bounded-review"
    except GitError:
        return Path(".bounded-review")


def _loops(state_dir: Path, loop_id: str | None) -> list[Ledger]:
    folder = state_dir / "loops"
    names = (
        [loop_id]
        if loop_id
        else sorted(p.name for p in folder.iterdir())
        if folder.is_dir()
        else []
    )
    return [Ledger(state_dir, name) for name in names]


def cmd_status(args: argparse.Namespace) -> int:
    """Where each loop stands (one line each, or JSON lines with ``--json``)."""
    state_dir = _state_dir(args.state_dir)
    shown = 0
    for book in _loops(state_dir, args.loop_id):
        state = book.read()
        if state is None:
            continue
        shown += 1
        last = state.rounds[-1] if state.rounds else None
        row = {
            "loop_id": state.loop_id,
            "status": state.status,
            "round": last.number if last else 0,
            "revision": last.revision if last else None,
            "review_clean": last.gate.review_clean if last and last.gate else None,
            "repair_loops_used": state.repair_loops_used,
            "max_repair_loops": state.max_repair_loops,
            "flags": state.flags,
            "stop_reason": state.stop_reason,
        }
        if args.json:
            print(json.dumps(row, sort_keys=True))
        else:
            flags = f", flags: {', '.join(state.flags)}" if state.flags else ""
            why = f" ({terminal(state.stop_reason)})" if state.stop_reason else ""
            print(
                f"{terminal(state.loop_id)}: {state.status}{why}, round {row['round']}, "
                f"repair loops {state.repair_loops_used}/{state.max_repair_loops}, "
                f"review_clean {row['review_clean'] or 'not decided'}{flags}"
            )
    if not shown and not args.json:
        print(f"no review loop in {state_dir}")
    return 0


def cmd_reset(args: argparse.Namespace) -> int:
    """Close open (or stopped) loops so the next review starts a new one."""
    state_dir = _state_dir(args.state_dir)
    books = _loops(state_dir, args.loop_id)
    if not books:
        print(f"no review loop in {state_dir}")
        return 0
    for book in books:
        state = book.read()
        if state is None or state.status in ("closed", "converged"):
            continue

        def close(current: LoopState | None) -> tuple[LoopState, dict[str, Any]]:
            assert current is not None
            closed = current.model_copy(
                update={"status": "closed", "stop_reason": f"reset (was {current.status})"}
            )
            return closed, loopops.receipt(closed, status="closed", was=current.status)

        receipt = book.mutate(f"reset-{uuid.uuid4().hex}", {"reset": book.loop_id}, close)
        print(json.dumps(receipt, sort_keys=True))
    return 0


def add_state_parsers(sub: Any) -> None:
    """``status`` and ``reset``."""
    status = sub.add_parser("status", help="show where each review loop stands")
    reset = sub.add_parser("reset", help="close review loops so the next review starts anew")
    for parser in (status, reset):
        parser.add_argument(
            "--state-dir", help="state folder (default: <repository>/.bounded-review)"
        )
        parser.add_argument("--loop-id", help="only this loop (default: every loop)")
    status.add_argument("--json", action="store_true", help="one JSON object per loop")
