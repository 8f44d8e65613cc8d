"""``bounded-review run --plan PLAN.md``: review a plan with the plan checks and the plan
lanes (feasibility, acceptance), in the same loop ledger and gate as code. A pass says the plan
is fit to carry out, never that it was carried out."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from pathlib import Path

from ..baseline.classification import Classification
from ..baseline.reruns.runspec import BaselineRun
from ..change import baseconfig, git
from ..change.freeze import Target
from ..change.statedir import approver
from ..change.trees.treefiles import TreeFiles, split_lines
from ..core.ceilings import Tier
from ..core.pytestconfig.pytestini import from_files
from ..core.settings.config import Settings, load_settings, option_overrides
from ..core.statefile import state_folder
from ..models.report import Report, RiskReason
from ..report.build import assess_risk, build
from ..report.publish import progress, publish
from ..review.phase import Counts, Review
from ..triage.waivers import load as load_waivers
from .checks import check_plan, first_irreversible
from .sections import named, sections
from .target import freeze_plan

NOT_CARRIED_OUT = (
    "a plan review: a pass means the plan is fit to carry out, not that it was carried out "
    "or that anything it describes works"
)


def plan_risk(settings: Settings, target: Target, text: str) -> tuple[Tier, list[RiskReason]]:
    """A configured tier; else ``strict`` for a plan with irreversible actions, ``standard``
    for any other (a plan is never a docs-only change)."""
    if settings.risk != "auto":
        return assess_risk(settings, target)
    where = target.files[0] if target.files else None
    irreversible = first_irreversible(text, settings.plan.irreversible)
    if irreversible:
        return "strict", [RiskReason(path=where, rule=f"plan: irreversible ({irreversible})")]
    return "standard", [RiskReason(path=where, rule="plan")]


def review_plan(args: argparse.Namespace, cwd: Path) -> tuple[Report, list[str]]:
    """Review the plan ``args.plan``; write the report; return it and the lines to print
    after it (annotations in GitHub Actions)."""
    repo = git.open_repo(cwd)
    keys = ("mode", "risk", "no_lanes", "full", "reset", "report", "markdown", "sarif")
    overrides = option_overrides({key: getattr(args, key) for key in keys}, cwd)
    settings, path = load_settings(
        cwd, repo.root, overrides, approver(repo, from_files(cwd, repo.root))
    )
    target, text = freeze_plan(repo, Path(cwd, args.plan))
    rules = baseconfig.rule(repo, target.base_commit, settings, path, cwd, overrides)
    # Plan verdicts must say how they know (CONTRACT §6); code checks do not apply to a plan.
    settings = dataclasses.replace(rules.settings, require_assurances=True, checks=[])
    rules = dataclasses.replace(
        rules, proposals=[p for p in rules.proposals if p.key.partition(".")[0] != "checks"]
    )
    where = target.files[0]
    plan_lines = split_lines(text)
    found = check_plan(where, plan_lines, TreeFiles(repo, target.tree), settings.plan)
    objective = named(sections(plan_lines), settings.plan.objective)
    state = state_folder(repo.root, settings.state_dir)

    def baseline_run() -> BaselineRun:  # a finding's `pytest` reproduction runs at HEAD
        return BaselineRun.configured(repo, repo.root, target.base_commit, [], settings, state)

    review = Review(
        settings=settings,
        repo=repo,
        target=target,
        risk=plan_risk(settings, target, text),
        state=state,
        progress=progress,
        baseline_run=baseline_run,
        objective=" ".join(objective.body.split()) if objective else "",  # "": none yet
        reset_hint="--reset",
        waivers=load_waivers(repo, target.tree, settings),  # HEAD's tree with the plan
        rules=rules,
    )
    progress(f"reviewing the plan {where} ({target.revision})")
    evidence = review.judge(Counts(), Classification(), [NOT_CARRIED_OUT], None, found)
    again = f"bounded-review run --plan {shlex.quote(str(Path(cwd, args.plan).absolute()))}"
    evidence = dataclasses.replace(evidence, again=again)
    report = build(evidence)
    return report, publish(report, settings.report_file(state), settings.markdown, settings.sarif)
