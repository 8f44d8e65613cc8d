from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project built as a wheel."""
    folder = tmp_path_factory.mktemp("wheel")
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
            str(folder),
            str(ROOT),
        ],
        check=True,
    )
    (built,) = folder.glob("*.whl")
    return built


@pytest.mark.slow
def test_the_built_wheel_holds_every_module(wheel: Path) -> None:
    """A regular (non-editable) install carries every module of the package, and no other."""
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--", "pytest_boundedreview/*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    modules = {name for name in tracked.split("\0") if name}
    shipped = {name for name in names if name.endswith(".py")}
    # Every module, and none besides: a stale build folder's copy of a moved module would ship
    assert shipped == modules, (sorted(modules - shipped), sorted(shipped - modules))
    assert "pytest_boundedreview/py.typed" in names
    prompts = {str(p.relative_to(ROOT)) for p in (ROOT / "pytest_boundedreview").rglob("*.md")}
    assert prompts, "the lens prompts ship as package data"
    assert prompts <= names, sorted(prompts - names)
    assert "pytest_boundedreview/agentgate/skill/SKILL.md" in names, "the agent skill ships"


@pytest.mark.slow
def test_pytest_does_not_assertion_rewrite_the_installed_engine(
    wheel: Path, tmp_path: Path
) -> None:
    """pytest marks every package of a plugin's distribution for assertion rewriting; the
    plugin unmarks the engine, so an install keeps using its compiled bytecode."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.check_output([python, "-c", code], text=True).strip())
    (site / "environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = ["install", "-q", "--no-deps", "--target", str(site), str(wheel)]
    subprocess.run([sys.executable, "-m", "pip", *install], check=True)
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "test_loaders.py").write_text(
        "import sys\n\n\n"
        "def test_loaders():\n"
        "    import pytest_boundedreview.session\n\n"
        "    loaders = {n: type(sys.modules[n].__loader__).__name__ for n in sys.modules\n"
        "               if n.startswith('pytest_boundedreview.')}\n"
        "    assert loaders['pytest_boundedreview.session'] == 'SourceFileLoader', loaders\n"
        "    rewritten = {n for n, loader in loaders.items() if loader != 'SourceFileLoader'}\n"
        "    assert rewritten == {'pytest_boundedreview.plugin'}, loaders\n"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    shown = subprocess.check_output(
        [python, "-c", "import pytest_boundedreview; print(pytest_boundedreview.__file__)"],
        cwd=folder,
        text=True,
    )
    assert Path(shown.strip()).is_relative_to(site), "the test did not use the installed wheel"
