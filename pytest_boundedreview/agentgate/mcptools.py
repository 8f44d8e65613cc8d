"""What the read-only tools of ``bounded-review mcp`` answer, computed without the MCP SDK.

Each answer is about one repository (a folder inside a git work tree, the server's working
folder by default) and is read, never written: the tree of the working tree is computed
through a temporary index, as the stop hook does (``target.freeze.tree_via_temp_index``), so
the user's index, working tree, refs and stash stay as they were. A report counts for the
working tree only when its ``target.revision`` is ``tree:<that tree>``.

Whatever cannot be answered (not a repository, a broken configuration, a report or loop state
that does not validate) raises :class:`Unanswered` or another ``FatalError`` whose message
names the file and the fix: the server returns it as a tool error, never as a clean answer.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import FatalError, LedgerError
from ..models.record import record

if TYPE_CHECKING:
    from ..change import git
    from ..core.settings.config import Settings
    from ..models.loop import LoopState
    from ..models.report import Report

REVIEW = "pytest --bounded-review"
LOOP_FIX = (
    "run `bounded-review loop validate --loop-id {loop} --state-dir {state}` to see the "
    "problem, or `bounded-review reset --loop-id {loop}` to archive the loop as it is (kept, "
    "never rewritten) so the next review starts a new one"
)


class Unanswered(FatalError):
    """A tool cannot answer; the message names the file and the fix."""


@record(frozen=True)
class Place:
    """The repository a tool is asked about: its settings, state folder and report file."""

    folder: Path
    repo: git.Repo
    settings: Settings
    state: Path
    report: Path


def folder_of(repository: str | None, cwd: Path | None = None) -> Path:
    """The folder ``repository`` names (relative to ``cwd``, the server's working folder),
    or ``cwd`` itself when none is given."""
    here = cwd or Path.cwd()
    if repository is None or not repository.strip():
        return here
    folder = here / Path(repository).expanduser()
    if not folder.is_dir():
        raise Unanswered(
            f"{folder} is not a folder: give `repository` as the path of a folder inside a git "
            f"work tree, or leave it out for the server's working folder ({here})"
        )
    return folder


def place(folder: Path) -> Place:
    """The repository around ``folder``, with its ``[tool.bounded-review]`` settings."""
    from ..change import git
    from ..change.statedir import checked_state_dir
    from ..core.pytestconfig.pytestini import from_files
    from ..core.settings.config import load_settings

    repo = git.open_repo(folder)

    def approve(settings: Settings) -> Path:  # the pytest configuration found from there
        return checked_state_dir(repo, settings.state_dir, from_files(folder, repo.root))

    settings, _ = load_settings(folder, repo.root, {}, approve)
    state = repo.root / settings.state_dir
    if settings.report:  # a relative `report` is where a session started here writes it
        report = Path(settings.report)
        report = report if report.is_absolute() else folder / report
    else:
        report = state / "report.json"
    return Place(folder, repo, settings, state, report)


def working_tree(where: Place) -> str:
    """``tree:<id>`` of the working tree with its untracked files, by content; written
    through a temporary index, so the user's index is not touched."""
    from ..change.freeze import tree_via_temp_index

    return f"tree:{tree_via_temp_index(where.repo, add_all=True)}"


def base_tree(where: Place) -> tuple[str, str, str] | None:
    """The review base (name, commit, ``tree:<id>``) a session would choose, or ``None`` when
    it cannot be resolved (then only a report can say what the tree is)."""
    from ..change import git
    from ..change.base import resolve_base

    with contextlib.suppress(FatalError):
        name, commit = resolve_base(where.repo, where.settings.base, os.environ)
        tree = git.text(["rev-parse", f"{commit}^{{tree}}"], where.repo.root)
        return name, commit, f"tree:{tree}"
    return None


def last_report(where: Place) -> Report | None:
    """The last report, read strictly (``report/accept.py``): ``None`` when there is
    none; :class:`Unanswered` naming the file and the fix when it does not validate."""
    from ..models.report import Report
    from ..report.accept import read

    found = read(where.report)
    if isinstance(found, Report):
        return found
    if not where.report.exists():
        return None
    raise Unanswered(found[1])


def _blockers(report: Report) -> list[str]:
    """What keeps the report from ``yes``: verified blockers and target-related tests."""
    lines = [
        f"{f.path}:{f.line} {f.failure_mode} (fix: {f.remediation})"
        for f in report.findings.blocking
    ]
    lines += [f"test {t.nodeid}: {t.reason}" for t in report.tests.target_related]
    lines += [f"test {t.nodeid}: {t.reason}" for t in report.tests.unknown]
    return lines


@record(frozen=True)
class Seen:
    """The working tree, the last report (if any) and the review base's tree."""

    where: Place
    tree: str
    report: Report | None
    base: tuple[str, str, str] | None

    @property
    def against_another_base(self) -> bool:
        """The report reviewed against another base than a session started here would take
        (an empty diff against ``HEAD`` is no review of the change)."""
        found = self.report
        return (
            found is not None
            and self.base is not None
            and (found.target.base_commit != self.base[1])
        )

    @property
    def of_this_tree(self) -> Report | None:
        """The report, when it is of exactly this tree, against the base."""
        found = self.report
        if found is None or found.target.revision != self.tree or self.against_another_base:
            return None
        return found

    @property
    def nothing_to_review(self) -> bool:
        return self.base is not None and self.base[2] == self.tree


def look(folder: Path) -> Seen:
    where = place(folder)
    return Seen(where, working_tree(where), last_report(where), base_tree(where))


def _about(seen: Seen) -> dict[str, Any]:
    return {
        "repository": str(seen.where.repo.root),
        "tree": seen.tree,
        "report": str(seen.where.report),
    }


def _not_reviewed(seen: Seen) -> str:
    path = seen.where.report
    if seen.report is None:
        why = f"no report at {path}"
    elif seen.against_another_base and seen.base is not None:
        why = (
            f"the last report ({path}) reviewed against {seen.report.target.base_commit}, "
            f"not the base {seen.base[0]} ({seen.base[1]})"
        )
    else:
        why = f"the last report ({path}) is of {seen.report.target.revision}, not of this tree"
    if seen.nothing_to_review and seen.base is not None:
        why += f"; the tree is the base's ({seen.base[0]}): nothing to review"
    return why


def gate(folder: Path) -> dict[str, Any]:
    """Whether a report of exactly the working tree exists, and its gate: ``yes``, ``no``,
    ``indeterminate``, or ``not-reviewed`` (no report of this tree)."""
    seen = look(folder)
    answer = {
        **_about(seen),
        "report_revision": seen.report.target.revision if seen.report else None,
        "nothing_to_review": seen.nothing_to_review,
    }
    found = seen.of_this_tree
    if found is None:
        return {**answer, "gate": "not-reviewed", "reasons": [_not_reviewed(seen)]}
    if found.gate.review_clean == "yes":  # only the whole review counts, as for the hooks
        from ..report.accept import claimed_less

        where = seen.where
        less = claimed_less(where.report, found, seen.tree, where.settings.state_dir)
        if less is not None:
            return {**answer, "gate": "not-reviewed", "reasons": [f"{less}; run {REVIEW}"]}
    return {
        **answer,
        "gate": found.gate.review_clean,
        "reasons": list(found.gate.reasons),
        "loop": {"loop_id": found.loop.loop_id, "status": found.loop.status},
        "generated_at": found.generated_at,
    }


def report(folder: Path) -> dict[str, Any]:
    """The last report, as validated, and whether it is of the working tree."""
    from ..core.errors import NoReportError
    from ..models.plain import jsonable

    where = place(folder)
    found = last_report(where)
    if found is None:
        raise NoReportError(f"no report at {where.report}: run {REVIEW} first")
    tree = working_tree(where)
    return {
        "path": str(where.report),
        "tree": tree,
        "of_this_tree": found.target.revision == tree,
        "report": jsonable(found),
    }


def next_action(folder: Path) -> dict[str, Any]:
    """The report's next action for this tree, or the review to run when there is no report
    of it (nothing to do when the tree is the base's)."""
    seen = look(folder)
    found = seen.of_this_tree
    if found is not None:
        return {
            **_about(seen),
            "gate": found.gate.review_clean,
            "next_action": found.next_action,
            "command": None if found.gate.review_clean == "yes" else REVIEW,
            "blockers": _blockers(found),
            "authorization": found.authorization,
        }
    mode = seen.where.settings.mode
    answer = {**_about(seen), "gate": "not-reviewed", "blockers": [], "authorization": mode}
    if seen.nothing_to_review:
        text = "none: the working tree is the base's tree, there is nothing to review"
        return {**answer, "next_action": text, "command": None}
    text = f"run `{REVIEW}` to review this tree ({_not_reviewed(seen)})"
    return {**answer, "next_action": text, "command": REVIEW}


def _loop_row(state: LoopState) -> dict[str, Any]:
    last = state.rounds[-1] if state.rounds else None
    rounds = [
        {
            "number": one.number,
            "revision": one.revision,
            "status": one.status,
            "coverage": one.coverage,
            "review_clean": one.gate.review_clean if one.gate else None,
            "blocking": len(one.blocking),
            "advisory": len(one.advisory),
            "lanes": [{"name": lane.name, "status": lane.status} for lane in one.lanes],
        }
        for one in state.rounds
    ]
    return {
        "loop_id": state.loop_id,
        "status": state.status,
        "stop_reason": state.stop_reason,
        "target_kind": state.target_kind,
        "base": state.base,
        "branch": state.branch,
        "round": last.number if last else 0,
        "revision": last.revision if last else None,
        "review_clean": last.gate.review_clean if last and last.gate else None,
        "ceilings": {
            "max_repair_loops": state.max_repair_loops,
            "repair_loops_used": state.repair_loops_used,
            "repair_loops_left": max(0, state.max_repair_loops - state.repair_loops_used),
            "max_rounds": state.max_repair_loops + 1,
        },
        "flags": list(state.flags),
        "updated_at": state.updated_at,
        "rounds": rounds,
    }


def loop_status(folder: Path) -> dict[str, Any]:
    """Every review loop in the state folder (CONTRACT §8): status, rounds and ceilings, and
    which one the last report belongs to."""
    from ..loop.ledger import Ledger

    where = place(folder)
    found = last_report(where)
    loops_folder = where.state / "loops"
    names = sorted(p.name for p in loops_folder.iterdir()) if loops_folder.is_dir() else []
    rows, broken = [], []
    for name in names:
        if not (loops_folder / name).is_dir() or (loops_folder / name).is_symlink():
            continue
        try:
            state = Ledger(where.state, name).read()
        except LedgerError as exc:
            broken.append(f"{exc} ({LOOP_FIX.format(loop=name, state=where.state)})")
            continue
        if state is not None:
            rows.append(_loop_row(state))
    if broken:
        raise Unanswered("; ".join(broken))
    return {
        "repository": str(where.repo.root),
        "state_dir": str(where.state),
        "report_loop_id": found.loop.loop_id if found else None,
        "loops": rows,
    }
