"""A change cannot narrow its own collection: when it touches test files, conftest files or the
pytest configuration, the base lists the tests it collects there, and every one the session did
not collect, deselect or report is named. A test the change keeps must run, else the run is
partial; a test it removed is named as removed. Items a hook drops without ``pytest_deselected``
count as deselected. Harmless changes to tests stay clean."""

from __future__ import annotations

import pytest
from gitrepo import GitRepo
from test_partial_runs import review

FAILING = "def test_ok():\n    pass\n\n\ndef test_broken():\n    assert 1 == 2\n"
PASSING = "def test_ok():\n    pass\n\n\ndef test_fine():\n    assert 1 == 1\n"


def setup(project: GitRepo, ini: str = "", files: dict[str, str] | None = None) -> None:
    """A base whose tests all pass; then ``feature`` checked out, with nothing changed yet."""
    project.commit(
        {
            "pyproject.toml": "[tool.bounded-review]\n[tool.pytest.ini_options]\n" + ini,
            "tests/test_a.py": PASSING,
            "tests/test_b.py": PASSING,
            "app.py": "x = 1\n",
            **(files or {}),
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")


def reasons(report: dict[str, object]) -> str:
    gate = report["gate"]
    assert isinstance(gate, dict)
    return " | ".join(map(str, gate["reasons"]))


def narrowed(code: int, report: dict[str, object], *ids: str) -> str:
    """The run was held as partial, naming ``ids`` as narrowed out."""
    why = reasons(report)
    gate = report["gate"]
    assert isinstance(gate, dict)
    assert gate["review_clean"] != "yes"
    assert code == 1
    assert "test(s) the base collects were not collected by this run" in why
    for nodeid in ids:
        assert nodeid in why
    return why


BREAK_B = {"tests/test_b.py": FAILING}


@pytest.mark.slow
@pytest.mark.parametrize(
    "files",
    [
        pytest.param(
            {"tests/conftest.py": 'collect_ignore = ["test_b.py"]\n'}, id="collect_ignore"
        ),
        pytest.param(
            {
                "tests/conftest.py": (
                    "def pytest_ignore_collect(collection_path, config):\n"
                    "    return collection_path.name == 'test_b.py' or None\n"
                )
            },
            id="pytest_ignore_collect",
        ),
        pytest.param({"tests/test_b.py": "__test__ = False\n\n" + FAILING}, id="__test__ = False"),
        pytest.param(
            {
                "tests/conftest.py": (
                    "def pytest_collection_modifyitems(items):\n"
                    "    items[:] = [i for i in items if 'test_b' not in i.nodeid]\n"
                )
            },
            id="items dropped silently",
        ),
    ],
)
def test_a_change_that_stops_collecting_its_failing_test_is_not_clean(
    pytester: pytest.Pytester, project: GitRepo, files: dict[str, str]
) -> None:
    setup(project)
    project.commit({**BREAK_B, **files}, "break test_b, and keep it from being collected")
    code, report = review(pytester)
    why = reasons(report)
    assert report["gate"]["review_clean"] != "yes", why
    assert code == 1
    named = [*report["suite"]["left_out"], why]
    # the change keeps test_ok (test_fine it removed): it is named, narrowed out or deselected
    assert any("tests/test_b.py::test_ok" in x for x in named), named


@pytest.mark.slow
def test_a_narrower_python_files_is_partial(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project)
    narrower = '[tool.bounded-review]\n[tool.pytest.ini_options]\npython_files = ["test_a.py"]\n'
    project.commit({**BREAK_B, "pyproject.toml": narrower}, "collect test_a only")
    why = narrowed(*review(pytester), "tests/test_b.py::test_ok")
    assert "tests/test_a.py" not in why.split("not collected by this run")[1]


@pytest.mark.slow
def test_a_narrower_testpaths_is_partial(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project, ini='testpaths = ["tests"]\n')
    narrower = '[tool.bounded-review]\n[tool.pytest.ini_options]\ntestpaths = ["tests/test_a.py"]\n'
    project.commit({**BREAK_B, "pyproject.toml": narrower}, "collect test_a only")
    narrowed(*review(pytester), "tests/test_b.py::test_ok")


@pytest.mark.slow
def test_items_dropped_without_pytest_deselected_count_as_deselected(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    hook = (
        "def pytest_collection_modifyitems(items):\n"
        "    items[:] = [i for i in items if 'broken' not in i.name]\n"
    )
    project.commit({**BREAK_B, "tests/conftest.py": hook}, "drop the broken test")
    code, report = review(pytester)
    assert code == 1
    why = reasons(report)
    assert "1 test(s) deselected by this run (a collection hook that dropped them" in why
    assert "tests/conftest.py" in why
    assert report["suite"]["left_out"] == ["tests/test_b.py::test_broken"]


def test_the_projects_own_hook_that_drops_items_defines_the_suite(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    hook = (
        "def pytest_collection_modifyitems(items):\n"
        "    items[:] = [i for i in items if 'fine' not in i.name]\n"
    )
    setup(project, files={"tests/conftest.py": hook})
    project.commit({"app.py": "x = 2  # harmless\n"}, "harmless")
    code, report = review(pytester)
    assert report["gate"] == {"review_clean": "yes", "reasons": []}
    assert report["suite"]["left_out"] == []
    assert any("deselected by the project's configuration" in x for x in report["limitations"])
    assert code == 0


@pytest.mark.slow
def test_a_deleted_test_is_named_as_removed_not_partial(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    project.commit({"tests/test_b.py": "def test_ok():\n    pass\n"}, "drop test_fine")
    code, report = review(pytester)
    assert report["gate"] == {"review_clean": "yes", "reasons": []}, report["gate"]
    removed = [x for x in report["limitations"] if "removed by the change" in x]
    assert removed == [
        "1 test(s) the base collects are removed by the change: tests/test_b.py::test_fine"
    ]
    advisory = report["findings"]["advisory"]
    deleted = [f for f in advisory if f["note"] == "scan: deleted_tests (line at base)"]
    assert [f["failure_mode"] for f in deleted] == ["test test_fine was deleted"]
    assert code == 0


@pytest.mark.slow
def test_a_parametrized_case_the_change_removes_is_removed(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    cases = "import pytest\n\n\n@pytest.mark.parametrize('n', {})\ndef test_n(n):\n    pass\n"
    setup(project, files={"tests/test_p.py": cases.format("[1, 2, 3]")})
    project.commit({"tests/test_p.py": cases.format("[1, 2]")}, "drop a case")
    code, report = review(pytester)
    assert report["gate"] == {"review_clean": "yes", "reasons": []}, report["gate"]
    assert any("tests/test_p.py::test_n[3]" in x for x in report["limitations"])
    assert code == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "files",
    [
        pytest.param({"tests/test_b.py": PASSING + "\n\ndef test_new():\n    pass\n"}, id="added"),
        pytest.param({"tests/conftest.py": "import pytest\n"}, id="conftest"),
        pytest.param(
            {
                "pyproject.toml": (
                    "[tool.bounded-review]\n[tool.pytest.ini_options]\nxfail_strict = true\n"
                )
            },
            id="config",
        ),
    ],
)
def test_a_harmless_change_to_tests_comes_out_clean(
    pytester: pytest.Pytester, project: GitRepo, files: dict[str, str]
) -> None:
    setup(project)
    project.commit(files, "harmless")
    code, report = review(pytester)
    assert report["gate"] == {"review_clean": "yes", "reasons": []}, report["gate"]
    assert not any("removed by the change" in x for x in report["limitations"])
    assert code == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("base", "change"),
    [
        pytest.param(
            {
                "tests/conftest.py": 'collect_ignore = ["test_legacy.py"]\n',
                "tests/test_legacy.py": PASSING,
            },
            {"tests/test_legacy.py": PASSING + "\n# harmless\n"},
            id="a file the project ignores",
        ),
        pytest.param(
            {
                "pyproject.toml": (
                    "[tool.bounded-review]\n[tool.pytest.ini_options]\n"
                    'norecursedirs = ["examples"]\n'
                ),
                "tests/examples/conftest.py": "X = 1\n",
                "tests/examples/test_example.py": PASSING,
            },
            {
                "tests/examples/conftest.py": "X = 2\n",
                "tests/examples/test_example.py": PASSING + "\n# harmless\n",
            },
            id="a folder norecursedirs leaves out",
        ),
    ],
)
def test_a_harmless_change_to_tests_the_project_leaves_out_comes_out_clean(
    pytester: pytest.Pytester, project: GitRepo, base: dict[str, str], change: dict[str, str]
) -> None:
    setup(project, files=base)
    project.commit(change, "harmless")
    code, report = review(pytester)
    assert report["gate"] == {"review_clean": "yes", "reasons": []}, report["gate"]
    assert "the collection of" in report["stdout"]  # the base was asked, and agreed
    assert code == 0


@pytest.mark.slow
def test_a_renamed_test_file_is_neither_narrowed_nor_removed(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    project.git("mv", "tests/test_b.py", "tests/test_c.py")
    project.commit(message="rename")
    code, report = review(pytester)
    assert report["gate"] == {"review_clean": "yes", "reasons": []}, report["gate"]
    assert not any("removed by the change" in x for x in report["limitations"])
    assert code == 0


@pytest.mark.slow
def test_the_base_collection_is_cached(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project)
    project.commit({"tests/conftest.py": 'collect_ignore = ["test_b.py"]\n'}, "narrow")
    first = review(pytester)
    again = review(pytester)
    assert "the collection of 1 path(s)" in first[1]["stdout"]
    assert "the collection of" not in again[1]["stdout"]
    assert reasons(first[1]) == reasons(again[1])
    assert "tests/test_b.py::test_ok" in reasons(again[1])


def test_a_change_that_touches_no_test_file_asks_the_base_nothing(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    project.commit({"app.py": "x = 2  # harmless\n"}, "harmless")
    code, report = review(pytester)
    assert "asking base" not in report["stdout"]
    assert "re-running" not in report["stdout"]
    assert report["gate"] == {"review_clean": "yes", "reasons": []}
    assert code == 0


@pytest.mark.slow
def test_narrowing_is_seen_under_xdist(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project)
    hook = (
        "def pytest_collection_modifyitems(items):\n"
        "    items[:] = [i for i in items if 'broken' not in i.name]\n"
    )
    project.commit({**BREAK_B, "tests/conftest.py": hook}, "drop the broken test")
    code, report = review(pytester, "-n", "2")
    assert "tests/test_b.py::test_broken" in report["suite"]["left_out"]
    assert report["gate"]["review_clean"] != "yes"
    assert code == 1


def test_a_change_with_a_failure_and_a_test_file_touched_gets_both_answers(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """The base lists the touched file while the session runs, then re-runs the failure."""
    failing_on_app = "import app\n\n\ndef test_app():\n    assert app.x == 1\n"
    setup(project, files={"tests/test_app.py": failing_on_app})
    project.commit(
        {"app.py": "x = 2\n", "tests/test_a.py": PASSING + "\n# harmless\n"}, "break app"
    )
    code, report = review(pytester)
    assert [t["nodeid"] for t in report["tests"]["target_related"]] == [
        "tests/test_app.py::test_app"
    ]
    assert "re-running 1 failing test(s) at base" in report["stdout"]
    assert "the collection of 1 path(s)" in report["stdout"]
    assert not any("not collected by this run" in r for r in report["gate"]["reasons"])
    assert report["gate"]["review_clean"] == "no"
    assert code == 1


def test_a_decorator_edit_cannot_hide_a_whole_parametrized_test(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    cases = "import pytest\n\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_n(n):\n    pass\n"
    setup(project, files={"tests/test_p.py": cases})
    hidden = (
        "import pytest\n\n\ndef _quiet(f):\n    f.__test__ = False\n    return f\n\n\n"
        "@_quiet\n@pytest.mark.parametrize('n', [1, 2])\ndef test_n(n):\n    assert n < 0\n"
    )
    project.commit({"tests/test_p.py": hidden}, "hide test_n")
    narrowed(*review(pytester), "tests/test_p.py::test_n[1]", "tests/test_p.py::test_n[2]")


@pytest.mark.slow
def test_a_shared_base_class_that_hides_tests_is_seen(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    helper = "class Base:\n    pass\n"
    uses = "from helpers import Base\n\n\nclass TestB(Base):\n    def test_b(self):\n        pass\n"
    setup(
        project,
        ini='pythonpath = ["tests"]\n',
        files={"tests/helpers.py": helper, "tests/test_uses.py": uses},
    )
    project.commit({"tests/helpers.py": "class Base:\n    __test__ = False\n"}, "hide TestB")
    narrowed(*review(pytester), "tests/test_uses.py::TestB::test_b")


@pytest.mark.slow
def test_glob_testpaths_are_the_scope(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(
        project,
        ini='testpaths = ["pkg*/tests"]\n',
        files={
            "pkga/tests/test_x.py": PASSING,
            "pkga/tests/conftest.py": "",
            "pkgb/tests/test_y.py": PASSING,
        },
    )
    project.commit({"pkga/tests/conftest.py": 'collect_ignore = ["test_x.py"]\n'}, "narrow")
    narrowed(*review(pytester), "pkga/tests/test_x.py::test_ok")
