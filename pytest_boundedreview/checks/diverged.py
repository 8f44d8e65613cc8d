"""Tests reported otherwise than they ran, and whose code did it.

The session holds each test's observed call against its counted outcome
(``baseline/athead/witnessed.py``). A difference is laid at the project's code that runs or reports
tests (``baseline/athead/suspects.py``: hook implementations of the run-test protocol, the test
class's ``runtest``, pytest functions replaced):

- code in a file the change adds or edits: a blocking finding at that file;
- otherwise code the base holds unchanged: the project's long-standing way of reporting its
  tests, not this change's doing; said in ``limitations``;
- otherwise (no code of the project's explains it, or it lies in files git does not track):
  the gate cannot say whose it is, and is ``indeterminate``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..change import git
from ..core.fingerprint import finding_fingerprint
from ..models.record import record
from .samecode import unchanged

if TYPE_CHECKING:
    from ..baseline.athead.suspects import Suspect
    from ..change.freeze import Target
    from ..models.finding import ReportFinding

RULE = "outcome_observed"
SHOWN = 3  # tests named in a message; the rest are counted


@record(frozen=True)
class Verdict:
    """What the differences mean for the gate."""

    findings: Sequence[ReportFinding] = ()
    limitations: Sequence[str] = ()
    undecided: Sequence[str] = ()  # each keeps the gate from "yes"

    def held(self) -> list[str]:
        """What keeps a shard incomplete: its merge sees neither the findings nor the rest."""
        blamed = [f"in {f.path}: {f.evidence}" for f in self.findings]
        return [f"tests reported otherwise than they ran, {b}" for b in blamed] + [*self.undecided]


def _tests(diverged: Mapping[str, str]) -> str:
    shown = [f"{nodeid} ({how})" for nodeid, how in list(diverged.items())[:SHOWN]]
    more = len(diverged) - SHOWN
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def _relative(suspects: Sequence[Suspect], root: Path) -> dict[str, list[tuple[int, str]]]:
    """The suspects by file relative to the repository's top."""
    top = os.path.realpath(root)
    by_file: dict[str, list[tuple[int, str]]] = {}
    for file, line, what in suspects:
        relative = os.path.relpath(file, top)
        if not relative.startswith(".."):
            by_file.setdefault(Path(relative).as_posix(), []).append((line, what))
    return by_file


def _finding(path: str, found: list[tuple[int, str]], diverged: Mapping[str, str]) -> ReportFinding:
    from ..models.finding import ReportFinding

    lines = [line for line, what in found if not what.startswith(("registers", "defines"))]
    whats = "; ".join(f"line {line}: {what}" for line, what in sorted(set(found)))
    count = len(diverged)
    return ReportFinding(
        path=path,
        line=min(lines) if lines else 1,
        severity="blocking",
        category="correctness",
        failure_mode=(
            f"{count} test(s) reported otherwise than they ran, and the change adds or edits "
            "code here that runs or reports tests"
        ),
        evidence=f"observed in the session: {_tests(diverged)}. In {path}: {whats}",
        remediation=(
            "leave tests' outcomes to pytest: remove the code that runs, catches or rewrites "
            "the test's result, or have it reviewed and record a typed waiver for this finding"
        ),
        fingerprint=finding_fingerprint(path, "correctness", f"{RULE}:{path}"),
        verification="deterministic",
        note=f"scan: {RULE}",
    )


def _changes(
    by_file: Mapping[str, list[tuple[int, str]]],
    touched: set[str],
    repo: git.Repo,
    base_commit: str | None,
) -> list[tuple[str, list[tuple[int, str]]]]:
    """Of the suspects in files the change touches, those whose own code is not the base's
    (samecode.py), by file: a file edited elsewhere keeps its unchanged hooks clean."""
    paths = sorted(path for path in by_file if path in touched)
    names = {path: f"{base_commit}:{path}" for path in paths} if base_commit else {}
    at_base = git.read_objects(repo.root, list(names.values())) if names else {}
    found = []
    for path in paths:
        try:
            now = (repo.root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            now = ""  # unreadable: it cannot clear the change
        blob = at_base.get(names[path]) if path in names else None
        base = blob.decode("utf-8", "replace") if blob is not None else None
        mine = [
            (line, what) for line, what in by_file[path] if not unchanged(now, base, line, what)
        ]
        if mine:
            found.append((path, mine))
    return found


def observed(
    diverged: Mapping[str, str],
    suspects: Callable[[], Sequence[Suspect]],
    repo: git.Repo,
    target: Target,
) -> Verdict:
    """:func:`judged` for a session's target; ``suspects`` is asked only for a difference."""
    if not diverged:
        return Verdict()
    return judged(diverged, suspects(), repo, target.files, target.base_commit)


def judged(
    diverged: Mapping[str, str],
    suspects: Sequence[Suspect],
    repo: git.Repo,
    changed: Sequence[str],
    base_commit: str | None,
) -> Verdict:
    """What ``diverged`` (node id -> how) means, given the project's code that runs or
    reports tests (``suspects``) and the files the change touches (``changed``)."""
    if not diverged:
        return Verdict()
    by_file = _relative(suspects, repo.root)
    changes = _changes(by_file, set(changed), repo, base_commit)
    if changes:
        return Verdict(findings=[_finding(path, found, diverged) for path, found in changes])
    others = sorted(by_file)
    names = {path: f"{base_commit}:{path}" for path in others} if base_commit else {}
    at_base = git.read_objects(repo.root, list(names.values())) if names else {}
    untracked = [path for path, name in names.items() if at_base.get(name) is None]
    if others and base_commit and not untracked:
        return Verdict(
            limitations=[
                f"{len(diverged)} test(s) reported otherwise than they ran, by code the change "
                f"does not touch ({', '.join(others)}): not a finding of this change: "
                + _tests(diverged)
            ]
        )
    where = (
        f"the code that runs or reports them lies in files the base does not hold "
        f"({', '.join(untracked or others)})"
        if others
        else "no code of the project's that runs or reports tests explains it"
    )
    return Verdict(
        undecided=[
            f"{len(diverged)} test(s) reported otherwise than they ran, and {where}: "
            + _tests(diverged)
        ]
    )
