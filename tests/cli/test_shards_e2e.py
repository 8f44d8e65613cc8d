"""CI shards end to end: two real `pytest --bounded-review --bounded-review-shard -n 2` runs
over one revision, then `bounded-review merge` classifies, reviews with a real lane once and
gates once; mismatched or unfit inputs are errors that name the file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo, clean_env

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

REVIEWER = """
import json, sys
json.load(sys.stdin)
with open(sys.argv[1], "a") as counter:
    counter.write("x\\n")
print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "pass",
                  "rationale": "read the change", "findings": []}))
"""


def _run(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return warmstart.run(
        [sys.executable, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=clean_env(),
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> tuple[GitRepo, Path]:
    """A change on a branch: tests/test_a.py has a failure the base had too, tests/test_b.py
    a regression; a reviewer lane counts its invocations."""
    repo = GitRepo.init(tmp_path / "project")
    counter = tmp_path / "lane-invocations"
    script = tmp_path / "reviewer.py"
    script.write_text(REVIEWER)
    command = json.dumps([sys.executable, str(script), str(counter)])
    repo.commit(
        {
            ".gitignore": "__pycache__/\n.pytest_cache/\n.bounded-review/\n",
            "pyproject.toml": '[tool.bounded-review]\nrisk = "standard"\n'
            '[[tool.bounded-review.lanes]]\nname = "rev"\nlens = "correctness"\n'
            f"command = {command}\n",
            "app.py": "def double(x):\n    return 2 * x\n",
            "tests/test_a.py": "def test_old_bug():\n    assert 1 == 2\n\n"
            "def test_fine():\n    assert True\n",
            "tests/test_b.py": "from app import double\n\n"
            "def test_double():\n    assert double(2) == 4\n\n"
            "def test_other():\n    assert True\n",
        },
        "base",
    )
    repo.git("branch", "base")
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.commit({"app.py": "def double(x):\n    return 3 * x\n"}, "regression")
    return repo, counter


# Outputs are written inside the repository only: shard and merged reports go to the state
# folder, which git ignores.
STATE = ".bounded-review"


def _shard(repo: GitRepo, out: Path, name: str, *tests: str) -> subprocess.CompletedProcess[str]:
    return _run(
        repo.path,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
        "--bounded-review",
        "--bounded-review-shard",
        "--bounded-review-base=base",
        f"--bounded-review-report={out / name}",
        *tests,
    )


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def test_two_shards_merge_into_one_gate(project: tuple[GitRepo, Path], tmp_path: Path) -> None:
    repo, counter = project
    out = repo.path / STATE / "shards"
    with repo.untouched():
        first = _shard(repo, out, "shard-1.json", "tests/test_a.py")
        second = _shard(repo, out, "shard-2.json", "tests/test_b.py")
        # A shard records; it does not gate: failures do not fail it, and no lane ran.
        assert first.returncode == 0, first.stdout + first.stderr
        assert second.returncode == 0, second.stdout + second.stderr
        assert not counter.exists()
        one, two = _json(out / "shard-1.json"), _json(out / "shard-2.json")
        for shard in (one, two):
            assert shard["gate"]["review_clean"] == "indeterminate"
            assert "bounded-review merge" in shard["gate"]["reasons"][0]
            assert shard["shard"]["complete"] is True
            assert shard["lanes"] == []
            assert shard["checks"] == []
        assert [t["nodeid"] for t in one["tests"]["pre_existing"]] == [
            "tests/test_a.py::test_old_bug"
        ]
        assert [t["nodeid"] for t in two["tests"]["target_related"]] == [
            "tests/test_b.py::test_double"
        ]
        assert one["target"]["revision"] == two["target"]["revision"] == f"tree:{repo.tree()}"

        final = repo.path / STATE / "final.json"
        merged = _run(
            repo.path,
            "-m",
            "pytest_boundedreview",
            "merge",
            str(out / "shard-1.json"),
            str(out / "shard-2.json"),
            f"--report={final}",
            f"--sarif={repo.path / STATE / 'final.sarif'}",
        )
    assert merged.returncode == 1, merged.stdout + merged.stderr
    report = _json(final)
    assert report["shard"] is None
    assert report["target"]["revision"] == one["target"]["revision"]
    assert report["tests"]["passed"] == 2
    assert report["tests"]["failed"] == 2
    assert [t["nodeid"] for t in report["tests"]["target_related"]] == [
        "tests/test_b.py::test_double"
    ]
    assert [t["nodeid"] for t in report["tests"]["pre_existing"]] == [
        "tests/test_a.py::test_old_bug"
    ]
    assert report["gate"]["review_clean"] == "no"
    assert any("test_double" in r for r in report["gate"]["reasons"])
    assert not any("partial run" in r for r in report["gate"]["reasons"])  # both files ran
    # The lane ran once, in the merge step, and the round is recorded in the loop.
    assert counter.read_text() == "x\n"
    assert [(lane["name"], lane["status"]) for lane in report["lanes"]] == [("rev", "pass")]
    assert report["loop"]["round"] == 1
    assert "merged from 2 shard report(s)" in report["limitations"]
    assert any(
        lim.startswith("shard shard-1.json: 1 test file(s) of the suite left out")
        for lim in report["limitations"]
    )
    assert "review_clean: no" in merged.stdout
    assert json.loads((repo.path / STATE / "final.sarif").read_text())["version"] == "2.1.0"


def test_merge_refuses_mismatched_and_unfit_reports(
    project: tuple[GitRepo, Path], tmp_path: Path
) -> None:
    repo, _ = project
    out = repo.path / STATE / "shards"
    assert _shard(repo, out, "old.json", "tests/test_a.py").returncode == 0
    repo.commit({"app.py": "def double(x):\n    return x + x\n"}, "fix")
    assert _shard(repo, out, "new.json", "tests/test_b.py").returncode == 0

    def merge(*paths: Path) -> subprocess.CompletedProcess[str]:
        final = f"--report={repo.path / STATE / 'final.json'}"
        return _run(repo.path, "-m", "pytest_boundedreview", "merge", *map(str, paths), final)

    mixed = merge(out / "old.json", out / "new.json")
    assert mixed.returncode == 4
    assert "different revisions" in mixed.stderr
    assert "old.json" in mixed.stderr
    assert "new.json" in mixed.stderr
    # A shard of an older commit cannot be merged in a checkout of a newer one.
    stale = merge(out / "old.json")
    assert stale.returncode == 4
    assert "this checkout is" in stale.stderr
    twice = merge(out / "new.json", out / "new.json")
    assert twice.returncode == 4
    assert "given twice" in twice.stderr
    whole = repo.path / STATE / "whole.json"
    ran = _run(
        repo.path,
        "-m",
        "pytest",
        "--bounded-review",
        "--bounded-review-no-lanes",
        "--bounded-review-base=base",
        f"--bounded-review-report={whole}",
    )
    assert ran.returncode == 0, ran.stdout
    not_shard = merge(whole)
    assert not_shard.returncode == 4
    assert "not a shard's" in not_shard.stderr
    garbage = tmp_path / "garbage.json"
    garbage.write_text('{"schema": "bounded-review/report/v1"}')
    broken = merge(garbage)
    assert broken.returncode == 4
    assert "garbage.json is not a bounded-review report" in broken.stderr
    assert not (repo.path / STATE / "final.json").exists()


def test_an_interrupted_shard_keeps_the_merge_from_yes(
    project: tuple[GitRepo, Path], tmp_path: Path
) -> None:
    repo, _ = project
    repo.commit({"app.py": "def double(x):\n    return x + x\n"}, "fix")
    out = repo.path / STATE / "shards"
    stopped = _run(
        repo.path,
        "-m",
        "pytest",
        "-x",
        "--bounded-review",
        "--bounded-review-shard",
        "--bounded-review-base=base",
        f"--bounded-review-report={out / 's.json'}",
        "tests",
    )
    assert stopped.returncode == 0, stopped.stdout
    assert _json(out / "s.json")["shard"]["complete"] is False
    merged = _run(
        repo.path,
        "-m",
        "pytest_boundedreview",
        "merge",
        str(out / "s.json"),
        f"--report={repo.path / STATE / 'final.json'}",
        "--no-lanes",
    )
    assert merged.returncode == 2, merged.stdout + merged.stderr
    report = _json(repo.path / STATE / "final.json")
    assert report["gate"]["review_clean"] == "indeterminate"
    assert any("shard s.json is incomplete" in r for r in report["gate"]["reasons"])


SKIPPED = (
    "import pytest\n\n\n@pytest.mark.skipif(True, reason='not here')\ndef test_c():\n    pass\n"
)


def test_a_shard_whose_tests_are_all_skipped_is_complete(
    project: tuple[GitRepo, Path], tmp_path: Path
) -> None:
    repo, counter = project
    repo.commit(
        {
            "app.py": "def double(x):\n    return x + x\n",
            "tests/test_a.py": "def test_fine():\n    assert True\n",
            "tests/test_c.py": SKIPPED,
        },
        "fix, and a test skipped here",
    )
    out, final = repo.path / STATE / "shards", repo.path / STATE / "final.json"

    def merge(*names: str) -> subprocess.CompletedProcess[str]:
        paths = [str(out / name) for name in names]
        return _run(repo.path, "-m", "pytest_boundedreview", "merge", *paths, f"--report={final}")

    with repo.untouched():
        assert _shard(repo, out, "ran.json", "tests/test_a.py", "tests/test_b.py").returncode == 0
        assert _shard(repo, out, "skipped.json", "tests/test_c.py").returncode == 0
        assert _json(out / "skipped.json")["shard"]["complete"] is True
        merged = merge("ran.json", "skipped.json")
        assert merged.returncode == 0, merged.stdout + merged.stderr
        assert _json(final)["gate"]["review_clean"] == "yes"
        # the same suite in one session: clean too
        whole = _run(repo.path, "-m", "pytest", "--bounded-review", "--bounded-review-base=base")
        assert whole.returncode == 0, whole.stdout + whole.stderr
        # the skipped shard alone is complete, but no test ran at all: never clean
        nothing = merge("skipped.json")
    assert nothing.returncode == 2, nothing.stdout + nothing.stderr
    assert "no shard ran a test" in _json(final)["gate"]["reasons"]
    assert counter.read_text().startswith("x\n")  # the merge reviewed, with its lane


def test_overlapping_or_empty_shards_never_merge_into_yes(
    project: tuple[GitRepo, Path], tmp_path: Path
) -> None:
    repo, _ = project
    repo.commit({"app.py": "def double(x):\n    return x + x\n"}, "fix")
    out = repo.path / STATE / "shards"
    assert _shard(repo, out, "all.json", "tests").returncode == 0
    assert _shard(repo, out, "again.json", "tests/test_a.py").returncode == 0
    final = f"--report={repo.path / STATE / 'final.json'}"

    def merge(*names: str) -> subprocess.CompletedProcess[str]:
        paths = [str(out / name) for name in names]
        return _run(repo.path, "-m", "pytest_boundedreview", "merge", *paths, final, "--no-lanes")

    overlap = merge("all.json", "again.json")
    assert overlap.returncode == 4
    assert "both ran tests/test_a.py::" in overlap.stderr
    (out / "copy.json").write_bytes((out / "all.json").read_bytes())
    assert merge("all.json", "copy.json").returncode == 4
    # Shards that ran nothing (a selection matching no test) are not a clean run.
    none = _run(
        repo.path,
        "-m",
        "pytest",
        "--bounded-review",
        "--bounded-review-shard",
        "-k",
        "nomatch",
        "--bounded-review-base=base",
        f"--bounded-review-report={out / 'none.json'}",
        "tests",
    )
    assert none.returncode == 0, none.stdout
    empty = merge("none.json")
    assert empty.returncode == 2
    report = _json(repo.path / STATE / "final.json")
    assert "no shard ran a test" in report["gate"]["reasons"]
    assert any("deselected" in lim for lim in report["limitations"])
    said = [lim for lim in report["limitations"] if "no reviewer lanes ran" in lim]
    assert said == ["no reviewer lanes ran (--bounded-review-no-lanes): the gate is deterministic"]
    # merge's --no-lanes where a lane is configured: not the whole review the rules ask
    assert [r["key"] for r in report["invocation"]["reduced"]] == ["no_lanes"]


def test_failures_with_nothing_to_review_keep_the_merge_from_yes(
    project: tuple[GitRepo, Path], tmp_path: Path
) -> None:
    repo, _ = project
    repo.git("checkout", "--quiet", "base")  # push-to-main: HEAD is the base
    out = repo.path / STATE / "shards"
    assert _shard(repo, out, "s.json", "tests/test_a.py").returncode == 0
    merged = _run(
        repo.path,
        "-m",
        "pytest_boundedreview",
        "merge",
        str(out / "s.json"),
        f"--report={repo.path / STATE / 'final.json'}",
    )
    assert merged.returncode == 2, merged.stdout + merged.stderr
    report = _json(repo.path / STATE / "final.json")
    assert report["target"]["empty"] is True
    assert report["gate"]["reasons"] == ["nothing to review, and 1 test(s) failed"]


def test_shards_that_miss_a_file_merge_into_a_partial_run(
    project: tuple[GitRepo, Path], tmp_path: Path
) -> None:
    repo, _ = project
    out = repo.path / STATE / "shards"
    with repo.untouched():
        assert _shard(repo, out, "shard-1.json", "tests/test_a.py").returncode == 0
        final = repo.path / STATE / "final.json"
        merged = _run(
            repo.path,
            "-m",
            "pytest_boundedreview",
            "merge",
            str(out / "shard-1.json"),
            f"--report={final}",
        )
    report = _json(final)
    assert report["statuses"]["local_verification"] == "partial"
    assert report["gate"]["review_clean"] == "indeterminate"
    assert report["gate"]["reasons"][-1] == (
        "a partial run: no shard collected tests/test_b.py (allow_partial = true accepts one)"
    )
    assert merged.returncode == 2


def test_shards_merge_only_against_the_base_commit_they_were_classified_on(
    project: tuple[GitRepo, Path], tmp_path: Path
) -> None:
    repo, _ = project
    out = repo.path / STATE / "shards"
    assert _shard(repo, out, "a.json", "tests/test_a.py").returncode == 0
    assert _shard(repo, out, "b.json", "tests/test_b.py").returncode == 0
    shards = {name: json.loads((out / name).read_text()) for name in ("a.json", "b.json")}
    base = repo.git("rev-parse", "base")
    assert {s["target"]["base_commit"] for s in shards.values()} == {base}
    other = repo.git("rev-parse", "HEAD")

    def merge(edit: Any) -> subprocess.CompletedProcess[str]:
        for name, shard in shards.items():
            target = dict(shard["target"])
            edit(name, target)
            (out / name).write_text(json.dumps({**shard, "target": target}, indent=2))
        final = f"--report={repo.path / STATE / 'final.json'}"
        paths = [str(out / name) for name in shards]
        return _run(repo.path, "-m", "pytest_boundedreview", "merge", *paths, "--no-lanes", final)

    def one_elsewhere(name: str, target: dict[str, Any]) -> None:
        if name == "b.json":
            target["base_commit"] = other

    mixed = merge(one_elsewhere)
    assert mixed.returncode == 4
    assert "different revisions" in mixed.stderr
    moved = merge(lambda name, target: target.update(base_commit=other))
    assert moved.returncode == 4
    assert f"the shards were classified against {other}" in moved.stderr
    # shards written before reports named the base commit still merge
    older = merge(lambda name, target: target.pop("base_commit"))
    assert older.returncode == 1, older.stderr  # the regression
    final = json.loads((repo.path / STATE / "final.json").read_text())
    assert final["target"]["base_commit"] == base


@pytest.mark.parametrize("deselect", ["-m", "-k"])
def test_the_projects_own_deselection_is_the_suite_in_a_merge_and_an_invocations_is_not(
    project: tuple[GitRepo, Path], tmp_path: Path, deselect: str
) -> None:
    repo, _ = project
    marked = "import pytest\n\n\n@pytest.mark.stress\ndef test_heavy():\n    pass\n"
    ini = (
        '[tool.pytest.ini_options]\naddopts = ["-m", "not stress"]\nmarkers = ["stress: opt-in"]\n'
    )
    repo.commit(
        {
            "pyproject.toml": (repo.path / "pyproject.toml").read_text() + ini,
            "tests/test_stress.py": marked,
        },
        "opt-in stress tests",
    )
    repo.git("branch", "--force", "base")  # the project's own configuration, at the base
    repo.commit({"README.md": "docs\n"}, "a harmless change")
    out = repo.path / STATE / "shards"
    narrowing = [] if deselect == "-m" else ["-k", "not test_fine"]
    assert _shard(repo, out, "shard-1.json", "tests/test_a.py", *narrowing).returncode == 0
    assert (
        _shard(repo, out, "shard-2.json", "tests/test_b.py", "tests/test_stress.py").returncode == 0
    )
    final = repo.path / STATE / "final.json"
    _run(
        repo.path,
        "-m",
        "pytest_boundedreview",
        "merge",
        str(out / "shard-1.json"),
        str(out / "shard-2.json"),
        f"--report={final}",
    )
    report = _json(final)
    partial = [r for r in report["gate"]["reasons"] if r.startswith("a partial run")]
    note = "1 test(s) deselected by the project's configuration (addopts: -m 'not stress')"
    assert any(note in lim for lim in report["limitations"])
    if deselect == "-m":  # the project's own: the merge is whole
        assert partial == []
    else:  # given to a shard at invocation: no shard ran the test it left out
        assert len(partial) == 1
        assert "1 test(s) no shard ran (tests/test_a.py::test_fine)" in partial[0]
