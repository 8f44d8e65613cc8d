"""``bounded-review hook stop|start --agent NAME``: the agent's hooks (CONTRACT §12).

The stop hook reads the agent's event on stdin, looks at the tree the agent leaves (the working
tree with its untracked files, written through a temporary index: the user's index is not
touched), and answers in the agent's own protocol (``agentprotocol``) without running tests or
reviewers, by its own deadline (``hookdeadline``). What it decides is ``hookdecide``'s, and
what it says when it cannot decide ``hookfailed``'s; the base it judges against and the review
command it names are ``hookbase``'s; what it keeps per task is ``hookstate``'s. The start hook
records the commit and tree a turn starts at.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..render.escape import lines
from . import hookdeadline, reportview
from .agentprotocol import (
    AGENTS,
    PROTOCOLS,
    START_OUTPUT,
    copy_of,
    ended_by_user,
    repository,
)
from .hookdeadline import Cancelled, Work
from .hookdecide import Answer, Seen, ceiling_of, decide
from .hookfailed import SLOW_TREE, failed, late
from .hookstate import Counter, counter_path, hearing, held
from .reportview import ReportView

MAX_EVENT = 4 * 1024 * 1024


def add_parser(sub: Any) -> None:
    hook = sub.add_parser(
        "hook",
        help="an agent's hooks: let the agent stop only on a tree the gate passed",
        description="Read the agent's event on stdin and answer in its protocol. `stop`: "
        "allow the stop on a tree with a clean report (or nothing to review), else block "
        "with what to do next, within the loop's ceiling per task. `start`: record the commit "
        "and tree a turn starts at, so what the turn did is judged however it did it. Runs no "
        "tests and no reviewers; answers within BOUNDED_REVIEW_HOOK_DEADLINE seconds (10).",
    )
    hooks = hook.add_subparsers(dest="hook", required=True, metavar="EVENT")
    for event, what in (
        ("stop", "the agent is about to end its turn"),
        ("start", "a turn starts (the user's prompt is submitted)"),
    ):
        parser = hooks.add_parser(event, help=what)
        parser.add_argument("--agent", required=True, choices=AGENTS, help="whose protocol")


def render(answer: Answer, agent: str) -> tuple[str, str]:
    """What to print on stdout and on stderr, in ``agent``'s protocol (escaped there)."""
    protocol = PROTOCOLS[agent]
    if answer.block:
        return json.dumps(protocol.block(answer.text)), ""
    return protocol.allow(answer.text)


def read_event(data: bytes) -> dict[str, Any]:
    """The event object on stdin (a UTF-8 byte-order mark allowed)."""
    if len(data) > MAX_EVENT:
        raise ValueError(f"the event is over {MAX_EVENT} bytes")
    text = data.decode("utf-8-sig")
    event = json.loads(text)
    if not isinstance(event, dict):
        raise ValueError("the event is not a JSON object")
    return event


def _stop(
    work: Work[Answer], data: bytes, event: Mapping[str, Any], env: Mapping[str, str], agent: str
) -> Answer:
    """The stop's answer, worked out in the deadline's thread (``data``: the event's bytes)."""
    import time

    from ..change import git
    from ..change.trees.livetree import unrecorded_edits
    from .hookbase import UNBORN, judged, live_tree, locate

    session = PROTOCOLS[agent].session(event)
    folder = Path(repository(event))
    repo = git.open_repo(folder)
    work.root = repo.root  # where an error is kept when the settings cannot be read
    place = locate(folder, repo)
    work.state = place.state
    work.phase = SLOW_TREE
    live = live_tree(place)
    work.phase = "looking for nested repositories with uncommitted files"
    untested = unrecorded_edits(place.repo, live)
    path = counter_path(place.state, agent, session)
    work.phase = "resolving the base the stop is judged against"
    recorded = Counter.load(path)
    base = judged(place, env, recorded.turn_commit, live, recorded.turn_base)
    work.phase = "reading the report"
    settings = place.settings
    report = reportview.read(settings.report_file(place.state))
    reported = report.max_repair_loops if isinstance(report, ReportView) else None
    ceiling = ceiling_of(settings.mode, settings.max_repair_loops, settings.risk, reported)
    if untested:  # the tree records a nested repository's commit, not what its checkout holds
        report = f"{'; '.join(untested)}: commit there first, then review"
    elif base.unreviewable:  # and no command to name
        report, base = base.unreviewable, replace(base, review="")
    review_only = settings.mode == "review-only"
    seen = Seen(live, report, ceiling, review_only, base.review, base.commit, settings.state_dir)
    heard, copy = hearing(data, live, untested), copy_of(env)
    work.phase = "waiting for another hook of this agent session"
    with held(place.state, agent, session), work.committing():
        counter = Counter.load(path)
        now = time.time()
        again = counter.repeat(heard, copy, now)  # the other copy's answer to this same stop
        if again is not None:
            result = Answer(*again)
        elif not untested and live in (counter.turn_tree, base.tree):
            result = Answer(False)  # this turn changed nothing the review would look at
            counter.end_task()
        else:
            result = decide(seen, counter)
        if again is None:
            counter.answered(heard, copy, now, result.block, result.text)
        counter.stop_head = place.repo.head() or UNBORN
        counter.save()
        if not result.block:  # the task is over: an error in the next blocks once again
            counter_path(place.state, agent, session, ".error").unlink(missing_ok=True)
        work.answer = result
    return result


def answer(data: bytes, env: Mapping[str, str], agent: str) -> Answer:
    """The stop hook's answer to the event ``data``; never a trap, never clean unverified."""
    try:
        event = read_event(data)
    except (ValueError, UnicodeDecodeError) as exc:  # no session to count blocks in
        return Answer(False, f"bounded-review stop hook: unreadable event ({exc}); not reviewed")
    if ended_by_user(event):
        return Answer(False)

    def job(work: Work[Answer]) -> Answer:
        try:
            return _stop(work, data, event, env, agent)
        except Cancelled:
            raise
        except Exception as exc:  # block once with the error, then let the agent stop
            error = f"bounded-review stop hook could not decide: {exc}"
            return failed(error, work, event, agent)

    seconds = hookdeadline.deadline(env)
    result, work = hookdeadline.within(seconds, job)
    return result if result is not None else late(work, seconds, event, agent)


def start(data: bytes, agent: str, env: Mapping[str, str]) -> str:
    """Record the commit and tree a turn starts at; return what to tell the agent (nothing but
    a warning on stderr when it cannot: a turn-start hook never holds up a prompt). A prompt
    that follows a block (Gemini CLI starts its retry as a new turn) keeps the turn the block
    was given in."""

    def job(work: Work[str]) -> str:
        from .hookbase import UNBORN, live_tree, locate, turn_base

        event = read_event(data)
        place = locate(Path(repository(event)))
        work.state = place.state
        session = PROTOCOLS[agent].session(event)
        path = counter_path(place.state, agent, session)
        head = place.repo.head()
        work.phase = "resolving the base the turn is judged against"
        base = turn_base(place, env, head)
        with held(place.state, agent, session), work.committing():
            counter = Counter.load(path)
            if counter.pending:
                return ""
            # the commit first: a tree not recorded in time leaves none, never an old one
            counter.turn_commit, counter.turn_tree = head or UNBORN, ""
            counter.turn_base = base
            counter.save()
        work.phase = SLOW_TREE
        live = live_tree(place)
        with held(place.state, agent, session), work.committing():
            counter = Counter.load(path)
            if counter.turn_commit == (head or UNBORN) and not counter.pending:
                counter.turn_tree = live
                counter.save()
        return ""

    seconds = hookdeadline.deadline(env)
    try:
        result = hookdeadline.within(seconds, job)[0]
    except Exception as exc:
        return f"bounded-review start hook: could not record the turn's start ({exc})"
    if result is None:
        return f"bounded-review start hook: could not record the turn's tree within {seconds:g} s"
    return result


def cmd_hook(args: argparse.Namespace) -> int:
    import os

    data = sys.stdin.buffer.read()
    if args.hook == "start":
        out = START_OUTPUT.get(args.agent, "{}")
        err = lines(start(data, args.agent, os.environ))
    else:
        out, err = render(answer(data, os.environ, args.agent), args.agent)
    if out:
        print(out)
    if err:
        print(err, file=sys.stderr)
    return 0
