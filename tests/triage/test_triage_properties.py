"""Properties of triage on arbitrary JSON-shaped lane output: it never raises, and every raw
finding is accounted for, either rejected or behind a kept one."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_boundedreview.change import git
from pytest_boundedreview.change.trees.treefiles import TreeFiles
from pytest_boundedreview.models.plain import dumps, validate
from pytest_boundedreview.models.report import Findings
from pytest_boundedreview.triage.steps import Raised, triage

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = {
    "path": st.sampled_from(["app.py", "lib.py", "../x", "/abs", ".git/x", "nope.py", "d"]) | JSON,
    "line": st.integers(min_value=-3, max_value=30) | JSON,
    "end_line": st.integers(min_value=-3, max_value=30) | JSON,
    "severity": st.sampled_from(["blocking", "advisory", "fatal"]) | JSON,
    "category": st.sampled_from(["correctness", "style", "security", "BAD"]) | JSON,
    "failure_mode": st.sampled_from(["f", "F!", ""]) | JSON,
    "evidence": st.sampled_from(["e", ""]) | JSON,
    "remediation": st.sampled_from(["r"]) | JSON,
    "quote": st.sampled_from(["x = 1", "nothing here", ""]) | JSON,
    "confidence": st.floats(min_value=-1, max_value=2) | JSON,
}
FINDING_LIKE = st.fixed_dictionaries({}, optional=FIELDS)
RAISED = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]), st.sampled_from(["verdict", "scout"]), FINDING_LIKE | JSON
    ),
    max_size=12,
)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> TreeFiles:
    repo = GitRepo.init(Path(tmp_path_factory.mktemp("prop")) / "repo")
    repo.commit({"app.py": "x = 1\n" * 10, "lib.py": "y = 2\n", "d/f.py": "z\n"}, "snapshot")
    return TreeFiles(git.open_repo(repo.path), repo.tree())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raised=RAISED)
def test_triage_accounts_for_every_finding(
    files: TreeFiles, raised: list[tuple[str, str, Any]]
) -> None:
    out = triage([Raised(*item) for item in raised], files, {"app.py"})
    assert len(out.rejected) + out.kept_raw == len(raised)
    kept = out.blocking + out.advisory
    assert len(kept) <= out.kept_raw
    assert all(f.severity == "blocking" for f in out.blocking)
    assert all(f.path in ("app.py", "lib.py", "d/f.py") for f in kept)
    # every lane with a finding that was not rejected is named by some kept finding
    raised_by = Counter(lane for lane, _, _ in raised)
    rejected_by = Counter(lane for r in out.rejected for lane in r.lanes)
    survivors = {lane for lane in raised_by if raised_by[lane] > rejected_by[lane]}
    assert survivors == {lane for f in kept for lane in f.lanes}
    # what triage produced is a valid report section
    section = Findings(blocking=out.blocking, advisory=out.advisory, rejected=out.rejected)
    validate(Findings, dumps(section))
