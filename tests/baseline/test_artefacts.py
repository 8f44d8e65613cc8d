"""What is done in a base checkout before its re-run: which compiled modules are copied in,
how, and which set-up command runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.baseline.checkout import artefacts
from pytest_boundedreview.baseline.checkout.copyin import copy_in
from pytest_boundedreview.baseline.reruns.cache import cache_path
from pytest_boundedreview.change import git

SO = "pkg/_speedups.cpython-311-x86_64-linux-gnu.so"
SETUP = '[tool.bounded-review]\nbase_setup = ["python", "setup.py", "build_ext", "--inplace"]\n'


@pytest.fixture
def built(repo: GitRepo) -> GitRepo:
    """``main`` has a package with a C source; its module is built in place and ignored."""
    repo.commit(
        {
            ".gitignore": "*.so\n.venv/\nbuild/\n",
            "pkg/__init__.py": "",
            "pkg/_speedups.c": "/* x * 2 */\n",
            "setup.py": "# builds pkg._speedups\n",
        },
        "base",
    )
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.write(SO, b"\x7fELF built")
    repo.write(".venv/lib/site-packages/other.so", b"installed")  # in an ignored folder
    repo.write("build/lib/pkg/_speedups.so", b"build output")
    return repo


def plan(
    repo: GitRepo, configured: list[str] | None = None, base: str = "main"
) -> artefacts.Preparation:
    opened = git.open_repo(repo.path)
    # from the repository, as a session starts: a Hypothesis database is looked for there
    before = os.getcwd()
    os.chdir(repo.path)
    try:
        return artefacts.plan(opened, repo.git("rev-parse", base), repo.path, configured)
    finally:
        os.chdir(before)


def test_modules_built_in_place_are_copied_when_their_sources_are_the_bases(
    built: GitRepo,
) -> None:
    built.commit({"README.md": "docs\n", "pkg/__init__.py": "X = 1\n"}, "python only")
    prepared = plan(built)
    assert prepared.copies == (SO,)
    assert prepared.withheld == ()
    assert prepared.needed


@pytest.mark.parametrize(
    "change",
    [
        {"pkg/_speedups.c": "/* x * 3 */\n"},  # committed
        {"pkg/extra.h": "#define N 3\n"},  # untracked, not ignored
        {"setup.py": "# builds it another way\n"},
        {"rust/src/lib.rs": "fn f() {}\n"},
    ],
    ids=["source", "new header", "setup.py", "rust"],
)
def test_a_change_to_what_they_are_built_from_withholds_them(
    built: GitRepo, change: dict[str, str]
) -> None:
    name = next(iter(change))
    if name == "pkg/extra.h":
        built.write(name, change[name])
    else:
        built.commit(change, "change a build input")
    prepared = plan(built)
    assert prepared.copies == ()
    assert prepared.withheld == (SO,)
    assert prepared.because == (name,)
    assert name in prepared.withheld_because()
    assert "`base_setup` can build them there" in prepared.withheld_because()


def test_a_change_to_pyproject_or_setup_cfg_alone_does_not_withhold(built: GitRepo) -> None:
    built.commit({"pyproject.toml": "[tool.ruff]\n", "setup.cfg": "[metadata]\n"}, "settings")
    assert plan(built).copies == (SO,)


def test_without_compiled_modules_nothing_is_done(repo: GitRepo) -> None:
    prepared = plan(repo)
    assert (prepared.copies, prepared.withheld, prepared.stamp) == ((), (), "")
    assert not prepared.needed


def test_a_rebuilt_module_changes_what_base_answers_rest_on(built: GitRepo) -> None:
    first = plan(built).stamp
    os.utime(built.path / SO, ns=(1, 1))
    assert plan(built).stamp != first


def test_the_set_up_command_is_the_bases(built: GitRepo) -> None:
    argv = ["python", "setup.py", "build_ext", "--inplace"]
    assert plan(built, argv).setup == ()  # the base has none: none runs
    assert "the base's (none) is used" in plan(built, argv).notes[0]
    built.commit({"pyproject.toml": SETUP}, "set up the base")  # HEAD is the base below
    assert plan(built, argv, "HEAD").setup == tuple(argv)
    assert plan(built, argv, "HEAD").notes == ()
    assert plan(built, None, "HEAD").setup == tuple(argv)  # removed by a change: still run
    assert plan(built, ["sh", "-c", "exit 0"], "HEAD").setup == tuple(argv)
    assert "applies once it is merged" in plan(built, ["sh"], "HEAD").notes[0]
    assert plan(built, argv, "HEAD").stamp != plan(built, argv).stamp  # what answers rest on


def test_a_base_setup_that_is_no_argv_list_runs_nothing(built: GitRepo) -> None:
    built.commit({"pyproject.toml": '[tool.bounded-review]\nbase_setup = "make"\n'}, "bad")
    prepared = plan(built, None, "HEAD")
    assert prepared.setup == ()
    assert prepared.notes == (
        "base_setup: the base's value 'make' is not an argv list; none is run",
    )


def test_the_set_up_command_comes_from_the_config_the_rootdir_finds(built: GitRepo) -> None:
    built.commit({"sub/pyproject.toml": SETUP.replace("python", "python3")}, "nested")
    opened = git.open_repo(built.path)
    base = built.git("rev-parse", "HEAD")
    nested = artefacts.plan(opened, base, built.path / "sub", None)
    top = artefacts.plan(opened, base, built.path, None)
    assert nested.setup[0] == "python3"
    assert top.setup == ()


def test_copies_land_only_where_the_checkout_has_the_folder(tmp_path: Path) -> None:
    live, checkout, outside = tmp_path / "live", tmp_path / "checkout", tmp_path / "outside"
    for name in ("pkg/a.so", "gone/b.so", "pkg/kept.so", "linked/c.so"):
        (live / name).parent.mkdir(parents=True, exist_ok=True)
        (live / name).write_bytes(b"live " + name.encode())
    (checkout / "pkg").mkdir(parents=True)
    (checkout / "pkg" / "kept.so").write_bytes(b"the base's own")
    outside.mkdir()
    (checkout / "linked").symlink_to(outside)  # a folder of the checkout leading out of it
    names = ["pkg/a.so", "gone/b.so", "pkg/kept.so", "linked/c.so", "../x.so", "/etc/y.so"]

    assert copy_in(str(live), str(checkout), names) == ["pkg/a.so"]
    assert (checkout / "pkg" / "a.so").read_bytes() == b"live pkg/a.so"
    assert not (checkout / "gone").exists()
    assert (checkout / "pkg" / "kept.so").read_bytes() == b"the base's own"
    assert list(outside.iterdir()) == []
    # A copy, not a link: writing it in the checkout leaves the working tree's as it was.
    assert (checkout / "pkg" / "a.so").stat().st_ino != (live / "pkg" / "a.so").stat().st_ino
    (checkout / "pkg" / "a.so").write_bytes(b"rebuilt at base")
    assert (live / "pkg" / "a.so").read_bytes() == b"live pkg/a.so"


def test_a_failed_set_up_is_named_with_its_status_and_output(tmp_path: Path) -> None:
    prepared = artefacts.Preparation(setup=("make", "base"))
    script = prepared.script(tmp_path, tmp_path, tmp_path, tmp_path)
    assert "make base" in script
    assert artefacts.setup_failure(tmp_path) is None
    (tmp_path / artefacts.SETUP_LOG).write_text("".join(f"line {i}\n" for i in range(20)))
    (tmp_path / artefacts.SETUP_STATUS).write_text("2\n")
    assert artefacts.setup_failure(tmp_path) == (
        "base_setup make base exited 2: line 15\nline 16\nline 17\nline 18\nline 19"
    )


def test_base_answers_are_cached_apart_for_each_way_the_base_is_made_ready(
    built: GitRepo, tmp_path: Path
) -> None:
    from pytest_boundedreview.baseline.reruns.runspec import BaselineRun
    from pytest_boundedreview.core.settings.config import Settings

    opened = git.open_repo(built.path)

    def cache_file(base: str) -> Path:
        commit = built.git("rev-parse", base)
        run = BaselineRun.configured(opened, built.path, commit, [], Settings(), tmp_path)
        return run.cache_file()

    first = cache_file("main")
    assert cache_file("main") == first
    os.utime(built.path / SO, ns=(1, 1))  # rebuilt
    assert cache_file("main") != first
    # The set-up command is in the key as well: same commit, same options, another command.
    state, commit = tmp_path / "state", built.git("rev-parse", "main")
    keys = {
        cache_path(state, commit, [], plan(built, None).stamp),
        cache_path(state, commit, [], plan(built, None).stamp.replace("[[]", '[["make"]')),
        cache_path(state, commit, []),
    }
    assert len(keys) == 3
    built.commit({"pyproject.toml": SETUP}, "set up the base")
    assert '"build_ext"' in plan(built, None, "HEAD").stamp


def test_compiled_translations_beside_their_catalogue_are_compiled_not_copied(
    repo: GitRepo,
) -> None:
    repo.commit({".gitignore": "*.mo\n", "de/app.po": "", "it/app.po": "", "fr/x.po": ""}, "b")
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.commit({"de/app.po": 'msgid "a"\nmsgstr "A"\n', "es/app.po": ""}, "translate")
    for name in ("de/app.mo", "it/app.mo", "es/app.mo", "fr/app.mo"):
        repo.write(name, b"compiled")
    prepared = plan(repo)
    assert prepared.compiled == ("de/app.mo", "es/app.mo", "it/app.mo")
    assert prepared.copies == ()
    [why] = prepared.uncertain  # fr/app.mo has no fr/app.po: withheld by the .po change
    assert why.startswith("1 compiled translation(s) of the working tree (fr/app.mo, with no")
    assert "de/app.po, es/app.po" in why
    assert '["compiled", "de/app.mo", "es/app.mo", "it/app.mo"]' in prepared.stamp
