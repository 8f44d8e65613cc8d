"""The base re-run runs the base's code whatever the layout and the install mode, with real
installs into a throwaway environment.

One repository holds a project per cell below; each is installed as the cell says into one
virtual environment, and one ``pytest --bounded-review`` session runs every cell's tests.
The change under review breaks ``add`` in every project (a regression: ``target-related``,
"passes at base"); ``sub`` is broken at the base already (harmless: ``pre-existing``). Had
the base re-run imported any project from the live tree, its ``add`` would fail there too
and be filed ``pre-existing``.

| cell | layout | install mode |
| --- | --- | --- |
| setuptools-pip | `package-dir` folder (`lib/`) | `pip install -e`, setuptools default: `.pth` |
| setuptools-finder | a `package-dir` per package | setuptools default: its meta path finder |
| setuptools-ns | namespace package in `lib/` | setuptools default: finder and namespace path hook |
| setuptools-strict | `lib/` | setuptools strict: a link tree in `build/` |
| setuptools-strict-ns | namespace package in `lib/` | setuptools strict: link tree of a namespace |
| setuptools-compat | flat | setuptools compat: `.pth` path entry |
| hatch | `lib/` | hatchling: `.pth` path entry |
| hatch-exact | src | hatchling `dev-mode-exact`: the `editables` finder |
| flit | namespace package in `src/` | flit_core: `.pth` path entry |
| pdm | flat | pdm-backend: `.pth` path entry |
| pdm-editables | `lib/` | pdm-backend `editable-backend = "editables"` |
| uv | `lib/` (`module-root`) | uv_build through `uv pip install -e` (the others too) |
| pth | `lib/` | a `.pth` path entry written by hand |
| link | `lib/` | a symlink in site-packages (as `flit install --symlink`) |
| pythonpath | `lib/` | `PYTHONPATH` |
| inserted | `lib/` | a conftest's `sys.path.insert` of the live folder |
| subprocess | `lib/` (the `pth` project) | imported by a process a test starts |

Projects are subprojects of the repository (`packages/<cell>/`), so not even the flat and
`src/` ones sit where the base re-run's own `PYTHONPATH` entries (the checkout's top and
`src/`) would find them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest
from gitrepo import PYTESTER_IGNORES, GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

BACKENDS = {
    "setuptools": ("setuptools>=64", "setuptools.build_meta"),
    "hatchling": ("hatchling", "hatchling.build"),
    "flit": ("flit_core>=3.4", "flit_core.buildapi"),
    "pdm": ("pdm-backend", "pdm.backend"),
    "uv": ("uv_build", "uv_build"),
}


@dataclass(frozen=True)
class Cell:
    name: str  # the subproject's folder under packages/ (its distribution: cell-<name>)
    module: str  # what the tests import
    folder: str  # the module's folder in the subproject
    install: str  # pip | uv | uv-strict | uv-compat | pth | link | pythonpath | inserted
    backend: str = ""  # a key of BACKENDS; none: the subproject is not built
    tool: str = ""  # the backend's settings in the subproject's pyproject.toml

    def pyproject(self) -> str:
        requires, backend = BACKENDS[self.backend]
        return (
            f'[build-system]\nrequires = ["{requires}"]\nbuild-backend = "{backend}"\n\n'
            f'[project]\nname = "cell-{self.name}"\nversion = "0.1"\ndescription = "calc"\n\n'
            + self.tool
        )


LIB = '[tool.setuptools]\npackage-dir = {{"" = "lib"}}\npackages = ["{}"]\n'
CELLS = [
    Cell("setuptools-pip", "calc_pip", "lib/calc_pip", "pip", "setuptools", LIB.format("calc_pip")),
    Cell(
        "setuptools-finder",
        "calc_finder",
        "lib/calc_finder",
        "uv",
        "setuptools",
        '[tool.setuptools]\npackage-dir = {calc_finder = "lib/calc_finder"}\n'
        'packages = ["calc_finder"]\n',
    ),
    Cell(
        "setuptools-ns",
        "ns_st.calc",
        "lib/ns_st/calc",
        "uv",
        "setuptools",
        LIB.format("ns_st.calc"),
    ),
    Cell(
        "setuptools-strict",
        "calc_strict",
        "lib/calc_strict",
        "uv-strict",
        "setuptools",
        LIB.format("calc_strict"),
    ),
    Cell(
        "setuptools-strict-ns",
        "ns_strict.calc",
        "lib/ns_strict/calc",
        "uv-strict",
        "setuptools",
        LIB.format("ns_strict.calc"),
    ),
    Cell(
        "setuptools-compat",
        "calc_compat",
        "calc_compat",
        "uv-compat",
        "setuptools",
        '[tool.setuptools]\npackages = ["calc_compat"]\n',
    ),
    Cell(
        "hatch",
        "calc_hatch",
        "lib/calc_hatch",
        "uv",
        "hatchling",
        '[tool.hatch.build.targets.wheel]\npackages = ["lib/calc_hatch"]\n',
    ),
    Cell(
        "hatch-exact",
        "calc_exact",
        "src/calc_exact",
        "uv",
        "hatchling",
        '[tool.hatch.build.targets.wheel]\npackages = ["src/calc_exact"]\ndev-mode-exact = true\n',
    ),
    Cell(
        "flit",
        "ns_flit.calc",
        "src/ns_flit/calc",
        "uv",
        "flit",
        '[tool.flit.module]\nname = "ns_flit.calc"\n',
    ),
    Cell("pdm", "calc_pdm", "calc_pdm", "uv", "pdm"),
    Cell(
        "pdm-editables",
        "calc_editables",
        "lib/calc_editables",
        "uv",
        "pdm",
        '[tool.pdm.build]\npackage-dir = "lib"\neditable-backend = "editables"\n',
    ),
    Cell(
        "uv",
        "calc_uv",
        "lib/calc_uv",
        "uv",
        "uv",
        '[tool.uv.build-backend]\nmodule-root = "lib"\nmodule-name = "calc_uv"\n',
    ),
    Cell("pth", "calc_pth", "lib/calc_pth", "pth"),
    Cell("link", "calc_link", "lib/calc_link", "link"),
    Cell("pythonpath", "calc_pythonpath", "lib/calc_pythonpath", "pythonpath"),
    Cell("inserted", "calc_inserted", "lib/calc_inserted", "inserted"),
]

OPS = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b  # wrong at base\n"
TESTS = """\
from {module} import add, sub


def test_add():
    assert add(2, 3) == 5


def test_sub():
    assert sub(5, 3) == 2
"""
IN_A_SUBPROCESS = """\
import subprocess
import sys


def test_add_in_a_subprocess():
    code = "from calc_pth import add; assert add(2, 3) == 5"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
"""
INSERTS = "import sys\n\nsys.path.insert(0, {folder!r})\n"


def _project(cell: Cell) -> dict[str, str]:
    root = f"packages/{cell.name}"
    files = {
        f"{root}/{cell.folder}/__init__.py": '"""A calculator."""\n\nfrom .ops import add, sub\n',
        f"{root}/{cell.folder}/ops.py": OPS,
        f"tests/test_{cell.module.replace('.', '_')}.py": TESTS.format(module=cell.module),
    }
    if cell.backend:
        files[f"{root}/pyproject.toml"] = cell.pyproject()
    return files


def _venv(folder: Path) -> tuple[Path, Path]:
    """A virtual environment without pip that sees this one's packages (pytest, this
    plugin, the build backends): its python and its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # First of the .pth files (they run in name order), so `editables` is importable by the
    # .pth files of the projects installed with it; addsitedir, so this environment's own
    # .pth files (this plugin's editable install among them) run too.
    outer = sysconfig.get_paths()["purelib"]
    Path(site, "00-outer.pth").write_text(f"import site; site.addsitedir({outer!r})\n")
    return python, Path(site)


def _install(repo: GitRepo, python: Path, site: Path, cells: list[Cell]) -> dict[str, str]:
    """Install every cell as it says; the environment the session then needs."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # uv_build's PEP 517 shim looks for its binary on PATH.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    uv = shutil.which("uv", path=env["PATH"])
    assert uv is not None, "uv is a test dependency"

    def folders(install: str) -> list[str]:
        return [str(repo.path / "packages" / c.name) for c in cells if c.install == install]

    def run(argv: list[str]) -> None:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr

    quiet = ["--no-deps", "--no-build-isolation"]
    for path in folders("pip"):
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(python),
                "install",
                "-q",
                *quiet,
                "-e",
                path,
            ]
        )
    for install, settings in (("uv", []), ("uv-strict", ["strict"]), ("uv-compat", ["compat"])):
        editable = [arg for path in folders(install) for arg in ("-e", path)]
        config = [f"--config-setting=editable_mode={mode}" for mode in settings]
        if editable:
            uv_pip = [uv, "pip", "install", "--python", str(python), "--offline", "--no-cache"]
            run([*uv_pip, *quiet, *config, *editable])
    lib = {c.install: repo.path / "packages" / c.name / "lib" for c in cells}
    if "pth" in lib:
        (site / "calc_pth.pth").write_text(f"{lib['pth']}\n")
    if "link" in lib:
        (site / "calc_link").symlink_to(lib["link"] / "calc_link")
    session_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    session_env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # quicker: no other plugins
    if "pythonpath" in lib:
        session_env["PYTHONPATH"] = str(lib["pythonpath"])
    return session_env


def _repository(tmp_path: Path, cells: list[Cell], extra: dict[str, str]) -> GitRepo:
    """The repository: every cell's project and tests at the base, then the regression."""
    repo = GitRepo.init(tmp_path / "repo")
    files = {".gitignore": PYTESTER_IGNORES + "*.egg-info/\nbuild/\n.bounded-review/\n"}
    for cell in cells:
        files.update(_project(cell))
    if any(c.install == "inserted" for c in cells):
        folder = repo.path / "packages" / "inserted" / "lib"
        files["tests/conftest.py"] = INSERTS.format(folder=str(folder))
    repo.commit({**files, **extra}, "base")
    repo.git("checkout", "--quiet", "-b", "feature")
    broken = {
        f"packages/{c.name}/{c.folder}/ops.py": OPS.replace("a + b\n", "a * b\n", 1) for c in cells
    }
    repo.commit(broken, "regression")
    return repo


def _review(repo: GitRepo, python: Path, env: dict[str, str]) -> tuple[dict, str]:
    argv = [str(python), "-m", "pytest", "-p", "pytest_boundedreview.plugin", "--bounded-review"]
    argv += ["--bounded-review-base=main", "-p", "no:cacheprovider"]
    with repo.untouched():
        done = subprocess.run(
            argv, cwd=repo.path, env=env, capture_output=True, text=True, check=False, timeout=600
        )
    report_file = repo.path / ".bounded-review" / "report.json"
    assert report_file.exists(), done.stdout + done.stderr
    return json.loads(report_file.read_text()), done.stdout


def test_every_layout_and_install_mode_runs_the_base_code_at_the_base(tmp_path: Path) -> None:
    repo = _repository(tmp_path, CELLS, {"tests/test_subprocess.py": IN_A_SUBPROCESS})
    python, site = _venv(tmp_path / "venv")
    env = _install(repo, python, site, CELLS)
    report, out = _review(repo, python, env)
    tests = report["tests"]
    named = {c.module.replace(".", "_") for c in CELLS}
    regressions = {f"tests/test_{m}.py::test_add" for m in named}
    regressions.add("tests/test_subprocess.py::test_add_in_a_subprocess")
    assert {t["nodeid"]: t["reason"] for t in tests["target_related"]} == dict.fromkeys(
        regressions, "passes at base"
    ), out
    assert {t["nodeid"] for t in tests["pre_existing"]} == {
        f"tests/test_{m}.py::test_sub" for m in named
    }, out
    assert tests["unknown"] == [], out

    # The same base answers when the re-run starts the usual way (not early, during the
    # session), as it does for a reproduction or when the early one broke.
    nodeids = sorted(regressions)
    verdicts = _usual_base_verdicts(repo, python, env, nodeids)
    assert verdicts == dict.fromkeys(nodeids, "passed")


USUAL = """\
import json, sys
from pathlib import Path
from pytest_boundedreview.baseline.atbase.baserun import base_verdicts
from pytest_boundedreview.baseline.reruns.runspec import BaselineRun
from pytest_boundedreview.change import git

repo = git.open_repo(Path.cwd())
run = BaselineRun(
    repo=repo, rootdir=repo.root, base_commit=repo.resolve("main"),
    args=["-p", "no:cacheprovider"], reruns=0, max_base_reruns=50, timeout=300,
    state=Path(sys.argv[2]),
)
verdicts = base_verdicts(run, json.loads(sys.argv[1]))
print(json.dumps({nodeid: verdict["kind"] for nodeid, verdict in verdicts.items()}))
"""


def _usual_base_verdicts(
    repo: GitRepo, python: Path, env: dict[str, str], nodeids: list[str]
) -> dict[str, str]:
    state = repo.path.parent / "state"
    done = subprocess.run(
        [str(python), "-c", USUAL, json.dumps(nodeids), str(state)],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    verdicts: dict[str, str] = json.loads(done.stdout)
    return verdicts


LOADS_LIVE = """\
from importlib.util import module_from_spec, spec_from_file_location

# A fixed path to the working tree: finders never see this load.
spec = spec_from_file_location("calc_pth_ops", {path!r})
ops = module_from_spec(spec)
spec.loader.exec_module(ops)


def test_add_by_path():
    assert ops.add(2, 3) == 5
"""


def test_a_module_loaded_from_the_live_tree_makes_the_base_result_unknown(
    tmp_path: Path,
) -> None:
    """The adversary the redirect cannot see: a test module that loads the working tree's
    file by absolute path. At the base that is the changed code, so the base "fails the
    same"; the run is reported as having loaded it, and its results count for nothing."""
    pth = next(c for c in CELLS if c.install == "pth")
    ops = tmp_path / "repo" / "packages" / "pth" / pth.folder / "ops.py"
    repo = _repository(tmp_path, [pth], {"tests/test_by_path.py": LOADS_LIVE.format(path=str(ops))})
    python, site = _venv(tmp_path / "venv")
    env = _install(repo, python, site, [pth])
    report, out = _review(repo, python, env)
    tests = report["tests"]
    assert tests["pre_existing"] == [], out
    assert tests["target_related"] == [], out
    unknown = {t["nodeid"]: t["reason"] for t in tests["unknown"]}
    assert set(unknown) == {
        "tests/test_by_path.py::test_add_by_path",
        "tests/test_calc_pth.py::test_add",
        "tests/test_calc_pth.py::test_sub",  # the whole run is tainted, fails closed
    }, out
    for reason in unknown.values():
        assert f"calc_pth_ops ({ops})" in reason
        assert "from the working tree, not from the base" in reason
    assert report["gate"]["review_clean"] == "indeterminate", out
    # Nothing of that run is kept as the base's answer for the next one.
    for cached in (repo.path / ".bounded-review" / "cache").glob("base-*.json"):
        assert "test_by_path" not in cached.read_text()
