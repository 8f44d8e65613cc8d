"""``bounded-review merge``: combine the shard reports of one revision, then run the checks,
scans and reviewer lanes once and gate once, as a single session would have."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..baseline.classification import Classification
from ..baseline.reruns.runspec import BaselineRun
from ..change import baseconfig, git
from ..change.checkouts import kept, worktree
from ..change.freeze import freeze
from ..change.statedir import approver
from ..core.errors import UsageError
from ..core.pytestconfig.pytestini import from_files
from ..core.readfile import read_bounded
from ..core.settings.config import load_settings
from ..core.statefile import state_folder
from ..models.plain import validate
from ..models.record import record
from ..models.report import Gate, GateAnswer, Report, TestFailure
from ..report.build import NO_LANES, assess_risk, build
from ..report.publish import progress, publish
from ..review.phase import Counts, Review
from ..triage.waivers import added as added_waivers
from ..triage.waivers import load as load_waivers

MAX_SHARD_BYTES = 64 * 1024 * 1024


@record(frozen=True)
class Shard:
    path: Path
    report: Report


def load(paths: Sequence[Path]) -> list[Shard]:
    """The shard reports at ``paths``, read and validated, or a :class:`UsageError` naming the
    file and what is wrong with it."""
    from pydantic import ValidationError

    from ..core.validation import describe_all

    shards = []
    if len({p.resolve() for p in paths}) < len(paths):
        raise UsageError("a shard report is given twice: its tests would be counted twice")
    for path in paths:
        data = read_bounded(path, MAX_SHARD_BYTES, "shard report")
        try:
            report = validate(Report, data)
        except ValidationError as exc:
            why = "; ".join(describe_all(exc)[:3])
            raise UsageError(f"{path} is not a bounded-review report: {why}") from None
        if report.shard is None:
            raise UsageError(
                f"{path} is a whole session's report, not a shard's: "
                "write shards with pytest --bounded-review --bounded-review-shard"
            )
        shards.append(Shard(path, report))
    if not shards:
        raise UsageError("no shard reports given")
    return shards


def _same_change(shards: Sequence[Shard]) -> None:
    """All shards must have reviewed one change (same revision, kind, base and files) with
    tests of their own: a test run by two shards would be counted twice."""

    def identity(shard: Shard) -> tuple[object, ...]:
        t, info = shard.report.target, shard.report.shard
        where = info.rootdir if info else None
        return (t.revision, t.kind, t.base, t.base_commit, tuple(t.files), where)

    first = identity(shards[0])
    if any(identity(s) != first for s in shards[1:]):
        listed = "\n  ".join(
            f"{s.path}: {s.report.target.revision} ({s.report.target.kind} against "
            f"{s.report.target.base} {(s.report.target.base_commit or '')[:12]}, "
            f"{len(s.report.target.files)} file(s))"
            for s in shards
        )
        raise UsageError(
            "the shard reports are of different revisions; merge shards of one run only:\n  "
            + listed
        )
    owner: dict[str, Path] = {}
    for shard in shards:
        assert shard.report.shard is not None
        for nodeid in shard.report.shard.nodeids:
            other = owner.setdefault(nodeid, shard.path)
            if other != shard.path:
                raise UsageError(
                    f"{other} and {shard.path} both ran {nodeid}: shards must split the tests, "
                    "not repeat them (each test would be counted twice)"
                )


def combined(shards: Sequence[Shard]) -> tuple[Counts, Classification, list[str], list[str]]:
    """The shards' counts and classified failures together, their limitations (each named by
    its shard) and the reasons a shard cannot count as having run to its end."""
    tests = Classification()
    seen: set[tuple[str, str]] = set()
    passed = failed = 0
    limitations: list[str] = []
    incomplete: list[str] = []
    for shard in shards:
        report, info = shard.report, shard.report.shard
        assert info is not None  # checked by load()
        passed += report.tests.passed
        failed += report.tests.failed
        for bucket in ("target_related", "pre_existing", "flaky", "unknown"):
            into: list[TestFailure] = getattr(tests, bucket)
            for failure in getattr(report.tests, bucket):
                if (bucket, failure.nodeid) not in seen:
                    seen.add((bucket, failure.nodeid))
                    into.append(failure)
        limitations += [
            f"shard {shard.path.name}: {text}" for text in report.limitations if text != NO_LANES
        ]
        if not info.complete:
            why = "; ".join(r for r in report.gate.reasons[1:]) or "it did not run to its end"
            incomplete.append(f"shard {shard.path.name} is incomplete: {why}")
    deselected = len(_not_run(shards))
    return Counts(passed, failed, deselected), tests, limitations, incomplete


def _not_run(shards: Sequence[Shard]) -> list[str]:
    """Tests some shard collected and deselected that no shard ran."""
    infos = [shard.report.shard for shard in shards if shard.report.shard]
    ran = {n for info in infos for n in info.nodeids}
    ran |= {n for info in infos for n in info.project_deselected}  # not the suite's
    return sorted({n for info in infos for n in info.deselected_ids} - ran)


def partial(shards: Sequence[Shard]) -> str | None:
    """Why the shards together ran only part of the suite: a test file of the suite that no
    shard's paths reach, a test a shard deselected at invocation that no shard ran, or a shard's
    own blind spot (--lf, deselection under xdist that no worker reported)."""
    infos = [s.report.shard for s in shards if s.report.shard]
    missed = _not_run(shards)
    files = {f for info in infos for f in info.files}
    unseen = sorted({f for info in infos for f in info.suite_files} - files)
    why = [
        f"shard {s.path.name}: {s.report.shard.narrowed}"
        for s in shards
        if s.report.shard and s.report.shard.narrowed
    ]
    if unseen:
        more = " …" if len(unseen) > 5 else ""
        why.append(f"no shard collected {', '.join(unseen[:5])}{more}")
    if missed:
        more = " …" if len(missed) > 5 else ""
        why.append(f"{len(missed)} test(s) no shard ran ({', '.join(missed[:5])}{more})")
    return "; ".join(why) or None


def merge(
    paths: Sequence[Path],
    overrides: Mapping[str, object],
    cwd: Path | None = None,
) -> tuple[Report, list[str]]:
    """Merge the shard reports at ``paths`` in the repository at ``cwd``; write the final
    report; return it and the lines to print after it (annotations in GitHub Actions)."""
    shards = load(paths)
    _same_change(shards)
    first = shards[0].report
    assert first.shard is not None
    repo = git.open_repo(cwd or Path.cwd())
    worktree.sweep(repo)
    rootdir = (repo.root / first.shard.rootdir).resolve()
    if not rootdir.is_relative_to(repo.root.resolve()):
        raise UsageError(f"{shards[0].path}: its rootdir {first.shard.rootdir!r} is outside")
    given = {
        "mode": first.authorization,
        "target": first.target.kind,
        "base": first.target.base,
        **overrides,
    }
    settings, path = load_settings(
        rootdir, repo.root, given, approver(repo, from_files(rootdir, repo.root))
    )
    kept.sweep(repo, keep=settings.reuse_base_checkout)
    kind = first.target.kind
    if kind == "plan":
        raise UsageError(f"{shards[0].path} is a plan's report: only test shards are merged")
    target = freeze(repo, kind, first.target.base, base_origin="the shard reports")
    if (target.revision, target.files) != (first.target.revision, first.target.files):
        raise UsageError(
            f"this checkout is {target.revision} ({len(target.files)} file(s) changed), the "
            f"shards tested {first.target.revision} ({len(first.target.files)}): run merge in "
            "a clean checkout of the commit the shards ran on, with the shard reports outside it"
        )
    reviewed = first.target.base_commit  # absent from shards of earlier versions
    if reviewed is not None and target.base_commit != reviewed:
        raise UsageError(
            f"the base {first.target.base} is {target.base_commit} here, the shards were "
            f"classified against {reviewed}: merge where the base names the same commit "
            "(fetch the same history, or run the shards again)"
        )
    rules = baseconfig.rule(repo, target.base_commit, settings, path, rootdir, given)
    settings = rules.settings
    state = state_folder(repo.root, settings.state_dir)

    args = first.shard.args

    def baseline_run() -> BaselineRun:
        return BaselineRun.configured(repo, rootdir, target.base_commit, args, settings, state)

    waivers = load_waivers(repo, target.tree, settings, target.base_commit)
    review = Review(
        settings=settings,
        repo=repo,
        target=target,
        risk=assess_risk(settings, target),
        state=state,
        progress=progress,
        baseline_run=baseline_run,
        waivers=waivers,
        added_waivers=added_waivers(repo, target.base_commit, settings, waivers),
        rules=rules,
    )
    counts, tests, limitations, incomplete = combined(shards)
    limitations.insert(0, f"merged from {len(shards)} shard report(s)")
    progress(f"merging {len(shards)} shard(s) of {target.revision}")
    if counts.passed + counts.failed == 0:
        incomplete.append("no shard ran a test")
    if target.empty:  # nothing to review: the tests' own status stands, as in one session
        if counts.failed:
            incomplete.append(f"nothing to review, and {counts.failed} test(s) failed")
        answer: GateAnswer = "indeterminate" if incomplete else "yes"
        evidence = review.evidence(
            Gate(review_clean=answer, reasons=incomplete), counts, tests, limitations
        )
    else:
        stopped = "; ".join(incomplete) or None
        evidence = review.judge(counts, tests, limitations, stopped, partial=partial(shards))
    report = build(evidence)
    return report, publish(report, settings.report_file(state), settings.markdown, settings.sarif)
