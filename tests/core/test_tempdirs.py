"""Every temporary folder the package makes is one a later run sweeps once its owner died."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import pytest_boundedreview
from pytest_boundedreview.core import tempdirs

PACKAGE = Path(pytest_boundedreview.__file__).parent


def made_kinds() -> list[str]:
    """The kinds passed to ``tempdirs.make`` anywhere in the package, directly or through a
    helper's ``kind`` argument."""
    found = set()
    for source in PACKAGE.rglob("*.py"):
        text = source.read_text()
        found |= set(re.findall(r'tempdirs\.make\("([^"]+)"\)', text))
        found |= set(re.findall(r'tree_with\([^)]*?kind(?:: str)? ?= ?"([a-z]+)"', text, re.S))
    return sorted(found)


def test_the_package_makes_folders_of_several_kinds() -> None:
    assert {"agent", "lane", "snapshot", "plan"} <= set(made_kinds())


@pytest.mark.parametrize("kind", made_kinds())
def test_a_dead_runs_folder_of_every_kind_is_swept(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    leftover = tmp_path / f"bounded-review-{kind}-{dead.stdout.strip()}-abc123"
    (leftover / "home").mkdir(parents=True)
    mine = tempdirs.make(kind)  # this process is alive: its folder stays
    assert tempdirs.sweep() == [leftover]
    assert not leftover.exists()
    assert mine.exists()


def test_a_folder_of_another_process_id_namespace_is_never_taken_for_abandoned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run inside a sandbox with its own process ids (Codex's, a container sharing the
    temporary folder) cannot see the owners outside, nor they its owner."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mine = tempdirs.make("base")
    space = tempdirs._namespace()
    if not space:
        pytest.skip("this system has no process-id namespaces to read")
    assert mine.name.startswith(f"bounded-review-base-{os.getpid()}n{space}-")
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    elsewhere = tmp_path / f"bounded-review-base-{dead}n{int(space) + 1}-abc123"
    here = tmp_path / f"bounded-review-base-{dead}n{space}-def456"
    for folder in (elsewhere, here):
        folder.mkdir()
    assert tempdirs.sweep() == [here]
    assert elsewhere.exists()
    assert mine.exists()
