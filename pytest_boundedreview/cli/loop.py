"""``bounded-review loop ...``: the loop ledger for orchestrators that dispatch reviewers
themselves. Each command prints one JSON receipt line; refusals print ``BR_<CODE>: detail`` on
stderr and exit with the status of their kind (CONTRACT §8, §10)."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core import strictjson
from ..core.errors import EXIT_INTERRUPTED, LedgerError
from ..core.validation import describe_all
from ..loop import attempts
from ..loop import ops as loopops
from ..loop.ledger import Ledger
from ..models.lane import LaneResult
from ..models.loop import LoopState
from ..render.escape import terminal
from .paths import default_state_folder


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
            args.model_review_lane,
        )
    if name == "mark-running":
        return lambda s: attempts.mark_running(s, args.lane, args.attempt_id, args.revision)
    if name == "record-result":
        answer = _result(args.result)
        return lambda s: attempts.record_result(
            s, args.lane, args.attempt_id, args.revision, answer
        )
    if name == "record-failure":
        return lambda s: attempts.record_failure(
            s, args.lane, args.attempt_id, args.revision, args.kind, args.detail
        )
    if name == "admit-retry":
        return lambda s: attempts.admit_retry(s, args.lane, args.retry_of)
    if name == "complete-round":
        return lambda s: loopops.complete_round(s, args.blocking)
    if name == "next-round":
        return lambda s: loopops.next_round(s, args.revision, args.affected_lane)
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
        if args.loop_command == "validate":  # the same containment and checks as a mutation
            state = book.read()
            if state is None:
                raise LedgerError("INVALID", f"no loop {args.loop_id!r} in {args.state_dir}")
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
    return Path(given) if given else default_state_folder()


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
    shown, status = 0, 0
    for book in _loops(state_dir, args.loop_id):
        try:
            state = book.read()
        except LedgerError as exc:  # one broken loop hides none of the others
            print(f"{terminal(book.loop_id)}: {terminal(str(exc))}", file=sys.stderr)
            status = max(status, exc.exit_code)
            continue
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
    return status


def cmd_reset(args: argparse.Namespace) -> int:
    """Archive loops (``loops/<id>/archive/NNNN.json``) so the next review of their target, or
    a ``loop begin`` with the same id, starts a new loop; nothing is deleted."""
    state_dir = _state_dir(args.state_dir)
    archived = 0
    for book in _loops(state_dir, args.loop_id):
        done = book.archive()  # each receipt printed as its loop moves: nothing unreported
        if done is not None:
            archived += 1
            receipt = {"event": loopops.EVENT, "loop_id": book.loop_id, "status": "archived"}
            print(json.dumps({**receipt, "was": done[0], "archive": str(done[1])}), flush=True)
    if not archived:
        print(f"no review loop in {state_dir}")
    return 0
