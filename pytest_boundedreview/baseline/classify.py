"""Classify the session's failures: target-related, pre-existing, flaky or unknown; and answer
its other questions at the base (skipped tests, its collection: see asking.py).

Failing node ids are re-run at head (a pass there means flaky) while those the base cache does
not know re-run, at the same time, at the base revision in a temporary checkout, with the base
sources first on ``sys.path`` and every import of the live repository's code turned to the
checkout's (``basefirst.py``), so no install of the project, editable or not, shadows the base
code; a base run that still ran a module of the live repository answers nothing (``unknown``).
Where and how the base run starts is baserun.py.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..models import TestFailure
from ..models.record import record
from .classification import Classification, Questions
from .failures.outcomes import NodeOutcome
from .reruns import cache as basecache
from .reruns.cache import LISTING, WHOLE
from .reruns.runspec import BaselineRun
from .suite import testdefs

if TYPE_CHECKING:
    from .atbase.baserun import BaseAnswer, Verdicts

# The re-run machinery (baserun.py, rerun.py) is imported where a test is re-run: a session
# whose questions the base cache answers, and which has no failures, never needs it.


def _judge(
    node: NodeOutcome,
    verdict: Mapping[str, str],
    into: Classification,
    head_rootdir: Path | None = None,
) -> None:
    """File one head failure under its class, given what happened to it at the base (and,
    for a test the base did not list, its file at head in ``head_rootdir``)."""
    kind, base = verdict["kind"], verdict.get("signature")
    if kind == "unlisted":
        new, why = testdefs.new_case(node.nodeid, verdict.get("decorated", ""), head_rootdir)
        bucket = into.target_related if new else into.unknown
        bucket.append(TestFailure(nodeid=node.nodeid, signature=node.signature, reason=why))
        return
    bucket, reason = {
        "live": (into.unknown, verdict.get("detail", "")),
        "withheld": (into.unknown, verdict.get("detail", "")),
        "unread": (into.unknown, verdict.get("detail", "")),
        "failed": (into.target_related, f"failure changed: was {base}"),
        "collect-error": (into.unknown, "its file does not collect at base"),
        "skipped": (into.unknown, "skipped at base"),  # the base could not tell: fail closed
        "passed": (
            into.target_related,
            "passes at base" if "::" in node.nodeid else "imports at base",
        ),
        "missing": (into.target_related, "new test: not at base"),
    }[kind]
    if kind == "failed" and base == node.signature:
        bucket, reason, base = into.pre_existing, "fails the same at base", None
    bucket.append(
        TestFailure(
            nodeid=node.nodeid, signature=node.signature, base_signature=base, reason=reason
        )
    )


def _unknown(nodes: Sequence[NodeOutcome], reason: str, into: Classification) -> None:
    into.unknown += [
        TestFailure(nodeid=n.nodeid, signature=n.signature, reason=reason) for n in nodes
    ]


@record
class Begun:
    """A classification whose base re-run is under way (see :func:`begin`)."""

    failed: Sequence[NodeOutcome]
    run: BaselineRun
    questions: Questions
    result: Classification
    at_base: _AtBase | None = None  # None: nothing is to be re-run (see ``result``)


def begin(
    failed: Sequence[NodeOutcome],
    run: BaselineRun,
    progress: Callable[[str], None],
    stack: contextlib.ExitStack,
    questions: Questions = Questions(),
) -> Begun:
    """Start the base re-run of the failures the base cache does not know, and of ``questions``
    (kept until ``stack`` closes): :func:`conclude` re-runs the failures at head while it
    runs, so the two overlap."""
    result = Classification()
    if not failed and not questions:
        return Begun(failed, run, questions, result)
    if len(failed) > run.max_base_reruns:
        reason = (
            f"{len(failed)} failing tests exceed max_base_reruns = {run.max_base_reruns}: "
            "a systemic break, not re-run at base"
        )
        _unknown(failed, reason, result)
        result.limitations.append(reason)
        return Begun(failed, run, questions, result)
    if len(questions.skipped) > run.max_base_reruns - len(failed):
        why = (
            f"{len(questions.skipped)} skipped tests exceed what max_base_reruns = "
            f"{run.max_base_reruns} leaves: whether the change skipped them was not checked"
        )
        result.limitations.append(why)
        questions = dataclasses.replace(questions, skipped=())
    at_base = _start_at_base(failed, run, progress, stack, questions)
    return Begun(failed, run, questions, result, at_base)


def conclude(begun: Begun, progress: Callable[[str], None]) -> Classification:
    """The classification :func:`begin` started: the flaky check at head, then the base's
    answers."""
    result, at_base = begun.result, begun.at_base
    if at_base is None:
        return result
    failed = list(begun.failed)
    remaining = _flaky_check(failed, begun.run, progress, result) if failed else []
    at_base.judge(remaining, result)
    at_base.answer(begun.questions, result)
    return result


def _flaky_check(
    remaining: list[NodeOutcome],
    run: BaselineRun,
    progress: Callable[[str], None],
    into: Classification,
) -> list[NodeOutcome]:
    """Re-run the failures at head; file those that pass as flaky and return the rest."""
    from .reruns.childenv import child_env
    from .reruns.rerun import rerun

    env = child_env(environ=run.environ)  # the session's: its PYTHONHASHSEED, if set
    for attempt in range(run.reruns):
        progress(f"re-running {len(remaining)} failing test(s) at head (flaky check {attempt + 1})")
        nodeids = [n.nodeid for n in remaining]
        if run.rerun_at_head is not None:
            again = run.rerun_at_head(nodeids)
        else:
            again = rerun(nodeids, rootdir=run.rootdir, args=run.args, env=env, timeout=run.timeout)
        if again.status != "ok":
            into.limitations.append(f"flaky check at head did not complete: {again.detail}")
            break
        passed = [n for n in remaining if n.nodeid in again.passed]
        if passed and run.rerun_at_head is not None:
            passed = _confirmed_fresh(passed, run, env, progress, into)
        for node in passed:
            into.flaky.append(
                TestFailure(
                    nodeid=node.nodeid,
                    signature=node.signature,
                    reason="passes on a re-run at head, in a fresh process",
                )
            )
            remaining.remove(node)
    return remaining


def _confirmed_fresh(
    passed: list[NodeOutcome],
    run: BaselineRun,
    env: Mapping[str, str],
    progress: Callable[[str], None],
    into: Classification,
) -> list[NodeOutcome]:
    """Those of ``passed`` (on a re-run inside the session's own process) that pass in a fresh
    process too: a test that fails on its first call in every process is not flaky, whatever
    a second call in a process it already ran in says."""
    from .reruns.rerun import rerun

    progress(f"confirming {len(passed)} passing re-run(s) in a fresh process")
    nodeids = [n.nodeid for n in passed]
    fresh = rerun(nodeids, rootdir=run.rootdir, args=run.args, env=env, timeout=run.timeout)
    if fresh.status != "ok":
        into.limitations.append(f"flaky check in a fresh process did not complete: {fresh.detail}")
        return []
    return [n for n in passed if n.nodeid in fresh.passed]


@record
class _AtBase:
    """The base's answers: those cached for this base, and a re-run of the rest under way."""

    known: Verdicts
    cache_file: Path | None = None
    asked: frozenset[str] = frozenset()
    pending: Callable[[], BaseAnswer] | None = None
    unavailable: str | None = None
    head_rootdir: Path | None = None  # where the tests are at head
    notes: tuple[str, ...] = ()  # how the base checkout was made ready, when it is news
    answered: BaseAnswer | None = None
    waited: bool = False

    def _wait(self, into: Classification) -> None:
        """Wait for the base re-run (once), keep its answers and cache what may be; say once
        why the base could not tell, if it could not."""
        if self.waited:
            return
        self.waited = True
        if self.pending is not None and self.unavailable is None:
            from .atbase.baserun import BaseUnavailable

            try:
                self.answered = self.pending()
            except BaseUnavailable as exc:
                self.unavailable = str(exc)
        if self.unavailable is not None:
            into.limitations.append(self.unavailable)
            return
        if self.answered is None:
            return
        self.known.update(self.answered.verdicts)
        for kind in ("live", "withheld"):
            found = [v for v in self.known.values() if v["kind"] == kind]
            if found:
                into.limitations.append(found[0]["detail"] + ": its results count as unknown")
        if self.cache_file is not None:  # an answer from the live code is no base answer
            kept = {k: v for k, v in self.known.items() if v["kind"] not in _UNCACHED}
            basecache.store(self.cache_file, kept)

    def judge(self, nodes: Sequence[NodeOutcome], into: Classification) -> None:
        """File ``nodes`` (the failures the flaky check kept) by the base's answers; a base
        re-run none of them needs is not waited for here."""
        if nodes:  # how the base was made ready, when the report needs to say it
            into.limitations += self.notes
        if any(n.nodeid in self.asked for n in nodes):
            self._wait(into)
            if self.unavailable is not None:
                _unknown([n for n in nodes if n.nodeid in self.asked], self.unavailable, into)
        for node in nodes:
            if node.nodeid in self.known:
                _judge(node, self.known[node.nodeid], into, self.head_rootdir)

    def answer(self, questions: Questions, into: Classification) -> None:
        """Answer the session's other questions: which of its skipped tests pass at the
        base, and which tests the base collects from the paths listed."""
        if not questions:
            return
        self._wait(into)
        if self.unavailable is not None:
            return  # said once, as a limitation: nothing is answered
        for nodeid in questions.skipped:
            if self.known.get(nodeid, {}).get("kind") == "passed":
                into.newly_skipped.append(
                    TestFailure(nodeid=nodeid, signature="", reason="passes at base")
                )
        for path in questions.skipped_files:
            for nodeid in _lines(self.known.get(WHOLE + path, {}).get("passed", "")):
                reason = "passes at base; its file is skipped whole at collection"
                into.newly_skipped.append(TestFailure(nodeid=nodeid, signature="", reason=reason))
        entries = [self.known.get(LISTING + p, {}) for p in questions.listing]
        if entries and all(e.get("kind") == "listing" for e in entries):
            into.listed = frozenset(n for e in entries for n in _lines(e["ids"]))

    def keep_paths(self, answer: BaseAnswer, questions: Questions) -> None:
        """Keep what the base re-run said about paths (listed, run whole) as cache entries;
        what a run that did not run the base's code only said is no answer."""
        for path in questions.listing:
            inside = [n for n in answer.listed if _under(n, path)]
            entry = {"kind": "listing", "ids": "\n".join(sorted(inside))}
            self.known[LISTING + path] = entry if answer.trusted else _UNTRUSTED
        ran = answer.whole
        for path in questions.skipped_files:
            passed = sorted(n for n in ran.passed if _under(n, path)) if ran else []
            entry = {"kind": "whole", "passed": "\n".join(passed)}
            self.known[WHOLE + path] = entry if answer.trusted else _UNTRUSTED


_UNTRUSTED = {"kind": "live", "detail": "the base run did not run the base's code only"}


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


def _under(nodeid: str, path: str) -> bool:
    """Whether ``nodeid`` is a test collected from ``path`` (a file or folder, ``.`` the
    rootdir)."""
    file = nodeid.split("::", 1)[0]
    return path == "." or file == path or file.startswith(path.rstrip("/") + "/")


# Answers about this run alone: code of the working tree ran, or compiled modules it needs
# were withheld; the next run may do neither.
_UNCACHED = ("live", "withheld")


def _start_at_base(
    nodes: Sequence[NodeOutcome],
    run: BaselineRun,
    progress: Callable[[str], None],
    stack: contextlib.ExitStack,
    questions: Questions = Questions(),
) -> _AtBase:
    """The cached base answers for ``nodes`` and ``questions``, and a base re-run started
    for the others (only cache misses are run), kept until ``stack`` closes."""
    if run.base_commit is None:
        known: Verdicts = {n.nodeid: {"kind": "missing"} for n in nodes}
        known |= {n: {"kind": "missing"} for n in questions.skipped}
        known |= {WHOLE + p: {"kind": "whole", "passed": ""} for p in questions.skipped_files}
        known |= {LISTING + p: {"kind": "listing", "ids": ""} for p in questions.listing}
        return _AtBase(known=known, head_rootdir=run.rootdir)
    cache_file = run.cache_file()
    at = _AtBase(
        known=basecache.load(cache_file),
        cache_file=cache_file,
        head_rootdir=run.rootdir,
        notes=run.preparation.notes,
    )
    todo = [n for n in [*(n.nodeid for n in nodes), *questions.skipped] if n not in at.known]
    whole = tuple(p for p in questions.skipped_files if WHOLE + p not in at.known)
    listing = tuple(p for p in questions.listing if LISTING + p not in at.known)
    if not (todo or whole or listing):
        return at
    from .atbase.baserun import BaseUnavailable, started_at_base
    from .reruns.rerun import Ask

    ask = Ask(nodeids=frozenset(todo), whole=whole, listing=listing)
    at.asked = ask.nodeids
    failing = sum(n.nodeid in ask.nodeids for n in nodes)
    what = [f"{len(ask.nodeids) - failing} skipped test(s)"] if len(ask.nodeids) > failing else []
    what += [f"{len(ask.whole)} skipped file(s)"] if ask.whole else []
    what += [f"the collection of {len(ask.listing)} path(s)"] if ask.listing else []
    base = run.base_commit[:12]
    if failing:
        progress(", ".join([f"re-running {failing} failing test(s) at base {base}", *what]))
    else:
        progress(f"asking base {base}: {', '.join(what)}")
    try:
        started = stack.enter_context(started_at_base(run, ask))
    except BaseUnavailable as exc:
        at.unavailable = str(exc)
        return at
    asked_paths = Questions(listing=ask.listing, skipped_files=ask.whole)

    def pending() -> BaseAnswer:
        answer = started()
        at.keep_paths(answer, asked_paths)
        return answer

    at.pending = pending
    return at
