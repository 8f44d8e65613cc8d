"""Every example of README.md and docs/*.md is checked against the code it describes.

- TOML: a ``[tool.bounded-review]`` configuration is written as a ``pyproject.toml`` and read
  by the settings loader (``<!-- example: invalid -->`` ones must be refused); a ``[[waiver]]``
  file is read by the waivers parser.
- YAML: parsed; a pre-commit configuration passes ``pre-commit validate-config``; a GitHub
  Actions workflow or list of steps has ``uses:`` or ``run:`` in each step, and the inputs it
  gives this repository's action are inputs ``action.yml`` declares; a GitLab job has a
  ``script``.
- JSON: parsed (the generated schema pages too).
- Shell: every ``bounded-review`` command line is parsed by the CLI's own parser; every
  ``pytest`` long option is one ``pytest --help`` lists; ``pip install`` names only this
  project's folder with extras it declares (it is not published yet); ``cp`` copies a file
  that exists. The README's commands run in a temporary repository (slow test).
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
import yaml
from docblocks import ROOT, Block, all_blocks, blocks, commands
from gitrepo import GitRepo, clean_env

from pytest_boundedreview.cli.parser import parser
from pytest_boundedreview.core.configfile import toml
from pytest_boundedreview.core.errors import ConfigError
from pytest_boundedreview.core.settings.config import load_settings
from pytest_boundedreview.triage.waivers import parse as parse_waivers

PROJECT = toml().loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS = set(PROJECT["optional-dependencies"])
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def _ids(found: list[Block]) -> list[Any]:
    """Each block under the id ``page#n``, its place among the page's blocks the test takes:
    an id that stays when lines are added above it (messages give the line)."""
    counted: dict[Path, int] = {}
    params = []
    for block in found:
        counted[block.path] = counted.get(block.path, 0) + 1
        name = f"{block.path.relative_to(ROOT)}#{counted[block.path]}"
        params.append(pytest.param(block, id=name))
    return params


# -- TOML ------------------------------------------------------------------------------------


def _toml_text(block: Block) -> str:
    if block.marker != "continues the block above":
        return block.text
    earlier = [b for b in blocks(block.path) if b.lang == "toml" and b.line < block.line]
    assert earlier, f"{block}: marked as continuing a TOML block, but none is above it"
    return _toml_text(earlier[-1]) + block.text


def check_toml(block: Block, folder: Path) -> None:
    """The block as the file it stands for, read as the tool reads that file."""
    text = _toml_text(block)
    data = toml().loads(text)
    if block.marker and block.marker.startswith("file "):
        return  # another tool's file: parsing is all there is to check here
    if set(data) == {"waiver"}:
        parse_waivers(text, str(block))
        return
    assert "bounded-review" in data.get("tool", {}), (
        f"{block}: not a [tool.bounded-review] table, a waivers file, or a block marked "
        "<!-- example: file NAME --> or <!-- example: continues the block above -->"
    )
    (folder / "pyproject.toml").write_text(text, encoding="utf-8")
    if block.marker == "invalid":
        with pytest.raises(ConfigError):
            load_settings(folder, folder)
    else:
        load_settings(folder, folder)


@pytest.mark.parametrize("block", _ids(all_blocks("toml")))
def test_toml_example(block: Block, tmp_path: Path) -> None:
    check_toml(block, tmp_path)


# -- YAML ------------------------------------------------------------------------------------


def _steps_are_runnable(steps: Any, where: str) -> None:
    assert isinstance(steps, list), f"{where}: no steps"
    assert steps, f"{where}: no steps"
    for step in steps:
        assert isinstance(step, dict), f"{where}: {step}"
        assert "uses" in step or "run" in step, f"{where}: {step}"
        uses = str(step.get("uses", ""))
        if uses.startswith("./") or "pytest-boundedreview" in uses:  # this repository's action
            unknown = set(step.get("with") or {}) - set(ACTION["inputs"])
            assert not unknown, f"{where}: action.yml has no input {sorted(unknown)}"


def check_yaml(block: Block, folder: Path) -> None:
    """The block parses, and has the keys the tool that reads it requires."""
    data = yaml.safe_load(block.text)
    if isinstance(data, list):  # steps of a GitHub Actions job
        _steps_are_runnable(data, str(block))
    elif isinstance(data, dict) and "repos" in data:  # a .pre-commit-config.yaml
        config = folder / ".pre-commit-config.yaml"
        config.write_text(block.text, encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, "-m", "pre_commit", "validate-config", str(config)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, f"{block}: {proc.stdout}{proc.stderr}"
    elif isinstance(data, dict) and "jobs" in data:  # a GitHub Actions workflow
        assert True in data or "on" in data, f"{block}: no `on:`"  # YAML 1.1 reads on as true
        for name, job in data["jobs"].items():
            assert "runs-on" in job, f"{block}: job {name} has no runs-on"
            _steps_are_runnable(job.get("steps"), f"{block}: job {name}")
    elif isinstance(data, dict):  # GitLab CI: each job runs a script
        for name, job in data.items():
            assert isinstance((job or {}).get("script"), list), (
                f"{block}: {name} is no GitLab job with a script, pre-commit configuration "
                "or GitHub Actions workflow"
            )
    else:
        raise AssertionError(f"{block}: not a YAML example this test knows")


@pytest.mark.parametrize("block", _ids(all_blocks("yaml", "yml")))
def test_yaml_example(block: Block, tmp_path: Path) -> None:
    check_yaml(block, tmp_path)


def test_action_and_hook_manifests_have_what_their_readers_require() -> None:
    assert {"name", "description", "runs"} <= set(ACTION)
    assert ACTION["runs"]["using"] == "composite"
    _steps_are_runnable(ACTION["runs"]["steps"], "action.yml")
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", ".pre-commit-hooks.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("block", _ids(all_blocks("json", generated=True)))
def test_json_example(block: Block) -> None:
    json.loads(block.text)


# -- shell -----------------------------------------------------------------------------------


@functools.cache
def pytest_options() -> frozenset[str]:
    """The long options ``pytest --help`` lists with this plugin (and xdist) installed."""
    proc = warmstart.run(
        [sys.executable, "-m", "pytest", "--help"],
        cwd=Path(sys.executable).parent,  # no project configuration of its own
        capture_output=True,
        text=True,
        check=True,
        env=clean_env(),
    )
    return frozenset(re.findall(r"--[\w-]+", proc.stdout))


def _program(argv: list[str]) -> tuple[str, list[str]]:
    """The program a command runs (``python -m X`` is X) and its arguments."""
    name = Path(argv[0]).name
    if name.startswith("python") and len(argv) > 2 and argv[1] == "-m":
        return argv[2], argv[3:]
    if name == "uv" and argv[1:3] in (["pip", "install"], ["tool", "install"]):
        return "pip", argv[2:]
    return name, argv[1:]


def _installable(requirement: str) -> None:
    """A ``pip install`` argument: this project's folder (or a built wheel) with extras it
    declares; never this project by name, which the package index does not have yet."""
    name, _, extras = requirement.partition("[")
    for extra in filter(None, extras.rstrip("]").split(",")):
        assert extra.strip() in EXTRAS, f"{requirement}: pyproject.toml has no extra {extra!r}"
    if not name.startswith((".", "/", "dist/")):
        assert re.sub(r"[-_.]+", "-", name).lower() != PROJECT["name"], (
            f"pip install {requirement}: {PROJECT['name']} is not on the package index yet; "
            "install it from a checkout or a built wheel"
        )


def check_command(argv: list[str]) -> None:
    """One command line, checked against what would read it."""
    program, args = _program(argv)
    if program in ("bounded-review", "pytest_boundedreview"):
        parser().parse_args(args)  # UsageError naming the option or command
    elif program == "pytest":
        unknown = {a.split("=")[0] for a in args if a.startswith("--")} - pytest_options()
        assert not unknown, f"pytest has no option {sorted(unknown)}"
    elif program in ("pip", "pipx") and args[:1] == ["install"]:
        values = {"--python", "-r", "-c"}
        rest = [a for i, a in enumerate(args[1:]) if args[i] not in values]
        for requirement in [a for a in rest if not a.startswith("-")]:
            _installable(requirement)
    elif program == "cp":
        assert (ROOT / args[0]).is_file(), f"cp {args[0]}: no such file in the repository"


@pytest.mark.parametrize("block", _ids(all_blocks("sh", "console")))
def test_shell_example(block: Block) -> None:
    for argv in commands(block.text):
        try:
            check_command(argv)
        except Exception as exc:
            raise AssertionError(f"{block}: {' '.join(argv)}: {exc}") from exc


# -- placeholders ----------------------------------------------------------------------------


def test_no_placeholder_or_missing_tag_is_pinned() -> None:
    tags = set(
        subprocess.run(["git", "tag"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    )
    found = []
    for block in all_blocks("yaml", "yml", "sh", "console", "toml"):
        for pinned in re.findall(
            r"(?:pytest-boundedreview@|rev:\s*)(v?\d+\.\d+\.\d+)\b", block.text
        ):
            if pinned not in tags:
                found.append(f"{block}: {pinned} is no tag of this repository")
        found += [f"{block}: OWNER placeholder" for _ in re.findall(r"\bOWNER/", block.text)]
    assert not found


# -- the README's commands, run ----------------------------------------------------------------


def _readme_commands() -> list[list[str]]:
    """The README's ``bounded-review`` and ``pytest`` commands as a user types them (not the
    contributor's ``.venv/bin/...`` lines; ``demo`` runs in tests/cli/test_demo.py)."""
    readme = [b for b in blocks(ROOT / "README.md") if b.lang in ("sh", "console")]
    found = [argv for b in readme for argv in commands(b.text)]
    return [a for a in found if a[0] in ("bounded-review", "pytest") and a[1:2] != ["demo"]]


def _project(tmp_path: Path) -> GitRepo:
    """A project with a remote whose main is the base, and a branch with a harmless change."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    repo = GitRepo.init(tmp_path / "project")
    repo.write(".gitignore", "__pycache__/\n.pytest_cache/\n")
    repo.commit(
        {
            "calc.py": "def add(a, b):\n    return a + b\n",
            "test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        }
    )
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", "main")
    repo.git("remote", "set-head", "origin", "main")
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit({"calc.py": 'def add(a, b):\n    """The sum."""\n    return a + b\n'})
    return repo


@pytest.mark.slow
def test_the_readme_commands_run(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    bin_dir = tmp_path / "bin"  # git and this interpreter only: no agent on PATH
    bin_dir.mkdir()
    git = subprocess.run(["which", "git"], capture_output=True, text=True, check=True)
    (bin_dir / "git").symlink_to(git.stdout.strip())
    env = clean_env({"PATH": f"{bin_dir}{':'}{Path(sys.executable).parent}"})
    ran = []
    for argv in _readme_commands():
        program = "pytest_boundedreview" if argv[0] == "bounded-review" else "pytest"
        proc = warmstart.run(
            [sys.executable, "-m", program, *argv[1:]],
            cwd=repo.path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        output = proc.stdout + proc.stderr
        if argv[1:] == ["init", "--write"]:  # lanes for the agents on PATH: there are none
            assert proc.returncode == 1, output
            assert "no coding agent on PATH" in output
        else:
            assert proc.returncode == 0, f"{' '.join(argv)}: {output}"
        if program == "pytest":
            assert "review_clean: yes" in proc.stdout, output
        ran.append(" ".join(argv))
    assert any(a.startswith("pytest --bounded-review") for a in ran)
    assert any(a.startswith("bounded-review lanes") for a in ran)
