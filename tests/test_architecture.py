"""The package's shape: the import contracts in pyproject.toml hold, each one fails on the
import it forbids (made in a temporary copy of the package), and ARCHITECTURE.md names every
top-level folder and module."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_boundedreview"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH first: the copy in ``root`` shadows the installed package.
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(PACKAGE, tmp_path / PACKAGE.name, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


@pytest.mark.slow
def test_the_contracts_hold_on_the_package() -> None:
    proc = _lint_imports(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "line", "contract", "shown"),
    [
        pytest.param(
            "change/git.py",
            "from ..review import phase",
            "Each stage imports only the stages before it",
            "pytest_boundedreview.change.git -> pytest_boundedreview.review.phase",
            id="a-stage-imports-a-later-one",
        ),
        pytest.param(
            "core/settings/config.py",
            "from ... import risk",
            "Each stage imports only the stages before it",
            "pytest_boundedreview.core.settings.config -> pytest_boundedreview.risk",
            id="a-helper-imports-a-stage",
        ),
        pytest.param(
            "lanes/packet.py",
            "from ..baseline.failures import outcomes",
            "Reviewer lanes, the test baseline and the risk tier are established apart",
            "pytest_boundedreview.lanes.packet -> pytest_boundedreview.baseline.failures.outcomes",
            id="lanes-import-the-baseline",
        ),
        pytest.param(
            "gate.py",
            "from .loop import ledger",
            "Each stage imports only the stages before it",
            "pytest_boundedreview.gate -> pytest_boundedreview.loop.ledger",
            id="siblings-in-a-row-import-each-other",
        ),
        pytest.param(
            "cli/run.py",
            "from .. import session",
            "The console face and the pytest session share only the engine",
            "pytest_boundedreview.cli.run -> pytest_boundedreview.session",
            id="the-console-imports-the-pytest-session",
        ),
        pytest.param(
            "agentgate/stophook.py",
            "from ..cli import parser",
            "Each stage imports only the stages before it",
            "pytest_boundedreview.agentgate.stophook -> pytest_boundedreview.cli.parser",
            id="the-agent-integration-imports-the-console",
        ),
        pytest.param(
            "agentgate/hookbase.py",
            "from .. import session",
            "Each stage imports only the stages before it",
            "pytest_boundedreview.agentgate.hookbase -> pytest_boundedreview.session",
            id="the-agent-integration-imports-the-pytest-session",
        ),
        pytest.param(
            "lanes/environment.py",
            "from .endpoint import refusal",
            "Inside lanes/",
            "pytest_boundedreview.lanes.environment -> pytest_boundedreview.lanes.endpoint.refusal",
            id="a-shared-lane-module-imports-a-runner",
        ),
        pytest.param(
            "core/strictjson.py",
            "from .settings import statepath",
            "Inside core/",
            "pytest_boundedreview.core.strictjson -> pytest_boundedreview.core.settings.statepath",
            id="a-helper-imports-the-settings",
        ),
        pytest.param(
            "change/git.py",
            "from .trees import indexfile",
            "Inside change/",
            "pytest_boundedreview.change.git -> pytest_boundedreview.change.trees.indexfile",
            id="git-imports-a-tree-reader",
        ),
        pytest.param(
            "change/trees/treefiles.py",
            "from .. import scope",
            "Inside change/",
            "pytest_boundedreview.change.trees.treefiles -> pytest_boundedreview.change.scope",
            id="a-sub-package-imports-a-module-above-it",
        ),
        pytest.param(
            "baseline/checkout/basefirst.py",
            "from ..reruns import rerun",
            "Inside baseline/",
            "pytest_boundedreview.baseline.checkout.basefirst -> "
            "pytest_boundedreview.baseline.reruns.rerun",
            id="the-checkout-imports-the-re-run-child",
        ),
        pytest.param(
            "baseline/athead/earlyhead.py",
            "from ..atbase import early",
            "Inside baseline/",
            "pytest_boundedreview.baseline.athead.earlyhead -> "
            "pytest_boundedreview.baseline.atbase.early",
            id="the-head-re-runs-import-the-base-re-run",
        ),
        pytest.param(
            "baseline/failures/outcomes.py",
            "from .. import classification",
            "Inside baseline/",
            "pytest_boundedreview.baseline.failures.outcomes -> "
            "pytest_boundedreview.baseline.classification",
            id="a-baseline-sub-package-imports-its-top",
        ),
        pytest.param(
            "cli/demo.py",
            "from ..change.checkouts import discard",
            "What only change/ uses inside its sub-packages stays its own",
            "pytest_boundedreview.cli.demo -> pytest_boundedreview.change.checkouts.discard",
            id="the-console-reaches-into-a-stage-s-internals",
        ),
        pytest.param(
            "report/build.py",
            "from ..baseline.checkout import pycache",
            "What only baseline/ uses inside its sub-packages stays its own",
            "pytest_boundedreview.report.build -> pytest_boundedreview.baseline.checkout.pycache",
            id="the-report-reaches-into-the-baseline-s-internals",
        ),
        pytest.param(
            "lanes/result.py",
            "from . import dispatch",
            "No import circles between the modules of any package",
            "- .result -> .dispatch",
            id="a-circle-inside-a-package",
        ),
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    copy: Path, module: str, line: str, contract: str, shown: str
) -> None:
    path = copy / PACKAGE.name / module
    path.write_text(path.read_text() + f"\n{line}  # noqa: E402, F401\n")
    proc = _lint_imports(copy)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    broken = [row for row in proc.stdout.splitlines() if row.endswith(" BROKEN")]
    assert [row for row in broken if row.startswith(contract)], proc.stdout
    # Long rows wrap at the terminal's width.
    assert shown in " ".join(proc.stdout.split()), proc.stdout


def test_every_other_stage_is_kept_out_of_a_stage_s_internals() -> None:
    """Each "internals" contract names as sources every top-level folder and module but its
    own stage: a stage added later is not left free to reach in."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    everything = {
        p.stem if p.suffix == ".py" else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").is_file()
    }
    internals = [c for c in contracts["contracts"] if c["id"].endswith("-internals")]
    split = {folder.parent.name for folder in packages() if folder.parent.parent == PACKAGE}
    assert split == {"baseline", "change", "core", "lanes"}
    assert {c["id"] for c in internals} == {f"{stage}-internals" for stage in split}
    for contract in internals:
        stage = contract["id"].removesuffix("-internals")
        sources = {m.removeprefix(f"{PACKAGE.name}.") for m in contract["source_modules"]}
        assert sources == everything - {stage}, contract["id"]
        assert all(m.startswith(f"{PACKAGE.name}.{stage}.") for m in contract["forbidden_modules"])


def test_a_module_outside_the_layers_breaks_the_pipeline(copy: Path) -> None:
    (copy / PACKAGE.name / "stray.py").write_text('"""Not placed in any layer."""\n')
    proc = _lint_imports(copy)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pytest_boundedreview.stray" in proc.stdout


def test_a_module_outside_the_baseline_layers_breaks_its_contract(copy: Path) -> None:
    (copy / PACKAGE.name / "baseline" / "stray.py").write_text('"""Not placed."""\n')
    proc = _lint_imports(copy)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pytest_boundedreview.baseline.stray" in proc.stdout


def test_architecture_names_every_top_level_folder_and_module() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text()
    folders = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    modules = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(folders) >= 10, folders
    missing = [name for name in folders if f"`{name}/`" not in text]
    missing += [name for name in modules if f"`{name}`" not in text]
    assert not missing, missing
    assert len(text.splitlines()) <= 240  # the stages and their parts, two levels on one page
    assert "```mermaid" in text
    assert "ARCHITECTURE.md" in (ROOT / "README.md").read_text()


MOST_MODULES = 20  # side by side in one folder: more, and a newcomer cannot find the room


def packages() -> list[Path]:
    """Every folder of the package that is a package itself, the root included."""
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts)


def crowded(folders: list[Path]) -> dict[str, int]:
    """The folders holding more than :data:`MOST_MODULES` modules (``__init__.py`` counted)."""
    counts = {f.as_posix(): len(list(f.glob("*.py"))) for f in folders}
    return {name: n for name, n in counts.items() if n > MOST_MODULES}


def test_no_package_folder_holds_more_than_twenty_modules() -> None:
    assert len(packages()) >= 20
    assert crowded(packages()) == {}


def test_a_crowded_folder_is_found(tmp_path: Path) -> None:
    for i in range(MOST_MODULES):
        (tmp_path / f"m{i}.py").write_text("")
    assert crowded([tmp_path]) == {}
    (tmp_path / "__init__.py").write_text("")
    assert crowded([tmp_path]) == {tmp_path.as_posix(): MOST_MODULES + 1}


def test_each_sub_package_says_what_it_holds_and_architecture_names_its_parts() -> None:
    """Below the top level, which the test above holds to ARCHITECTURE.md: each stage says
    what it holds, each of its sub-packages in one line, and every module is named."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    unsaid, unnamed = [], []
    for folder in packages()[1:]:  # the root first: its modules are the top level's
        relative = folder.relative_to(PACKAGE).as_posix()
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
        sub_package = folder.parent != PACKAGE
        if not doc or (sub_package and "\n" in doc):
            unsaid.append(relative)
        if sub_package and f"`{folder.name}/`" not in text:
            unnamed.append(relative + "/")
        unnamed += [
            f"{relative}/{m.stem}"
            for m in folder.glob("*.py")
            if m.name != "__init__.py" and f"`{m.stem}`" not in text and f"`{m.name}`" not in text
        ]
    assert not unsaid, unsaid
    assert not unnamed, unnamed


def private_imports(package: Path) -> list[str]:
    """Each ``from X import _name`` in ``package`` whose ``X`` lies in another stage (the
    package's top-level folder or module): one stage reaching into another's internals.
    Dunder names (``__version__``) are public."""
    found = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        here = parts[:-1] if parts[-1] == "__init__" else parts
        inside = here if path.name == "__init__.py" else here[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = inside[: len(inside) - (node.level - 1)]
                target = (*base, *(node.module.split(".") if node.module else ()))
            else:
                target = tuple((node.module or "").split("."))
            if target[0] != package.name or target[1:2] == here[1:2]:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{'.'.join(here)} imports {alias.name} from {'.'.join(target)}")
    return found


def test_no_stage_imports_another_stage_s_private_names(tmp_path: Path) -> None:
    assert private_imports(PACKAGE) == []
    fake = tmp_path / PACKAGE.name
    (fake / "lanes").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "lanes" / "__init__.py").write_text("")
    (fake / "lanes" / "own.py").write_text("from . import _mine\nfrom ..core.subproc import run\n")
    (fake / "lanes" / "reach.py").write_text("from ..core.subproc import _kill_group\n")
    assert private_imports(fake) == [
        f"{PACKAGE.name}.lanes.reach imports _kill_group from {PACKAGE.name}.core.subproc"
    ]


# Folders that common ignore files treat as build output (GitHub's Python template, global
# ignores, editors' search): a tracked file under one is missed by `git add` and by searches.
BUILD_OUTPUT = frozenset(
    {"target", "build", "dist", "out", "bin", "obj", "_build", "sdist", "wheels", "eggs", ".eggs"}
    | {"develop-eggs", "downloads", "parts", "var", "lib", "lib64", "htmlcov"}
)


def build_output_folders(paths: list[str]) -> list[str]:
    """The tracked ``paths`` that lie under a folder named like build output."""
    return [p for p in paths if BUILD_OUTPUT & {part.lower() for part in p.split("/")[:-1]}]


def test_no_tracked_file_lies_under_a_folder_named_like_build_output() -> None:
    proc = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    if proc.returncode != 0:
        pytest.skip(f"not a git checkout: {proc.stderr.strip()}")
    paths = [p for p in proc.stdout.split("\0") if p]
    assert any(p.startswith(f"{PACKAGE.name}/") for p in paths), paths[:5]
    assert not build_output_folders(paths)


def test_a_folder_named_like_build_output_is_found() -> None:
    paths = ["pytest_boundedreview/target/git.py", "tests/Build/x.py", "docs/target.md"]
    assert build_output_folders(paths) == paths[:2]
