from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import warmstart


def run_demo(scratch: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``bounded-review demo`` with its temporary files under ``scratch``."""
    return warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "demo"],
        cwd=scratch,
        env={**os.environ, "TMPDIR": str(scratch), **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.mark.slow
def test_demo_behaves_as_designed_and_leaves_nothing_behind(tmp_path: Path) -> None:
    proc = run_demo(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "bounded-review: target pr (base main" in proc.stdout
    assert "test_calc.py::test_add - passes at base" in proc.stdout
    assert "demo: behaved as designed" in proc.stdout
    assert "advisory: calc.py:9 the name `hlp` says nothing" in proc.stdout  # a demoted nit
    assert "demo: what the output above shows" in proc.stdout
    assert "MISSING" not in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_demo_whose_gate_did_not_block_is_a_failed_demo() -> None:
    from pytest_boundedreview.cli.demo import EXPECTED, _expectations

    everything = "\n".join(text for text, _ in EXPECTED)
    assert _expectations(everything) == []
    assert _expectations(everything.replace("review_clean: no", "review_clean: yes")) == [
        "the gate says the change is not clean"
    ]


@pytest.mark.slow
def test_demo_works_with_commit_signing_on_globally(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[commit]\n\tgpgsign = true\n[tag]\n\tgpgsign = true\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = run_demo(scratch, HOME=str(home))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(scratch.iterdir()) == []
