"""A reproduction runs in a copy of the snapshot: one that ran the working tree's code in
place of the copy's proves nothing and is not run, never "reproduced"."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.baseline.reruns.runspec import BaselineRun
from pytest_boundedreview.change import git
from pytest_boundedreview.models.finding import Reproduce
from pytest_boundedreview.triage.reproduce import Reproducer

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

BY_PATH = """\
from importlib.util import module_from_spec, spec_from_file_location

spec = spec_from_file_location("helper", {path!r})
helper = module_from_spec(spec)
spec.loader.exec_module(helper)


def test_it():
    assert helper.X == 2
"""
BY_IMPORT = "import helper\n\n\ndef test_it():\n    assert helper.X == 2\n"


@pytest.mark.parametrize(("test", "status"), [(BY_PATH, "not-run"), (BY_IMPORT, "pre-existing")])
def test_a_reproduction_that_ran_the_working_tree_is_not_run(
    tmp_path: Path, test: str, status: str
) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit(
        {"helper.py": "X = 1\n", "test_it.py": test.format(path=str(repo.path / "helper.py"))}
    )
    opened = git.open_repo(repo.path)
    run = BaselineRun(
        repo=opened,
        rootdir=opened.root,
        base_commit=opened.resolve("HEAD"),
        args=["-p", "no:cacheprovider"],
        reruns=0,
        max_base_reruns=5,
        timeout=120,
        state=tmp_path / "state",
    )
    spec = Reproduce(pytest="test_it.py::test_it")
    (result,) = Reproducer(run, repo.tree())([spec]).values()
    assert result.status == status, result.detail
    if status == "not-run":
        assert f"helper ({repo.path / 'helper.py'})" in result.detail
