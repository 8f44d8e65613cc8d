"""The deterministic plan checks, rule by rule: sections (configurable names, rollback only for
irreversible plans), citations resolved in a real repository, commands claimed as run."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.trees.treefiles import TreeFiles, split_lines
from pytest_boundedreview.core.settings.tables import PlanConfig
from pytest_boundedreview.models.finding import ReportFinding
from pytest_boundedreview.plan.checks import check_plan
from pytest_boundedreview.plan.sections import normalise_title, sections

GOOD = """# Objective
Make `f` return 2.

## Steps
1. Edit app.py:2.

## Verification
Run `pytest -q`; it must report no failure.
"""


@pytest.fixture
def files(tmp_path: Path) -> TreeFiles:
    repo = GitRepo.init(tmp_path / "r")
    repo.commit({"app.py": "def f():\n    return 1\n", "docs/guide.md": "one\ntwo\n"})
    opened = git.open_repo(repo.path)
    return TreeFiles(opened, opened.tree_of("HEAD"))


def _check(text: str, files: TreeFiles, config: PlanConfig | None = None) -> list[ReportFinding]:
    return check_plan("PLAN.md", split_lines(text), files, config or PlanConfig())


def _modes(found: list[ReportFinding]) -> list[tuple[int, str]]:
    return [(f.line, f.category) for f in found]


def test_a_complete_plan_has_no_finding(files: TreeFiles) -> None:
    assert _check(GOOD, files) == []


@pytest.mark.parametrize(
    ("title", "role"),
    [("# Objective", "objective"), ("## Steps", "steps"), ("## Verification", "verification")],
)
def test_each_missing_section_blocks(files: TreeFiles, title: str, role: str) -> None:
    found = _check(GOOD.replace(title, "## Notes"), files)
    assert len(found) == 1
    assert found[0].severity == "blocking"
    assert found[0].failure_mode == f"the plan has no {role} section"
    assert found[0].verification == "deterministic"


def test_titles_match_with_numbering_punctuation_and_setext(files: TreeFiles) -> None:
    text = "Goal\n====\nx\n\n## 2. Implementation steps\ny\n\n### Verification & acceptance:\nz\n"
    assert _check(text, files) == []
    assert normalise_title("2. Roll-back plan") == "roll back plan"
    # A heading inside a code block is not a section.
    fenced = "```\n# Objective\n```\n## Steps\ns\n## Verification\nv\n"
    assert _modes(_check(fenced, files)) == [(1, "requirement")]
    # A document title that starts with "Plan" is not the steps section.
    titled = GOOD.replace("## Steps\n1. Edit app.py:2.\n", "").replace(
        "# Objective", "# Plan: faster doubling\n## Objective"
    )
    assert [f.failure_mode for f in _check(titled, files)] == ["the plan has no steps section"]


def test_an_empty_or_commented_out_section_does_not_count(files: TreeFiles) -> None:
    empty = GOOD.replace("Run `pytest -q`; it must report no failure.", "")
    found = _check(empty, files)
    assert [(f.line, f.failure_mode) for f in found] == [
        (7, "the plan's verification section is empty")
    ]
    hidden = GOOD + "\nWe drop the old table.\n<!--\n## Rollback\nRestore it.\n-->\n"
    assert _modes(_check(hidden, files)) == [(1, "missing-rollback")]


def test_section_names_are_configurable(files: TreeFiles) -> None:
    text = GOOD.replace("# Objective", "# Mission")
    assert len(_check(text, files)) == 1
    config = PlanConfig(objective=["mission"])
    assert _check(text, files, config) == []


def test_rollback_is_required_only_for_irreversible_plans(files: TreeFiles) -> None:
    risky = GOOD + "\nThen we drop the old table.\n"
    found = _check(risky, files)
    assert _modes(found) == [(1, "missing-rollback")]
    assert "'drop'" in found[0].failure_mode
    assert _check(risky + "\n## Rollback\nRestore the backup.\n", files) == []
    assert _check(risky, files, PlanConfig(irreversible=[])) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cited", "blocks"),
    [
        ("app.py:2", False),
        ("app.py:1-2", False),
        ("./app.py:1", False),
        ("docs/guide.md:2", False),
        ("app.py:3", True),  # past the end
        ("app.py:2-9", True),
        ("app.py:0", True),
        ("missing.py:1", True),
        ("docs/other.md:1", True),
        ("other.py:1", True),
        # Not files: addresses, hosts and versions.
        ("127.0.0.1:8000", False),
        ("db.internal.example.com:5432", False),
        ("python3.11:3", False),
        ("1.2.3:4", False),
        ("C:\\src\\app.py:2", False),
    ],
)
def test_citations_resolve_in_the_repository(files: TreeFiles, cited: str, blocks: bool) -> None:
    found = _check(GOOD + f"\nSee {cited} for context.\n", files)
    assert _modes(found) == ([(10, "plan-contradiction")] if blocks else [])


def test_citations_may_be_relative_to_the_plan(files: TreeFiles) -> None:
    text = GOOD + "\nSee ../../app.py:2 and ../guide.md:1.\n"
    assert check_plan("docs/plans/PLAN.md", split_lines(text), files, PlanConfig()) == []
    assert _modes(_check(text, files)) == [(10, "plan-contradiction")] * 2


def test_urls_and_times_are_not_citations(files: TreeFiles) -> None:
    text = GOOD + "\nSee https://example.com/x.html:8080 and meet at 10:30.\n"
    assert _check(text, files) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("line", "claimed"),
    [
        ("I ran `pytest -q` and all was well.", True),
        ("`make test` passed on my machine.", True),
        ("We have run `tox` already.", True),
        ("Verified with `npm test`.", True),
        ("`ruff check .` was clean.", True),
        ("`ruff check .` is clean.", False),  # a requirement as often as a claim
        ("Verify that `pytest -q` passes.", False),
        ("Done when `pytest -q` passed twice in a row.", False),
        ("Repeat until `mypy .` is clean.", False),
        ("Ensure `tox` exits 0 on CI.", False),
        ("The change will be tested with `pytest -q`.", False),
        ("It should be verified by `make check`.", False),
        ("After we have run `alembic upgrade head`, restart.", False),
        ("Run `pytest -q` after the change.", False),
        ("`pytest -q` must pass.", False),
        ("The `passed` field is new.", False),
    ],
)
def test_commands_quoted_as_run_are_flagged(files: TreeFiles, line: str, claimed: bool) -> None:
    found = _check(GOOD + "\n" + line + "\n", files)
    assert _modes(found) == ([(10, "unverifiable-gate")] if claimed else [])


def test_a_shell_transcript_is_a_claimed_run(files: TreeFiles) -> None:
    transcript = GOOD + "\n```\n$ pytest -q\n3 passed\n```\n"
    found = _check(transcript, files)
    assert _modes(found) == [(11, "unverifiable-gate")]
    assert "`$ pytest -q`" in found[0].failure_mode
    # A command to run, without output, is a step.
    assert _check(GOOD + "\n```\n$ pytest -q\n```\n", files) == []


def test_sections_carry_their_bodies() -> None:
    found = sections(split_lines(GOOD))
    assert [(s.title, s.line, s.end) for s in found] == [
        ("Objective", 1, 3),
        ("Steps", 4, 6),
        ("Verification", 7, 8),
    ]
    assert found[0].body == "Make `f` return 2."
