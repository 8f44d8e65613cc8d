"""A child prepared by ``basefirst`` imports the copy's code wherever its environment points
into the live repository, and reports what it still ran from there.

Each test starts a real interpreter with the environment a base re-run gets, in front of a
"live" repository and a "copy" of it whose modules say where they come from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_boundedreview.baseline.atbase.baserun import verdict_at_base
from pytest_boundedreview.baseline.checkout import basefirst
from pytest_boundedreview.baseline.reruns.childenv import child_env
from pytest_boundedreview.baseline.reruns.rerun import RerunResult, rerun


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    """A live repository and a copy of an older revision of it."""
    live, copy = tmp_path / "live", tmp_path / "copy"
    _write(
        live,
        {
            "lib/calc/__init__.py": "WHERE = 'live'\n",
            "lib/calc/added.py": "WHERE = 'live'\n",  # only in the live tree
            "lib/ns/part/__init__.py": "WHERE = 'live'\n",
            "lib/renamed/__init__.py": "WHERE = 'live'\n",
        },
    )
    _write(
        copy,
        {
            "lib/calc/__init__.py": "WHERE = 'copy'\n",
            "lib/calc/removed.py": "WHERE = 'copy'\n",  # deleted by the change
            "lib/ns/part/__init__.py": "WHERE = 'copy'\n",
            "lib/renamed/__init__.py": "WHERE = 'copy'\n",
        },
    )
    return live, copy


def _venv(folder: Path) -> tuple[Path, Path]:
    """A bare virtual environment: its python and its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return python, Path(site)


def _child(
    tmp_path: Path,
    live: Path,
    copy: Path,
    script: str,
    pythonpath: list[Path] = (),  # type: ignore[assignment]
    python: Path = Path(sys.executable),
) -> tuple[subprocess.CompletedProcess[str], tuple[str, ...] | None]:
    """Run ``script`` with ``python`` as the re-run child of a record folder; its output and
    its report."""
    record = tmp_path / "record"
    record.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    env = basefirst.prepare(record, live, copy, env)
    proc = subprocess.run(
        [str(python), "-c", textwrap.dedent(script), f"--bounded-review-record={record}"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    return proc, basefirst.read(record)


def test_path_entries_into_the_live_tree_are_the_copys(
    tmp_path: Path, trees: tuple[Path, Path]
) -> None:
    live, copy = trees
    proc, live_modules = _child(
        tmp_path,
        live,
        copy,
        """
        import importlib.util
        import calc, calc.removed
        print(calc.WHERE, calc.removed.WHERE)
        print(importlib.util.find_spec("no_such_module_anywhere"))
        """,
        [live / "lib"],
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["copy copy", "None"]
    assert live_modules == ()


def test_a_module_the_copy_lacks_is_reported(tmp_path: Path, trees: tuple[Path, Path]) -> None:
    """Added by the change, or built in the working tree: the base has no such file. It is
    imported as it is (a made-up ImportError could pass for a changed failure) and named."""
    live, copy = trees
    tree = live / "build" / "links"  # a link tree: its entry cannot move to the copy
    tree.mkdir(parents=True)
    (tree / "added.py").symlink_to(live / "lib" / "calc" / "added.py")
    proc, live_modules = _child(tmp_path, live, copy, "import added; print(added.WHERE)", [tree])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["live"]
    assert live_modules == (f"added ({live / 'lib/calc/added.py'})",)


def test_finders_that_map_names_to_live_files_are_turned_to_the_copy(
    tmp_path: Path, trees: tuple[Path, Path]
) -> None:
    """As setuptools' editable finder and ``editables`` do: names mapped to absolute files,
    and namespace packages with absolute folders; a mapping to another name is followed."""
    live, copy = trees
    script = f"""
        import sys
        from importlib.machinery import ModuleSpec
        from importlib.util import spec_from_file_location

        LIVE = {str(live)!r}
        class Mapping:
            @classmethod
            def find_spec(cls, name, path=None, target=None):
                if name == "calc":
                    return spec_from_file_location(name, LIVE + "/lib/calc/__init__.py",
                        submodule_search_locations=[LIVE + "/lib/calc"])
                if name == "other":
                    return spec_from_file_location(name, LIVE + "/lib/renamed/__init__.py",
                        submodule_search_locations=[LIVE + "/lib/renamed"])
                if name == "ns":
                    spec = ModuleSpec(name, None, is_package=True)
                    spec.submodule_search_locations = [LIVE + "/lib/ns"]
                    return spec
                return None
        sys.meta_path.append(Mapping)
        import calc, calc.removed, other, ns.part
        print(calc.WHERE, calc.removed.WHERE, other.WHERE, ns.part.WHERE, list(ns.__path__))
    """
    proc, live_modules = _child(tmp_path, live, copy, script)
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.split()
    assert words[:4] == ["copy", "copy", "copy", "copy"]
    assert str(copy / "lib" / "ns") in proc.stdout
    assert live_modules == ()
    report = json.loads((tmp_path / "record" / basefirst.REPORT).read_text())
    assert report == {"live": [], "redirected": ["calc", "ns", "other"]}


def test_links_into_the_live_tree_are_followed(tmp_path: Path, trees: tuple[Path, Path]) -> None:
    """A link tree inside the repository (setuptools' strict mode) and a link from outside
    it (a symlinked install) both lead to the live files, so to the copy's."""
    live, copy = trees
    tree = live / "build" / "__editable__.calc" / "calc"
    tree.mkdir(parents=True)
    (tree / "__init__.py").symlink_to(live / "lib" / "calc" / "__init__.py")
    site = tmp_path / "site"
    site.mkdir()
    (site / "ns").symlink_to(live / "lib" / "ns")
    proc, live_modules = _child(
        tmp_path,
        live,
        copy,
        "import calc, calc.removed, ns.part; print(calc.WHERE, calc.removed.WHERE, ns.part.WHERE)",
        [tree.parent, site],
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["copy", "copy", "copy"]
    assert live_modules == ()


def test_installed_packages_inside_the_repository_are_not_its_code(
    tmp_path: Path, trees: tuple[Path, Path]
) -> None:
    """A virtual environment in the repository (``.venv``) holds installed packages, not the
    repository's code: imported from there as they are, and not reported."""
    live, copy = trees
    site = live / ".venv" / "lib" / "python3" / "site-packages"
    _write(site, {"dependency.py": "WHERE = 'installed'\n"})
    proc, live_modules = _child(
        tmp_path, live, copy, "import dependency; print(dependency.WHERE)", [site]
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["installed"]
    assert live_modules == ()


def test_what_bypasses_the_finders_is_reported(tmp_path: Path, trees: tuple[Path, Path]) -> None:
    """The adversary: a module executed straight from a live file, in the child and in a
    process the child starts; both are named."""
    live, copy = trees
    load = f"""
        from importlib.util import module_from_spec, spec_from_file_location
        spec = spec_from_file_location("sneaky", {str(live / "lib/calc/__init__.py")!r})
        module = module_from_spec(spec)
        spec.loader.exec_module(module)
        print(module.WHERE)
    """
    script = f"""
        import subprocess, sys
        {textwrap.indent(textwrap.dedent(load), "        ").strip()}
        runpy_file = {str(live / "lib/calc/added.py")!r}
        done = subprocess.run([sys.executable, "-c", "import runpy; runpy.run_path("
                               + repr(runpy_file) + ")"])
        print(done.returncode)
    """
    proc, live_modules = _child(tmp_path, live, copy, script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["live", "0"]
    assert live_modules is not None
    assert f"sneaky ({live / 'lib/calc/__init__.py'})" in live_modules
    assert any(str(live / "lib/calc/added.py") in m for m in live_modules)
    assert len(list((tmp_path / "record").glob("provenance-*.json"))) == 1  # the subprocess


def test_what_a_pth_file_ran_before_the_redirect_is_reported(
    tmp_path: Path, trees: tuple[Path, Path]
) -> None:
    """``.pth`` files run before any ``sitecustomize``: a line of one that imports the live
    tree's code (some editable installs import a hook) is seen only afterwards, and named."""
    live, copy = trees
    python, site = _venv(tmp_path / "venv")
    Path(site, "hook.pth").write_text(f"{live / 'lib'}\nimport calc\n")
    proc, live_modules = _child(
        tmp_path, live, copy, "import calc; print(calc.WHERE)", python=python
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["live"]  # imported before anything could redirect it
    assert live_modules == (f"calc ({live / 'lib/calc/__init__.py'})",)


def test_a_repository_inside_the_interpreters_prefix_is_still_the_live_tree(
    tmp_path: Path,
) -> None:
    """As ``/usr/src/app`` under a system Python whose prefix is ``/usr``: only the
    interpreter's library folders are installed code, not all its prefix holds."""
    python, site = _venv(tmp_path / "venv")
    live, copy = tmp_path / "venv" / "src" / "app", tmp_path / "copy"
    _write(live, {"lib/calc/__init__.py": "WHERE = 'live'\n"})
    _write(copy, {"lib/calc/__init__.py": "WHERE = 'copy'\n"})
    Path(site, "app.pth").write_text(f"{live / 'lib'}\n")
    proc, live_modules = _child(
        tmp_path, live, copy, "import calc; print(calc.WHERE)", python=python
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["copy"]
    assert live_modules == ()


def test_a_sitecustomize_of_the_project_still_runs(
    tmp_path: Path, trees: tuple[Path, Path]
) -> None:
    live, copy = trees
    _write(tmp_path / "custom", {"sitecustomize.py": "import os\nos.environ['CUSTOM'] = 'ran'\n"})
    proc, live_modules = _child(
        tmp_path,
        live,
        copy,
        """
        import os, sys, sitecustomize
        print(os.environ.get("CUSTOM"), sitecustomize.__file__.endswith("custom/sitecustomize.py"))
        print(any(p.endswith("/boot") for p in sys.path))
        print("_bounded_review_redirect" in sys.modules)
        """,
        [tmp_path / "custom"],
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ran", "True", "False", "True"]
    assert live_modules == ()


def test_a_rerun_inside_a_rerun_keeps_both_redirects(
    tmp_path: Path, trees: tuple[Path, Path]
) -> None:
    """A test of the base that starts a re-run of its own (this project's tests do): the
    inner child imports both copies' code, and reports to the outer re-run only what it ran
    from the outer live tree."""
    live, copy = trees
    inner_live, inner_copy = tmp_path / "inner_live", tmp_path / "inner_copy"
    _write(inner_live, {"lib/inner.py": "WHERE = 'live'\n"})
    _write(inner_copy, {"lib/inner.py": "WHERE = 'copy'\n"})
    outer_record, inner_record = tmp_path / "outer", tmp_path / "inner"
    outer_record.mkdir()
    inner_record.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(live / "lib"), str(inner_live / "lib")])
    env = basefirst.prepare(outer_record, live, copy, env)
    env = basefirst.prepare(inner_record, inner_live, inner_copy, env)
    script = "import calc, inner; print(calc.WHERE, inner.WHERE)"
    proc = subprocess.run(
        [sys.executable, "-c", script, f"--bounded-review-record={inner_record}"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["copy", "copy"]
    assert basefirst.read(inner_record) == ()
    assert list(outer_record.glob("provenance*.json")) == []  # nothing for the outer one


def test_a_child_without_its_report_is_no_answer(tmp_path: Path) -> None:
    record = tmp_path / "record"
    record.mkdir()
    assert basefirst.read(record) is None  # the redirect never started
    (record / basefirst.REPORT).write_text('{"live": []}')
    assert basefirst.read(record) == ()
    for text in ("[", '{"live": "x"}', '{"live": [["a"]]}', "[1]"):
        (record / basefirst.REPORT).write_text(text)
        assert basefirst.read(record) is None
    (record / basefirst.REPORT).write_text('{"live": [["m", "/f"]]}')
    (record / "provenance-12.json").write_text('{"live": [["", "/g"]]}')
    assert basefirst.read(record) == ("? (/g)", "m (/f)")


def test_a_live_module_makes_the_base_answer_nothing(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("")
    tainted = RerunResult(status="ok", failed={"t.py::x": "sig"}, live=("m (/live/m.py)",))
    verdict = verdict_at_base("t.py::x", tainted, tmp_path)
    assert verdict["kind"] == "live"
    assert "m (/live/m.py)" in verdict["detail"]
    # A test whose file the base does not have is new whatever that run loaded.
    assert verdict_at_base("gone.py::x", tainted, tmp_path) == {"kind": "missing"}
    clean = RerunResult(status="ok", failed={"t.py::x": "sig"})
    assert verdict_at_base("t.py::x", clean, tmp_path)["kind"] == "failed"


CONFTEST_LOADING_LIVE = """\
from importlib.util import module_from_spec, spec_from_file_location

spec = spec_from_file_location("helper", {path!r})
helper = module_from_spec(spec)
spec.loader.exec_module(helper)
"""


def test_a_rerun_in_a_copy_reports_and_a_rerun_at_head_is_left_alone(tmp_path: Path) -> None:
    """The re-run machinery: in a copy the child reports what it ran from the live tree; a
    re-run at head (no copy) gets no redirect at all."""
    live, copy = tmp_path / "live", tmp_path / "copy"
    _write(live, {"helper.py": "X = 1\n"})
    test = (
        "import os\n\ndef test_env():\n    assert 'BOUNDED_REVIEW_BASE_FIRST' not in os.environ\n"
    )
    _write(copy, {"test_it.py": test})
    at_head = rerun(["test_it.py::test_env"], rootdir=copy, args=[], env=child_env(), timeout=60)
    assert at_head.status == "ok"
    assert at_head.passed == {"test_it.py::test_env"}
    assert at_head.live == ()

    _write(copy, {"conftest.py": CONFTEST_LOADING_LIVE.format(path=str(live / "helper.py"))})
    in_copy = rerun(
        ["test_it.py::test_env"],
        rootdir=copy,
        args=[],
        env=child_env(),
        timeout=60,
        copy_of=(live, copy),
    )
    assert in_copy.status == "ok"
    assert in_copy.failed.keys() == {"test_it.py::test_env"}  # it sees its redirect
    assert in_copy.live == (f"helper ({live / 'helper.py'})",)


def test_imports_of_withheld_compiled_modules_that_find_nothing_are_reported(
    tmp_path: Path,
) -> None:
    """The copy was not given ``pkg/_fast.*.so`` of the working tree: an import of it that
    finds nothing, in the child or a process it starts, is reported; one that finds a module
    is not, and neither is a module of another name."""
    live, copy = tmp_path / "live", tmp_path / "copy"
    _write(live, {"pkg/__init__.py": "", "pkg/_fast.cpython-311-x86_64-linux-gnu.so": ""})
    _write(copy, {"pkg/__init__.py": "", "pkg/_other.py": "", "pkg/_slow.py": ""})
    record = tmp_path / "record"
    record.mkdir()
    withheld = ["pkg/_fast.cpython-311-x86_64-linux-gnu.so", "pkg/_slow.cpython-311.so"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env = basefirst.prepare(record, live, copy, env, withheld)
    script = textwrap.dedent(
        """
        import importlib.util, subprocess, sys
        import pkg._other, pkg._slow  # found in the copy: nothing to report
        assert importlib.util.find_spec("pkg._missing") is None  # not withheld
        try:
            import pkg._fast
        except ImportError:
            print("fallback")
        subprocess.run([sys.executable, "-c", "import importlib.util as u; u.find_spec('_fast')"])
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, f"--bounded-review-record={record}"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["fallback"]
    assert basefirst.tried(record) == ("_fast", "pkg._fast")
    assert basefirst.read(record) == ()


def test_a_base_run_that_tried_a_withheld_module_answers_nothing(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("")
    ran = RerunResult(status="ok", found=frozenset({"t.py::test_a"}), withheld=("pkg._fast",))
    verdict = verdict_at_base("t.py::test_a", ran, tmp_path, "the change touches x.c")
    assert verdict == {
        "kind": "withheld",
        "detail": "the base run could not import pkg._fast, built in the working tree and "
        "not copied to the base, as the change touches x.c",
    }
