from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_demo_behaves_as_designed_and_leaves_nothing_behind(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_boundedreview", "demo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "bounded-review: target pr (base main" in proc.stdout
    assert "demo: behaved as designed" in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_demo_works_with_commit_signing_on_globally(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[commit]\n\tgpgsign = true\n[tag]\n\tgpgsign = true\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(scratch)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_boundedreview", "demo"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(scratch.iterdir()) == []
