from __future__ import annotations

import subprocess
from pathlib import Path

from pre_commit.clientlib import load_manifest

ROOT = Path(__file__).resolve().parent.parent


def test_pre_commit_manifest_is_valid_for_pre_commit() -> None:
    hooks = {hook["id"]: hook for hook in load_manifest(ROOT / ".pre-commit-hooks.yaml")}
    review = hooks["bounded-review"]
    assert review["pass_filenames"] is False
    assert review["require_serial"] is True
    gate = hooks["bounded-review-gate"]
    assert set(gate["stages"]) == {"pre-commit", "pre-push", "manual"}
    assert gate["pass_filenames"] is False


def test_git_hook_shims_are_executable_and_valid_shell() -> None:
    for name in ("pre-commit", "pre-push"):
        shim = ROOT / "hooks" / name
        assert shim.stat().st_mode & 0o111
        subprocess.run(["sh", "-n", str(shim)], check=True)


def test_readme_test_command_is_the_one_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = next(line for line in ci.splitlines() if line.startswith("python3 -m venv"))
    assert command in readme
    assert "bounded-review demo" in readme


def test_the_built_wheel_holds_every_module(tmp_path: Path) -> None:
    """A regular (non-editable) install must carry every subpackage the code imports."""
    import sys
    import zipfile

    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {str(p.relative_to(ROOT)) for p in (ROOT / "pytest_boundedreview").rglob("*.py")}
    assert modules <= names, sorted(modules - names)
    assert "pytest_boundedreview/py.typed" in names
    prompts = {str(p.relative_to(ROOT)) for p in (ROOT / "pytest_boundedreview").rglob("*.md")}
    assert prompts, "the lens prompts ship as package data"
    assert prompts <= names, sorted(prompts - names)
