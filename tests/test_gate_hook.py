"""`bounded-review gate` for commits and the hooks this repository offers to pre-commit: a clean
report must exist for exactly the tree being committed; the `bounded-review` hook and the
`hooks/pre-commit` shim let a commit through only with a clean report this run wrote of the
staged tree — with the real `pre-commit` package and real `git commit`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import warmstart
from gitrepo import GitRepo, clean_env

from pytest_boundedreview.change import git
from pytest_boundedreview.cli.gate import check

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

ROOT = Path(__file__).resolve().parent.parent
EXIT_IN_SESSIONFINISH = "import os\n\n\ndef pytest_sessionfinish(session):\n    os._exit(0)\n"
EXITS_CLEANLY = "import pytest\n\n\ndef test_leaves():\n    pytest.exit('bye', returncode=0)\n"


def review(repo: GitRepo, *args: str) -> int:
    ran = warmstart.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--bounded-review", *args],
        cwd=repo.path,
        env=clean_env(),
        capture_output=True,
        check=False,
    )
    return ran.returncode


@pytest.fixture
def sample(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "sample")
    repo.commit(
        {
            ".gitignore": ".bounded-review/\n__pycache__/\n",
            "test_a.py": "def test_a():\n    assert 1\n",
        },
        "base",
    )
    repo.commit({"app.py": "x = 1\n"}, "change")
    return repo


def test_the_commit_gate_answers_for_exactly_the_staged_tree(sample: GitRepo) -> None:
    handle = git.open_repo(sample.path)
    report = sample.path / ".bounded-review" / "report.json"
    status, why = check(handle, report, "pre-commit", {})
    assert (status, "no report at" in why) == (2, True)
    assert review(sample, "--bounded-review-target=local-diff", "--bounded-review-base=HEAD~1") == 0
    status, why = check(handle, report, "pre-commit", {})  # HEAD's tree, but another base
    assert status == 2
    assert "not a review of this commit" in why
    assert review(sample, "--bounded-review-target=local-diff") == 0  # against HEAD
    status, why = check(handle, report, "pre-commit", {})  # nothing staged: HEAD's tree
    assert status == 0
    assert why.startswith(f"accepted the clean review {report} for the staged tree tree:")
    assert f"local-diff against HEAD @ {sample.git('rev-parse', 'HEAD')[:12]}" in why
    sample.write("app.py", "x = 2\n")
    sample.git("add", "app.py")
    status, why = check(handle, report, "pre-commit", {})
    assert status == 2
    assert "not this pre-commit snapshot" in why
    assert "--bounded-review-target=staged" in why
    assert review(sample, "--bounded-review-target=staged") == 0
    with sample.untouched():
        assert check(handle, report, "pre-commit", {})[0] == 0
        assert check(handle, report, "manual", {})[0] == 0
    document = json.loads(report.read_text())
    document["gate"] = {"review_clean": "no", "reasons": ["x"]}
    report.write_text(json.dumps(document))
    assert check(handle, report, "pre-commit", {})[0] == 1
    document["gate"] = {"review_clean": "maybe", "reasons": []}  # strict: not a report
    report.write_text(json.dumps(document))
    status, why = check(handle, report, "pre-commit", {})
    assert status == 2
    assert "gate.review_clean" in why


def test_the_working_tree_gate_answers_for_what_an_agent_left(sample: GitRepo) -> None:
    """`gate --stage working-tree`: a clean report of the working tree with its untracked
    files, against the base the stop hook judges it with; the index is never used or touched."""
    handle = git.open_repo(sample.path)
    report = sample.path / ".bounded-review" / "report.json"
    sample.write("app.py", "x = 2\n")
    sample.write("extra.py", "y = 1\n")  # untracked: part of what the agent left
    with sample.untouched():
        assert check(handle, report, "working-tree", {})[0] == 2
        assert review(sample, "--bounded-review-target=local-diff") == 0
        status, why = check(handle, report, "working-tree", {})
    assert status == 0, why
    assert why.startswith("accepted the clean review")
    assert "for the working tree tree:" in why
    sample.write("extra.py", "y = 2\n")  # changed after its review
    status, why = check(handle, report, "working-tree", {})
    assert status == 2
    assert "not the working tree" in why
    assert "-m pytest --bounded-review" in why
    assert review(sample, "--bounded-review-target=local-diff", "--bounded-review-base=HEAD~1") == 0
    status, why = check(handle, report, "working-tree", {})  # this tree, another base
    assert status == 2
    assert f"not {sample.git('rev-parse', 'HEAD')[:12]}" in why
    sample.write("test_a.py", "def test_a():\n    assert 0\n")  # a regression
    assert review(sample, "--bounded-review-target=local-diff") == 1
    assert check(handle, report, "working-tree", {})[0] == 1


def test_the_commit_gate_binds_the_base_to_head(sample: GitRepo) -> None:
    """A review of the staged tree against an older commit is not a review of what the commit
    adds. A base whose tree is the staged tree (``git stash create``) no longer makes an empty
    diff: a named base is its merge base with HEAD, here HEAD itself."""
    handle = git.open_repo(sample.path)
    report = sample.path / ".bounded-review" / "report.json"
    sample.write("app.py", "x = 2\n")
    sample.git("add", "app.py")
    stash = sample.git("stash", "create")
    head = sample.git("rev-parse", "HEAD")
    with sample.untouched():
        base = f"--bounded-review-base={stash}"
        assert review(sample, "--bounded-review-target=local-diff", base) == 0
        reviewed = json.loads(report.read_text())["target"]
        assert (reviewed["base_commit"], reviewed["files"]) == (head, ["app.py"])
        assert check(handle, report, "pre-commit", {})[0] == 0  # a review of the commit
        older = "--bounded-review-base=HEAD~1"
        assert review(sample, "--bounded-review-target=staged", older) == 0
        status, why = check(handle, report, "pre-commit", {})
    assert status == 2
    assert f"staged against HEAD~1 ({sample.git('rev-parse', 'HEAD~1')[:12]})" in why
    assert f"committed on HEAD ({head[:12]})" in why
    assert "--bounded-review-target=staged --bounded-review-base=HEAD" in why
    # a report that does not record its base commit (an earlier version's) is refused too
    assert review(sample, "--bounded-review-target=staged") == 0
    assert check(handle, report, "pre-commit", {})[0] == 0  # the staged review passes
    document = json.loads(report.read_text())
    del document["target"]["base_commit"]
    report.write_text(json.dumps(document))
    status, why = check(handle, report, "pre-commit", {})
    assert status == 2
    assert "does not record the commit it was reviewed against" in why


def test_the_commit_gate_takes_the_staged_review_against_the_configured_base(
    sample: GitRepo,
) -> None:
    """With ``base = "main"`` configured, the pre-commit review of a feature branch's staged
    tree is against merge-base(main, HEAD): the branch with this commit, as its pull request
    will be. The commit gate takes that review; an older commit of one's choosing is still not
    this commit's review."""
    sample.commit({"pyproject.toml": '[tool.bounded-review]\nbase = "main"\n'}, "configured")
    sample.git("checkout", "--quiet", "-b", "feature")
    sample.commit({"app.py": "x = 2  # work in progress\n"}, "wip")
    handle = git.open_repo(sample.path)
    report = sample.path / ".bounded-review" / "report.json"
    sample.write("app.py", "x = 3  # harmless\n")
    sample.git("add", "app.py")
    with sample.untouched():
        assert review(sample, "--bounded-review-target=staged") == 0
        reviewed = json.loads(report.read_text())["target"]
        assert reviewed["base_commit"] == sample.git("rev-parse", "main")
        assert check(handle, report, "pre-commit", {})[0] == 0
        first = sample.git("rev-list", "--max-parents=0", "HEAD")
        assert (
            review(sample, "--bounded-review-target=staged", f"--bounded-review-base={first}") == 0
        )
        status, why = check(handle, report, "pre-commit", {})
    assert status == 2
    assert "not a review of this commit" in why


def test_the_commit_gate_on_an_unborn_branch_needs_a_review_against_nothing(
    tmp_path: Path,
) -> None:
    repo = GitRepo.init(tmp_path / "new")
    repo.write(".gitignore", ".bounded-review/\n__pycache__/\n")
    repo.write("test_a.py", "def test_a():\n    assert 1\n")
    repo.git("add", "--all")
    handle = git.open_repo(repo.path)
    report = repo.path / ".bounded-review" / "report.json"
    with repo.untouched():
        assert review(repo, "--bounded-review-target=staged") == 0
        document = json.loads(report.read_text())
        assert document["target"]["base_commit"] is None
        status, why = check(handle, report, "pre-commit", {})
    assert status == 0, why
    # a report of the same tree against some commit is not a review of a first commit
    elsewhere = GitRepo.init(tmp_path / "elsewhere")
    other = elsewhere.commit({"x": "1\n"}, "other")
    forged = {**document, "target": {**document["target"], "base_commit": other, "base": other}}
    report.write_text(json.dumps(forged))
    status, why = check(handle, report, "pre-commit", {})
    assert status == 2
    assert "an unborn branch" in why
    # nor is an earlier version's report, which does not say what it was reviewed against
    forged = {**document, "target": {**document["target"], "base": "main"}}
    del forged["target"]["base_commit"]
    report.write_text(json.dumps(forged))
    status, why = check(handle, report, "pre-commit", {})
    assert status == 2
    assert "does not record the commit" in why


def test_auto_is_a_push_when_pre_commit_says_one_runs(sample: GitRepo) -> None:
    handle = git.open_repo(sample.path)
    report = sample.path / ".bounded-review" / "report.json"
    sample.git("branch", "base", "HEAD~1")
    assert review(sample, "--bounded-review-target=pr", "--bounded-review-base=base") == 0

    def base() -> tuple[str, str]:
        return "base", sample.git("rev-parse", "base")

    # a first push names the remote but no refs: HEAD, against the configured base
    status, why = check(handle, report, "auto", {"PRE_COMMIT_REMOTE_NAME": "o"}, configured=base)
    assert status == 0, why
    assert "the push of HEAD" in why
    # pushing another commit than HEAD: its tree, which this report did not review
    env = {"PRE_COMMIT_TO_REF": sample.git("rev-parse", "HEAD~1"), "PRE_COMMIT_REMOTE_NAME": "o"}
    status, why = check(handle, report, "auto", env, configured=base)
    assert status == 2
    assert "check out" in why


@pytest.fixture(scope="module")
def offered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A pre-commit store, and this repository as pre-commit fetches it (uncommitted changes
    committed in a shadow clone, as `pre-commit try-repo` does): each hook environment is
    built once for the module, not once a run."""
    from pre_commit.commands.try_repo import _repo_ref

    folder = tmp_path_factory.mktemp("pre-commit")
    repo, rev = _repo_ref(str(folder), str(ROOT), None)
    return folder / "home", repo, rev


def try_repo(
    sample: GitRepo, offered: tuple[Path, str, str], hook: str, stage: str
) -> subprocess.CompletedProcess[str]:
    """This repository's ``hook`` run by the real pre-commit on ``sample``."""
    home, repo, rev = offered
    config = home.parent / f"{hook}.yaml"
    config.write_text(json.dumps({"repos": [{"repo": repo, "rev": rev, "hooks": [{"id": hook}]}]}))
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "-c", str(config), "--hook-stage", stage],
        cwd=sample.path,
        env=clean_env({"PRE_COMMIT_HOME": str(home)}),
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_gate_hook_blocks_a_commit_until_a_clean_review_of_the_staged_tree(
    sample: GitRepo, offered: tuple[Path, str, str]
) -> None:
    blocked = try_repo(sample, offered, "bounded-review-gate", "pre-commit")
    assert blocked.returncode != 0, blocked.stdout
    assert "no report at" in blocked.stdout
    assert review(sample, "--bounded-review-target=local-diff", "--bounded-review-base=HEAD~1") == 0
    elsewhere = try_repo(sample, offered, "bounded-review-gate", "pre-commit")  # another base
    assert elsewhere.returncode != 0
    assert "not a review of this commit" in elsewhere.stdout
    assert review(sample, "--bounded-review-target=staged") == 0
    passed = try_repo(sample, offered, "bounded-review-gate", "pre-commit")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    sample.write("app.py", "x = 3\n")
    sample.git("add", "app.py")
    again = try_repo(sample, offered, "bounded-review-gate", "pre-commit")
    assert again.returncode != 0
    assert "not this pre-commit snapshot" in again.stdout


def test_the_review_hook_blocks_a_session_that_ends_before_its_report(
    sample: GitRepo, offered: tuple[Path, str, str]
) -> None:
    sample.write("app.py", "x = 2\n")
    sample.write("conftest.py", EXIT_IN_SESSIONFINISH)  # pytest would exit 0
    sample.git("add", "--all")
    blocked = try_repo(sample, offered, "bounded-review", "pre-commit")
    assert blocked.returncode != 0, blocked.stdout
    assert "without writing a report" in blocked.stdout


def test_the_review_hook_passes_a_clean_staged_change(
    sample: GitRepo, offered: tuple[Path, str, str]
) -> None:
    sample.write("app.py", "x = 2\n")
    sample.git("add", "app.py")
    passed = try_repo(sample, offered, "bounded-review", "pre-commit")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    report = json.loads((sample.path / ".bounded-review" / "report.json").read_text())
    assert report["target"]["kind"] == "staged"


def framework_state(repo: GitRepo) -> tuple[object, ...]:
    """The user's state as pre-commit leaves it: pre-commit itself sets unstaged edits aside
    and back (``git checkout``, ``git apply``), which rewrites the index file's stat data, so
    its entries are compared rather than its bytes (the direct runs compare bytes:
    tests/change/test_tested_checkout_e2e.py)."""
    status, _, stash, refs = repo.user_state()
    return status, repo.git("ls-files", "--stage"), stash, refs


def test_the_review_hook_passes_a_clean_staged_change_beside_scratch_files(
    sample: GitRepo, offered: tuple[Path, str, str]
) -> None:
    """pre-commit sets unstaged edits aside, never untracked files: the review tests the
    staged tree in a checkout of its own, and the user's tree, index and stash stay."""
    sample.write("app.py", "x = 2\n")
    sample.git("add", "app.py")
    sample.write("notes.txt", "scratch\n")  # untracked, not ignored
    sample.write("test_a.py", "def test_a():\n    assert 1  # wip\n")  # unstaged
    before = framework_state(sample)
    passed = try_repo(sample, offered, "bounded-review", "pre-commit")
    assert framework_state(sample) == before
    assert passed.returncode == 0, passed.stdout + passed.stderr
    report = json.loads((sample.path / ".bounded-review" / "report.json").read_text())
    assert report["target"]["revision"] == f"tree:{sample.git('write-tree')}"
    assert report["gate"]["review_clean"] == "yes"


def test_the_review_hook_refuses_a_staged_regression_beside_scratch_files(
    sample: GitRepo, offered: tuple[Path, str, str]
) -> None:
    sample.write("test_a.py", "def test_a():\n    assert 0\n")
    sample.git("add", "test_a.py")
    sample.write("notes.txt", "scratch\n")
    before = framework_state(sample)
    refused = try_repo(sample, offered, "bounded-review", "pre-commit")
    assert framework_state(sample) == before
    assert refused.returncode != 0, refused.stdout
    report = json.loads((sample.path / ".bounded-review" / "report.json").read_text())
    assert report["gate"]["review_clean"] == "no"


@pytest.fixture
def with_shim(sample: GitRepo) -> GitRepo:
    hook = sample.path / ".git" / "hooks" / "pre-commit"
    shutil.copy(ROOT / "hooks" / "pre-commit", hook)
    assert os.access(hook, os.X_OK)
    return sample


def commit(repo: GitRepo, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``git commit`` of what is staged, the shim started with this interpreter (or in
    ``env``)."""
    return subprocess.run(
        ["git", "commit", "-m", "change"],
        cwd=repo.path,
        env=env or clean_env({"BOUNDED_REVIEW_PYTHON": sys.executable}),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )


@pytest.mark.parametrize(
    "files",
    [
        pytest.param({"conftest.py": EXIT_IN_SESSIONFINISH}, id="os._exit(0)-in-sessionfinish"),
        pytest.param({"test_leaves.py": EXITS_CLEANLY}, id="pytest.exit(returncode=0)"),
        pytest.param({"test_a.py": "def test_a():\n    assert 0\n"}, id="a-test-the-change-breaks"),
    ],
)
def test_the_commit_shim_lets_no_unfinished_or_failing_session_through(
    with_shim: GitRepo, files: dict[str, str]
) -> None:
    head = with_shim.git("rev-parse", "HEAD")
    for name, text in files.items():
        with_shim.write(name, text)
    with_shim.git("add", "--all")
    refused = commit(with_shim)
    assert refused.returncode != 0, refused.stdout
    assert with_shim.git("rev-parse", "HEAD") == head  # no commit recorded


def test_the_commit_shim_records_a_clean_change(with_shim: GitRepo) -> None:
    head = with_shim.git("rev-parse", "HEAD")
    with_shim.write("app.py", "x = 2\n")
    with_shim.git("add", "app.py")
    done = commit(with_shim)
    assert done.returncode == 0, done.stdout
    assert with_shim.git("rev-parse", "HEAD~1") == head
    report = json.loads((with_shim.path / ".bounded-review" / "report.json").read_text())
    assert report["target"]["revision"] == f"tree:{with_shim.tree()}"


# A test of the project that passes only when its own environment runs it.
IN_ITS_VENV = "import sys\n\n\ndef test_env():\n    assert sys.prefix.endswith('.venv')\n"


def project_venv(repo: GitRepo, with_plugin: bool = True) -> Path:
    """A real virtual environment in ``repo/.venv`` (ignored, as projects have it) whose site
    holds this interpreter's packages when ``with_plugin`` (pytest and this plugin)."""
    venv = repo.path / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    if with_plugin:
        import sysconfig

        site = next((venv / "lib").glob("python*/site-packages"))
        ours = sysconfig.get_paths()["purelib"]
        (site / "ours.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    repo.write(".gitignore", ".bounded-review/\n__pycache__/\n.venv/\n")
    repo.git("add", ".gitignore")  # staged with the change under review
    return venv / "bin" / "python"


def plain_shell(extra: dict[str, str]) -> dict[str, str]:
    """A shell's environment without any virtual environment activated or on ``PATH``."""
    env = clean_env(extra)
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    return env


def local_hook(repo: GitRepo, home: Path) -> subprocess.CompletedProcess[str]:
    """The README's `repo: local` hook, run by the real pre-commit from a plain shell."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```yaml\nrepos:\n  - repo: local\n", 1)[1].split("```", 1)[0]
    config = home / "local.yaml"
    config.write_text("repos:\n  - repo: local\n" + block)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "-c", str(config)],
        cwd=repo.path,
        env=plain_shell({"PRE_COMMIT_HOME": str(home / "home")}),
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_readme_hook_runs_the_project_s_venv_from_a_plain_shell(
    sample: GitRepo, tmp_path: Path
) -> None:
    project_venv(sample)
    sample.write("test_env.py", IN_ITS_VENV)
    sample.git("add", "test_env.py")
    before = framework_state(sample)
    passed = local_hook(sample, tmp_path)
    assert framework_state(sample) == before
    assert passed.returncode == 0, passed.stdout + passed.stderr
    report = json.loads((sample.path / ".bounded-review" / "report.json").read_text())
    assert report["tests"]["passed"] == 2
    assert report["gate"]["review_clean"] == "yes"


def test_the_offered_hook_tests_with_the_project_s_venv(
    sample: GitRepo, offered: tuple[Path, str, str]
) -> None:
    """pre-commit runs the tool in an environment of its own: the tests still run in the
    project's ``.venv``, with its version of the tool."""
    project_venv(sample)
    sample.write("test_env.py", IN_ITS_VENV)
    sample.git("add", "test_env.py")
    passed = try_repo(sample, offered, "bounded-review", "pre-commit")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    report = json.loads((sample.path / ".bounded-review" / "report.json").read_text())
    assert report["tests"]["passed"] == 2  # test_env among them: the venv ran the tests
    assert report["gate"]["review_clean"] == "yes"


def test_a_project_venv_without_the_plugin_is_named_with_the_fix(
    sample: GitRepo, offered: tuple[Path, str, str]
) -> None:
    python = project_venv(sample, with_plugin=False)
    sample.write("app.py", "x = 2\n")
    sample.git("add", "app.py")
    refused = try_repo(sample, offered, "bounded-review", "pre-commit")
    assert refused.returncode != 0
    assert f"the tests' interpreter {python} (the repository's .venv) cannot load" in (
        refused.stdout
    )
    assert "set BOUNDED_REVIEW_PYTHON" in refused.stdout
    assert not (sample.path / ".bounded-review" / "report.json").exists()


def test_a_refused_commit_says_to_stage_the_fix_and_commit_again(
    sample: GitRepo, offered: tuple[Path, str, str]
) -> None:
    sample.write("test_a.py", "def test_a():\n    assert 0\n")
    sample.git("add", "test_a.py")
    refused = try_repo(sample, offered, "bounded-review", "pre-commit")
    assert refused.returncode != 0
    report = json.loads((sample.path / ".bounded-review" / "report.json").read_text())
    assert report["next_action"].endswith("; then stage the fix (git add) and commit again")
    assert "commit again" in refused.stdout


def test_the_commit_shim_finds_the_project_s_venv_from_a_plain_shell(with_shim: GitRepo) -> None:
    project_venv(with_shim)
    with_shim.write("test_env.py", IN_ITS_VENV)
    with_shim.git("add", "test_env.py")
    done = commit(with_shim, plain_shell({}))
    assert done.returncode == 0, done.stdout
    assert with_shim.git("show", "--name-only", "--format=", "HEAD").split() == [
        ".gitignore",
        "test_env.py",
    ]


def test_the_commit_shim_names_an_interpreter_without_the_plugin(with_shim: GitRepo) -> None:
    project_venv(with_shim, with_plugin=False)
    with_shim.write("app.py", "x = 2\n")
    with_shim.git("add", "app.py")
    head = with_shim.git("rev-parse", "HEAD")
    done = commit(with_shim, plain_shell({}))
    assert done.returncode != 0
    assert ".venv/bin/python cannot load pytest-boundedreview" in done.stdout
    assert with_shim.git("rev-parse", "HEAD") == head
