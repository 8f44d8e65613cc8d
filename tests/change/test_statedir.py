"""``state_dir`` names a folder of the tool's own: each rule with the values that try to get
around it, and the harmless values that must pass; nothing is created by the check."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo, every_file

from pytest_boundedreview.change import git
from pytest_boundedreview.change.statedir import approver, checked_state_dir
from pytest_boundedreview.core.errors import ConfigError
from pytest_boundedreview.core.pytestconfig.pytestini import DEFAULT_NORECURSEDIRS, Collection
from pytest_boundedreview.core.settings.config import load_settings


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "project")
    repo.commit(
        {
            "tests/test_a.py": "def test_a():\n    pass\n",
            "src/app.py": "x = 1\n",
            "build/.keep": "",
        },
        "base",
    )
    (repo.path / "notes").mkdir()
    (repo.path / "notes" / "draft.md").write_text("not added yet\n")  # untracked, shown
    return repo


def check(repo: GitRepo, value: str, rules: Collection | None = None) -> Path:
    opened = git.open_repo(repo.path)
    return checked_state_dir(opened, value, rules or Collection(opened.root))


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("tests", "holds files git tracks or shows (tests/test_a.py)"),
        ("src", "holds files git tracks or shows (src/app.py)"),
        ("notes", "holds files git tracks or shows (notes/draft.md)"),  # untracked, not ignored
        ("build", "holds files git tracks or shows (build/.keep)"),
        (".", "is the repository root"),
        ("", "is the repository root"),
        ("./", "is the repository root"),
        ("../x", "climbs out of the repository with '..'"),
        ("state/../../x", "climbs out of the repository with '..'"),
        ("/tmp/x", "is an absolute path"),
        (".git", "is inside .git"),
        (".git/bounded-review", "is inside .git"),
        ("state", "is a folder pytest collects, by the testpaths and norecursedirs of"),
        ("tests/new", "is a folder pytest collects"),
    ],
)
def test_a_folder_that_is_not_the_tools_own_is_refused(
    project: GitRepo, value: str, why: str
) -> None:
    before = every_file(project.path)
    with pytest.raises(ConfigError) as raised:
        check(project, value)
    message = str(raised.value)
    assert message.startswith(f"state_dir {value!r} {why}")
    assert message.endswith("such as the default .bounded-review")
    assert every_file(project.path) == before


@pytest.mark.parametrize(
    "value",
    [".bounded-review", ".review-state", "tests/.state", "build/review", "src/.cache/review"],
)
def test_a_folder_of_the_tools_own_passes_and_is_not_created(project: GitRepo, value: str) -> None:
    before = every_file(project.path)
    assert check(project, value) == git.open_repo(project.path).root / value
    assert every_file(project.path) == before


def test_the_projects_norecursedirs_decide_and_the_default_name_stays(project: GitRepo) -> None:
    root = git.open_repo(project.path).root
    narrowed = Collection(root, norecursedirs=("node_modules",), source="pyproject.toml")
    for value in ("build/review", ".review-state", "tests/.state"):
        with pytest.raises(ConfigError, match="is a folder pytest collects, by the testpaths "):
            check(project, value, narrowed)
    assert check(project, ".bounded-review", narrowed) == root / ".bounded-review"
    only_tests = Collection(root, testpaths=("tests",), norecursedirs=DEFAULT_NORECURSEDIRS)
    assert check(project, "state", only_tests) == root / "state"  # outside testpaths


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("outside", "leads out of the repository through a symbolic link"),
        ("tests", "holds files git tracks or shows (tests/test_a.py)"),
        ("project", "is the repository root (through a symbolic link)"),
        ("project/tests/new", "is a folder pytest collects (through a symbolic link, at "),
    ],
)
def test_a_symbolic_link_is_judged_where_it_leads(
    project: GitRepo, tmp_path: Path, target: str, why: str
) -> None:
    (tmp_path / "outside").mkdir()
    (project.path / "tests" / "new").mkdir()
    where = {"tests": project.path / "tests"}.get(target, tmp_path / target)
    (project.path / ".state").symlink_to(where, target_is_directory=True)
    (project.path / ".git" / "info" / "exclude").write_text(".state\n")
    with pytest.raises(ConfigError, match=why.replace("(", r"\(").replace(")", r"\)")):
        check(project, ".state")
    # the default name too: a link decides where the files would go
    (project.path / ".state").rename(project.path / ".bounded-review")
    with pytest.raises(ConfigError):
        check(project, ".bounded-review")


def test_an_existing_file_is_refused_even_when_git_ignores_it(project: GitRepo) -> None:
    (project.path / ".env").write_text("SECRET=1\n")
    (project.path / "data.txt").write_text("x\n")
    (project.path / ".link").symlink_to(project.path / "data.txt")
    (project.path / ".git" / "info" / "exclude").write_text(".env\ndata.txt\n.link\n")
    before = every_file(project.path)
    for value, why in [
        (".env", "is an existing file, not a folder"),
        (".link", "is an existing file, not a folder (through a symbolic link, at "),
    ]:
        with pytest.raises(ConfigError) as raised:
            check(project, value)
        message = str(raised.value)
        assert message.startswith(f"state_dir {value!r} {why}"), message
        assert message.endswith("such as the default .bounded-review")
    assert every_file(project.path) == before
    # a folder of that name that exists already, ignored, is still the tool's own
    (project.path / ".envs").mkdir()
    (project.path / ".git" / "info" / "exclude").write_text(".env\n.envs\n")
    assert check(project, ".envs").name == ".envs"


def test_a_link_inside_the_repository_to_a_hidden_folder_passes(project: GitRepo) -> None:
    (project.path / ".real").mkdir()
    (project.path / ".state").symlink_to(project.path / ".real", target_is_directory=True)
    (project.path / ".git" / "info" / "exclude").write_text(".state\n")
    assert check(project, ".state").name == ".state"


def test_nothing_is_noted_in_a_refused_folder(project: GitRepo) -> None:
    """The validated-configuration marker goes in the state folder's cache: only once the
    folder passed the check."""
    project.commit({"pyproject.toml": '[tool.bounded-review]\nstate_dir = "tests"\n'}, "cfg")
    opened = git.open_repo(project.path)
    before = every_file(project.path)
    for _ in range(2):
        with pytest.raises(ConfigError, match="is invalid:\n  state_dir 'tests' holds files"):
            load_settings(project.path, opened.root, approve=approver(opened))
    assert every_file(project.path) == before
    assert not (project.path / "tests" / "cache").exists()


def tools_folder(repo: GitRepo, name: str = ".bounded-review") -> Path:
    """A state folder as the tool makes it: its ``.gitignore`` of ``*`` and a file."""
    repo.write(f"{name}/.gitignore", "*\n")
    repo.write(f"{name}/report.json", "{}\n")
    return repo.path / name


@pytest.mark.parametrize(
    ("index", "in_full"),
    [
        ([], True),  # the index as git writes it (version 2)
        (["--index-version", "3"], True),
        (["--index-version", "4"], False),  # spelled as the rest of the path before: git asked
        (["--split-index"], False),  # entries in another file: git is asked
    ],
)
def test_a_file_forced_into_the_tools_folder_is_seen_whatever_the_index(
    project: GitRepo, index: list[str], in_full: bool
) -> None:
    """The tool's own folder passes while git tracks nothing in it; a file added there with
    ``git add -f`` (which the folder's ``.gitignore`` does not stop) is refused, whatever form
    the index takes: in a version 4 index it follows ``src/.a.py`` and is spelled
    ``state/report.json``; in a split one it is in the shared file."""
    project.commit({"src/.a.py": ""}, "a file before the folder")
    tools_folder(project, "src/.state")
    assert check(project, "src/.state").name == ".state"
    project.git("add", "-f", "src/.state/report.json")
    if index:
        project.git("update-index", *index)
    if index == ["--split-index"]:  # the entry goes to the shared file when it is written
        project.git("-c", "splitIndex.maxPercentChange=0", "update-index", "--split-index")
    assert (b"src/.state" in (project.path / ".git" / "index").read_bytes()) is in_full
    with pytest.raises(ConfigError, match=r"tracks or shows \(src/\.state/report\.json\)"):
        check(project, "src/.state")


def test_a_submodule_named_as_the_tools_folder_is_refused(project: GitRepo) -> None:
    """A submodule's entry names the folder itself, not a file in it."""
    tools_folder(project)
    head = project.git("rev-parse", "HEAD")
    project.git("update-index", "--add", "--cacheinfo", f"160000,{head},.bounded-review")
    with pytest.raises(ConfigError, match=r"tracks or shows \(\.bounded-review\)"):
        check(project, ".bounded-review")


def test_the_tools_own_folder_is_approved_without_git(
    project: GitRepo, calls: list[list[str]]
) -> None:
    """A folder the tool made, in a small index that names nothing in it: no git process.
    A folder without the tool's ``.gitignore`` (or with another) is asked of git."""
    tools_folder(project)
    opened = git.open_repo(project.path)
    calls.clear()
    checked_state_dir(opened, ".bounded-review", Collection(opened.root))
    assert calls == []
    project.write(".bounded-review/.gitignore", "*\n!report.json\n")  # edited: it shows
    with pytest.raises(ConfigError, match=r"tracks or shows \(\.bounded-review/report\.json\)"):
        checked_state_dir(opened, ".bounded-review", Collection(opened.root))
    assert [args[0] for args in calls] == ["ls-files"]


def test_a_repository_of_its_own_in_the_tools_folder_is_refused(project: GitRepo) -> None:
    """git reads no .gitignore inside a nested repository: the folder shows as untracked."""
    folder = tools_folder(project)
    project.git("init", "--quiet", str(folder))
    with pytest.raises(ConfigError, match=r"tracks or shows \(\.bounded-review/\)"):
        check(project, ".bounded-review")


def test_a_gitignore_that_is_a_symbolic_link_is_refused(project: GitRepo, tmp_path: Path) -> None:
    """git does not follow a .gitignore that is a symbolic link: everything there shows."""
    folder = tools_folder(project)
    (tmp_path / "star").write_text("*\n")
    (folder / ".gitignore").unlink()
    (folder / ".gitignore").symlink_to(tmp_path / "star")
    with pytest.raises(ConfigError, match=r"tracks or shows \(\.bounded-review/\.gitignore"):
        check(project, ".bounded-review")
