"""The project uses its own hooks: its pre-commit configuration is valid for the real
`pre-commit` and runs this package's review and gate (`repo: local`, the project's interpreter);
its CI reviews the project against its previous commit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_pre_commit_configuration_is_valid_and_uses_our_hooks() -> None:
    config = ROOT / ".pre-commit-config.yaml"
    checked = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (local,) = yaml.safe_load(config.read_text())["repos"]
    assert local["repo"] == "local"
    hooks = {hook["id"]: hook for hook in local["hooks"]}
    # the review exits by a report it wrote of the staged tree, never by pytest's status alone
    assert "run --target staged" in hooks["bounded-review"]["entry"]
    assert hooks["bounded-review-gate"]["entry"].endswith("bounded-review gate")
    assert hooks["bounded-review-gate"]["stages"] == ["pre-push"]
    assert {hook["language"] for hook in hooks.values()} == {"system"}
    # The hooks this repository offers to others carry the same entries.
    offered = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert offered["bounded-review-gate"]["entry"] == "bounded-review gate"
    assert offered["bounded-review"]["entry"] == "bounded-review run --target staged"


def test_ci_reviews_the_project_against_its_previous_commit() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    command = "--bounded-review --bounded-review-base=HEAD~1"
    assert command in ci
    assert command in readme


def test_the_fast_loop_is_documented_and_its_marker_registered() -> None:
    """The README's fast loop deselects a marker the project registers (the suite runs with
    ``--strict-markers``), and the whole command still runs every test."""
    readme = (ROOT / "README.md").read_text()
    assert 'python -m pytest -n auto -m "not slow"' in readme
    pytest_config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    markers = pytest_config["ini_options"]["markers"]
    assert any(marker.startswith("slow:") for marker in markers)
    assert "-m" not in pytest_config["ini_options"]["addopts"]  # no test is left out by default
    assert "not slow" not in (ROOT / ".ci" / "run").read_text()
