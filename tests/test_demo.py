from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_demo(scratch: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``bounded-review demo`` with its temporary files under ``scratch``."""
    return subprocess.run(
        [sys.executable, "-m", "pytest_boundedreview", "demo"],
        cwd=scratch,
        env={**os.environ, "TMPDIR": str(scratch), **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_demo_behaves_as_designed_and_leaves_nothing_behind(tmp_path: Path) -> None:
    proc = run_demo(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "bounded-review: target pr (base main" in proc.stdout
    assert "test_calc.py::test_add - passes at base" in proc.stdout
    assert "demo: behaved as designed" in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_demo_works_with_commit_signing_on_globally(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[commit]\n\tgpgsign = true\n[tag]\n\tgpgsign = true\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = run_demo(scratch, HOME=str(home))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(scratch.iterdir()) == []
