"""The pre-push gate binds to the range pushed: real `git push` to a local bare remote, through
the `hooks/pre-push` shim and through the pre-commit framework's own pre-push hook. A review of
the pushed tree against another base (a local diff against HEAD after an unreviewed commit)
lets nothing through; a review against the push's base does."""

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

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

ROOT = Path(__file__).resolve().parent.parent
GOOD = "def double(x):\n    return 2 * x\n"
REGRESSION = "def double(x):\n    return 3 * x\n"
TESTS = "from app import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
FRAMEWORK_CONFIG = f"""\
repos:
  - repo: local
    hooks:
      - id: bounded-review-gate
        name: a clean bounded review exists for this snapshot
        entry: {sys.executable} -m pytest_boundedreview gate
        language: system
        pass_filenames: false
        always_run: true
        verbose: true  # show which review was accepted
        stages: [pre-push]
"""


class Pushing:
    """A work repository whose ``main`` is on a bare remote ``origin``, a pre-push hook
    installed."""

    def __init__(self, tmp_path: Path, framework: bool) -> None:
        self.framework = framework
        self.remote = tmp_path / "remote.git"
        subprocess.run(["git", "init", "--quiet", "--bare", "-b", "main", str(self.remote)])
        self.repo = GitRepo.init(tmp_path / "work")
        self.env = clean_env(
            {"BOUNDED_REVIEW_PYTHON": sys.executable, "PRE_COMMIT_HOME": str(tmp_path / "pc")}
        )
        files = {
            ".gitignore": ".bounded-review/\n__pycache__/\n.pytest_cache/\n",
            "app.py": GOOD,
            "test_app.py": TESTS,
            "pyproject.toml": '[tool.bounded-review]\nbase = "origin/main"\n',
        }
        if framework:
            files[".pre-commit-config.yaml"] = FRAMEWORK_CONFIG
        self.repo.commit(files, "base")
        self.repo.git("remote", "add", "origin", str(self.remote))
        self.repo.git("push", "--quiet", "origin", "main")
        hook = self.repo.path / ".git" / "hooks" / "pre-push"
        if framework:
            self._run(sys.executable, "-m", "pre_commit", "install", "-t", "pre-push")
        else:
            shutil.copy(ROOT / "hooks" / "pre-push", hook)
        assert os.access(hook, os.X_OK)

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return warmstart.run(
            argv, cwd=self.repo.path, env=self.env, capture_output=True, text=True, check=False
        )

    def review(self, *args: str) -> int:
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--bounded-review"]
        return self._run(*argv, "--bounded-review-no-lanes", *args).returncode

    def push(self, *refs: str) -> subprocess.CompletedProcess[str]:
        """``git push``, its hook's output (the shim's stderr, or pre-commit's stdout) in
        ``stdout``."""
        return subprocess.run(
            ["git", "push", "origin", *refs],
            cwd=self.repo.path,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
        )

    def on_remote(self, ref: str) -> str | None:
        found = self._run("git", f"--git-dir={self.remote}", "rev-parse", "--verify", "-q", ref)
        return found.stdout.strip() or None

    def report(self) -> Path:
        return self.repo.path / ".bounded-review" / "report.json"


@pytest.fixture(params=[False, True], ids=["shim", "pre-commit"])
def pushing(request: pytest.FixtureRequest, tmp_path: Path) -> Pushing:
    return Pushing(tmp_path, framework=request.param)


def test_a_review_against_head_does_not_pass_a_push_against_the_remote(
    pushing: Pushing,
) -> None:
    repo, before = pushing.repo, pushing.on_remote("main")
    repo.commit({"app.py": REGRESSION}, "an unreviewed regression")
    repo.write("README.md", "notes\n")
    # the edit is reviewed as a local diff against HEAD: the regression is not in it
    assert pushing.review("--bounded-review-target=local-diff", "--bounded-review-base=HEAD") == 0
    repo.commit(message="notes")
    refused = pushing.push("main")
    assert refused.returncode != 0
    assert "reviewed local-diff against HEAD" in refused.stdout
    assert "pytest --bounded-review --bounded-review-target=pr" in refused.stdout
    assert "--bounded-review-base=origin/main" in refused.stdout
    assert pushing.on_remote("main") == before
    # the review of the push's range finds the regression: still refused, as not clean
    assert pushing.review("--bounded-review-target=pr") == 1
    blocked = pushing.push("main")
    assert blocked.returncode != 0
    assert "is not clean" in blocked.stdout
    assert pushing.on_remote("main") == before
    # fixed and reviewed against the remote's main: the push goes out, naming the review
    repo.commit({"app.py": GOOD}, "fix")
    assert pushing.review("--bounded-review-target=pr") == 0
    passed = pushing.push("main")
    assert passed.returncode == 0, passed.stdout
    report = json.loads(pushing.report().read_text())
    accepted = f"accepted the clean review {pushing.report()}"
    assert accepted in passed.stdout
    assert f"pr against origin/main @ {before[:12] if before else '?'}" in passed.stdout
    assert report["target"]["base_commit"] == before
    assert pushing.on_remote("main") == repo.git("rev-parse", "HEAD")
    # pre-commit names one pushed ref: its gate says so and where every ref is checked
    named = "only refs/heads/main, the ref pre-commit named, was checked"
    assert (named in passed.stdout) == pushing.framework
    assert ("hooks/pre-push" in passed.stdout) == pushing.framework


def test_a_new_branch_is_reviewed_against_the_configured_base(pushing: Pushing) -> None:
    repo = pushing.repo
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.write("README.md", "notes\n")
    # HEAD is origin/main's commit here: a local diff against it is a review of the range
    assert pushing.review("--bounded-review-target=local-diff", "--bounded-review-base=HEAD") == 0
    repo.commit(message="notes")
    passed = pushing.push("feature")
    assert passed.returncode == 0, passed.stdout
    assert pushing.on_remote("feature") == repo.git("rev-parse", "HEAD")
    # on a second new branch: an unreviewed regression, then a reviewed edit on top of it
    repo.git("checkout", "--quiet", "-b", "second")
    repo.commit({"app.py": REGRESSION}, "an unreviewed regression")
    repo.write("CHANGES.md", "more\n")
    assert pushing.review("--bounded-review-target=local-diff", "--bounded-review-base=HEAD") == 0
    repo.commit(message="more")
    refused = pushing.push("second")
    assert refused.returncode != 0
    assert "adds the commits after origin/main" in refused.stdout
    assert pushing.on_remote("second") is None


def test_a_base_the_branch_names_itself_does_not_let_its_regression_out(
    pushing: Pushing,
) -> None:
    """A new branch whose last commit sets `base = "HEAD~1"` over its earlier regression: a
    review against HEAD~1 (the regression then pre-existing) does not pass its push, which is
    the range after origin/main, as the base's configuration says."""
    repo = pushing.repo
    repo.git("checkout", "--quiet", "-b", "third")
    repo.commit({"app.py": REGRESSION}, "an unreviewed regression")
    repo.commit({"pyproject.toml": '[tool.bounded-review]\nbase = "HEAD~1"\n'}, "rebased")
    assert pushing.review() == 1  # the review the configuration gives finds it
    assert pushing.review("--bounded-review-base=HEAD~1") == 0  # one that looks away
    refused = pushing.push("third")
    assert refused.returncode != 0
    assert "adds the commits after origin/main" in refused.stdout
    assert pushing.on_remote("third") is None


def test_a_push_of_commits_the_remote_has_needs_no_review(pushing: Pushing) -> None:
    pushing.repo.git("branch", "copy", "main")
    passed = pushing.push("copy")
    assert passed.returncode == 0, passed.stdout
    assert pushing.on_remote("copy") == pushing.on_remote("main")


def test_every_pushed_ref_must_be_covered(tmp_path: Path) -> None:
    pushing = Pushing(tmp_path, framework=False)  # pre-commit checks only the first ref
    repo = pushing.repo
    repo.git("checkout", "--quiet", "-b", "reviewed")
    repo.commit({"README.md": "reviewed\n"}, "reviewed")
    repo.git("checkout", "--quiet", "-b", "other", "main")
    repo.commit({"app.py": REGRESSION}, "not reviewed")
    repo.git("checkout", "--quiet", "reviewed")
    assert pushing.review("--bounded-review-target=pr") == 0
    refused = pushing.push("reviewed", "other")
    assert refused.returncode != 0
    assert "the push of refs/heads/other" in refused.stdout
    assert "check out refs/heads/other" in refused.stdout
    assert (pushing.on_remote("reviewed"), pushing.on_remote("other")) == (None, None)
    passed = pushing.push("reviewed")
    assert passed.returncode == 0, passed.stdout
    assert "the ref pre-commit named" not in passed.stdout  # git's lines: every ref checked


def test_under_pre_commit_the_gate_says_it_checked_only_the_named_ref(tmp_path: Path) -> None:
    """pre-commit passes one pushed ref; a clean answer must not read as one for the push."""
    pushing = Pushing(tmp_path, framework=True)
    repo = pushing.repo
    repo.git("checkout", "--quiet", "-b", "reviewed")
    repo.commit({"README.md": "reviewed\n"}, "reviewed")
    repo.git("checkout", "--quiet", "-b", "other", "main")
    repo.commit({"app.py": REGRESSION}, "not reviewed")
    repo.git("checkout", "--quiet", "reviewed")
    assert pushing.review("--bounded-review-target=pr") == 0
    passed = pushing.push("reviewed", "other")
    assert passed.returncode == 0, passed.stdout  # pre-commit named only the first ref
    assert "only refs/heads/reviewed, the ref pre-commit named, was checked" in passed.stdout
    assert "other refs pushed at once were not" in passed.stdout
    assert "hooks/pre-push" in passed.stdout


def test_the_gate_reads_the_report_strictly(tmp_path: Path) -> None:
    pushing = Pushing(tmp_path, framework=False)
    repo, report = pushing.repo, pushing.report()
    repo.commit({"README.md": "notes\n"}, "notes")
    assert pushing.review("--bounded-review-target=pr") == 0
    clean = json.loads(report.read_text())
    # a report of an earlier version: valid, but it cannot say which base it reviewed against
    older = json.loads(report.read_text())
    del older["target"]["base_commit"]
    report.write_text(json.dumps(older))
    validated = pushing._run(sys.executable, "-m", "pytest_boundedreview", "validate", str(report))
    assert validated.returncode == 0, validated.stdout
    refused = pushing.push("main")
    assert refused.returncode != 0
    assert "does not record the commit it was reviewed against" in refused.stdout
    # a hand-made "report" with the right tree and a yes, and little else
    forged = {
        "schema": clean["schema"],
        "target": clean["target"],
        "gate": {"review_clean": "yes", "reasons": []},
    }
    report.write_text(json.dumps(forged))
    refused = pushing.push("main")
    assert refused.returncode != 0
    assert "is not a valid bounded-review report" in refused.stdout
    assert "tool_version" in refused.stdout
    report.write_text(json.dumps(clean))
    assert pushing.push("main").returncode == 0


def test_pushed_refs_are_read_from_a_file_and_a_missing_one_is_a_usage_error(
    tmp_path: Path,
) -> None:
    pushing = Pushing(tmp_path, framework=False)
    repo = pushing.repo
    remote_main = pushing.on_remote("main")
    repo.commit({"README.md": "notes\n"}, "notes")
    assert pushing.review("--bounded-review-target=pr") == 0
    lines = tmp_path / "pushed.txt"
    head = repo.git("rev-parse", "HEAD")
    lines.write_text(f"refs/heads/main {head} refs/heads/main {remote_main}\n")
    gate = [sys.executable, "-m", "pytest_boundedreview", "gate", "--stage", "pre-push"]
    passed = pushing._run(*gate, "--remote", "origin", "--pushed-refs", str(lines))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "the push of refs/heads/main" in passed.stdout
    missing = tmp_path / "no-such-file"
    refused = pushing._run(*gate, "--remote", "origin", "--pushed-refs", str(missing))
    assert refused.returncode == 4, refused.stderr
    assert f"--pushed-refs {missing}: cannot read it" in refused.stderr
    assert "or - to read them from stdin" in refused.stderr
    assert "Traceback" not in refused.stderr
