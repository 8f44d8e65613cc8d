"""Where pytest recurses, as the commands read it from the project's pytest configuration:
pytest's own files in pytest's order, and pytest's defaults without one."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_boundedreview.core.pytestconfig.pytestini import (
    DEFAULT_NORECURSEDIRS,
    Collection,
    from_files,
    from_session,
    options_of,
)


@pytest.mark.parametrize(
    ("name", "text", "testpaths", "norecursedirs"),
    [
        (
            "pyproject.toml",
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\nnorecursedirs = ["x", "y*"]\n',
            ("tests",),
            ("x", "y*"),
        ),
        ("pyproject.toml", '[tool.pytest.ini_options]\nnorecursedirs = "a b"\n', (), ("a", "b")),
        ("pyproject.toml", '[tool.pytest]\nnorecursedirs = ["n"]\n', (), ("n",)),
        ("pytest.toml", '[pytest]\ntestpaths = ["t"]\n', ("t",), DEFAULT_NORECURSEDIRS),
        (
            "pytest.ini",
            "[pytest]\nnorecursedirs = build\n    node_modules\n",
            (),
            ("build", "node_modules"),
        ),
        (
            "pytest.ini",
            "# an empty pytest.ini still marks the configuration\n",
            (),
            DEFAULT_NORECURSEDIRS,
        ),
        ("tox.ini", "[pytest]\ntestpaths = src tests\n", ("src", "tests"), DEFAULT_NORECURSEDIRS),
        ("setup.cfg", "[tool:pytest]\nnorecursedirs = .* docs\n", (), (".*", "docs")),
    ],
)
def test_the_rules_are_read_from_pytests_files(
    tmp_path: Path, name: str, text: str, testpaths: tuple[str, ...], norecursedirs: tuple[str, ...]
) -> None:
    (tmp_path / name).write_text(text)
    found = from_files(tmp_path, tmp_path)
    assert (found.rootdir, found.testpaths, found.norecursedirs) == (
        tmp_path,
        testpaths,
        norecursedirs,
    )
    assert found.source == str(tmp_path / name)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", "[tool.black]\nline-length = 100\n"),  # no pytest table
        ("tox.ini", "[tox]\nenvlist = py3\n"),
        ("setup.cfg", "[metadata]\nname = x\n"),
    ],
)
def test_a_file_without_pytest_settings_is_passed_over(
    tmp_path: Path, name: str, text: str
) -> None:
    (tmp_path / name).write_text(text)
    found = from_files(tmp_path, tmp_path)
    assert found == Collection(tmp_path)
    assert found.source == "pytest's defaults"


def test_the_nearest_folder_wins_and_the_search_stops_at_the_repository(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nnorecursedirs = outer\n")
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    assert from_files(repo / "sub", repo) == Collection(repo)  # the file above is not the repo's
    (repo / "tox.ini").write_text("[pytest]\nnorecursedirs = inner\n")
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\nnorecursedirs = ["first"]\n')
    found = from_files(repo / "sub", repo)
    assert (found.rootdir, found.norecursedirs) == (repo, ("first",))  # pyproject before tox


def test_an_unreadable_file_gives_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options\n")
    assert from_files(tmp_path, tmp_path) == Collection(tmp_path)


@pytest.mark.parametrize(
    ("testpaths", "norecursedirs", "folder", "collected"),
    [
        ((), DEFAULT_NORECURSEDIRS, "tests", True),
        ((), DEFAULT_NORECURSEDIRS, "state", True),
        ((), DEFAULT_NORECURSEDIRS, ".state", False),  # ".*"
        ((), DEFAULT_NORECURSEDIRS, "tests/.state", False),
        ((), DEFAULT_NORECURSEDIRS, "build/review", False),  # "build" on the way down
        ((), DEFAULT_NORECURSEDIRS, "pkg.egg/x", False),
        ((), ("node_modules",), "build/review", True),  # a configured value replaces the default
        ((), ("node_modules",), ".state", True),
        ((), ("src/gen",), "src/gen/out", False),  # a pattern with a "/": the whole path
        ((), ("src/gen",), "src/other/gen", True),
        ((), ("*/gen/*",), "src/gen", True),
        ((), ("*/gen/*",), "src/gen/out", False),
        (("tests",), DEFAULT_NORECURSEDIRS, "state", False),  # outside testpaths
        (("tests",), DEFAULT_NORECURSEDIRS, "tests/state", True),
        (("tests",), DEFAULT_NORECURSEDIRS, "tests", True),
        (("t*",), DEFAULT_NORECURSEDIRS, "tests/state", True),  # a glob in testpaths
        (("t*",), DEFAULT_NORECURSEDIRS, "state", False),
    ],
)
def test_where_pytest_recurses(
    tmp_path: Path,
    testpaths: tuple[str, ...],
    norecursedirs: tuple[str, ...],
    folder: str,
    collected: bool,
) -> None:
    (tmp_path / "tests").mkdir()
    rules = from_session(tmp_path, list(testpaths), list(norecursedirs), "test")
    assert rules.collects(tmp_path / folder) is collected


def test_a_configuration_text_is_parsed_once_and_a_changed_one_again(tmp_path: Path) -> None:
    text = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    (tmp_path / "pyproject.toml").write_text(text)
    found = from_files(tmp_path, tmp_path)
    first = options_of("pyproject.toml", text)
    assert first == {"testpaths": ["tests"]}
    assert found.testpaths == ("tests",)
    assert options_of("pyproject.toml", text) is first  # the same parse, not a second one
    changed = options_of("pyproject.toml", text.replace("tests", "t"))
    assert changed == {"testpaths": ["t"]}
    assert options_of("setup.cfg", "[tool:pytest]\ntestpaths = x\n") == {"testpaths": "x"}
    broken = "[tool.pytest.ini_options\n"
    for _ in range(2):  # a file pytest cannot read is refused every time
        with pytest.raises(ValueError, match="table declaration"):
            options_of("pyproject.toml", broken)
