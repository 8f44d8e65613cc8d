"""Real temporary git repositories for tests, and a check that the user's state is untouched."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import warmstart

from pytest_boundedreview.change.trees.byproducts import bytecode

# Files pytester and pytest write next to the tests; a real project ignores them too.
PYTESTER_IGNORES = "__pycache__/\n.pytest_cache/\nbasetemp/\nrunpytest-*\nstdout\nstderr\n"


class GitRepo:
    """A work tree the tests drive with the real ``git`` binary."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def init(cls, path: Path, branch: str = "main") -> GitRepo:
        path.mkdir(parents=True, exist_ok=True)
        repo = cls(path)
        repo.git("init", "--quiet", f"--initial-branch={branch}")
        # what `git config` would add, written at once: three fewer processes per repository;
        # and no `git maintenance run --auto` after each commit (half a commit's cost)
        with (path / ".git" / "config").open("a", encoding="utf-8") as config:
            config.write("[user]\n\tname = Test\n\temail = test@example.invalid\n")
            config.write("[commit]\n\tgpgsign = false\n")
            config.write("[maintenance]\n\tauto = false\n")
        return repo

    def git(self, *args: str, env: Mapping[str, str] | None = None, check: bool = True) -> str:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        full_env.update(env or {})
        proc = subprocess.run(
            ["git", *args], cwd=self.path, env=full_env, capture_output=True, check=False
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {args} failed: {proc.stderr.decode()}")
        return proc.stdout.decode("utf-8", "surrogateescape").rstrip("\n")

    def write(self, name: str, content: str | bytes) -> Path:
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def commit(self, files: Mapping[str, str | bytes] | None = None, message: str = "c") -> str:
        for name, content in (files or {}).items():
            self.write(name, content)
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def age(self) -> None:
        """Every tracked file a minute old, and the index told so: no entry is racily clean,
        so git keeps each where it is instead of writing it again (into a split index's
        main file, say)."""
        past = time.time() - 60
        for name in self.git("ls-files", "-z").split("\0"):
            if name:
                os.utime(self.path / name, (past, past))
        self.git("update-index", "--refresh")

    def tree(self, rev: str = "HEAD") -> str:
        return self.git("rev-parse", f"{rev}^{{tree}}")

    def user_state(self) -> tuple[str, bytes, str, str]:
        """What the tool must never change: status, index bytes, stash and refs. The bytecode
        Python writes as the tests import the project is not the tool's doing, nor part of any
        tree (``change/trees/byproducts.py``): plain pytest leaves the same."""
        index = Path(self.git("rev-parse", "--path-format=absolute", "--git-path", "index"))
        # Read the index first: `git status` without --no-optional-locks may rewrite it.
        index_bytes = index.read_bytes() if index.exists() else b""
        refs = self.git("for-each-ref") + "\n" + self.git("rev-parse", "HEAD", check=False)
        refs += "\n" + self.git("symbolic-ref", "--quiet", "HEAD", check=False)
        status = self.git("--no-optional-locks", "status", "--porcelain", "--untracked-files=all")
        return (
            _without_bytecode(self.path, status),
            index_bytes,
            self.git("stash", "list"),
            refs,
        )

    @contextlib.contextmanager
    def untouched(self) -> Iterator[None]:
        """Assert the block leaves the user's tree, index, stash and refs as they were."""
        before = self.user_state()
        yield
        assert self.user_state() == before


def _without_bytecode(root: Path, status: str) -> str:
    """``git status --porcelain`` without the untracked bytecode Python wrote."""
    lines = status.splitlines()
    return "\n".join(x for x in lines if not (x.startswith("?? ") and bytecode(root, x[3:])))


# The options of every pytest session a test starts (``PYTEST_ADDOPTS``), unless the test loads
# a plugin on purpose: pytest-randomly would shuffle and reseed the child's session; the pytest
# plugins that hypothesis, anyio (through the MCP SDK) and platformdirs bring load in every
# pytest process and cost half a second each time (0.95 s against 0.42 s for a one-test session
# here), over the thousands of sessions and re-runs the suite starts.
CHILD_OPTIONS = "-p no:randomly -p no:hypothesispytest -p no:anyio -p no:platformdirs"


def bounded_review(repo: GitRepo, *argv: str) -> subprocess.CompletedProcess[str]:
    """``bounded-review ARGV`` in ``repo`` with a :func:`clean_env`, as a user runs it."""
    return warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", *argv],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env=clean_env(),
        check=False,
    )


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a child run: no git or GitHub Actions variables,
    ``PYTEST_ADDOPTS`` set to :data:`CHILD_OPTIONS`, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITHUB_"))}
    env["PYTEST_ADDOPTS"] = CHILD_OPTIONS
    env.update(extra or {})
    return env


# What pytester and Python write in a project on their own.
PYTESTER_FILES = (".pytest_cache", "basetemp", "runpytest-", "stdout", "stderr")


def every_file(root: Path, theirs: tuple[str, ...] = ()) -> set[str]:
    """Every path under ``root`` outside ``.git`` and ``__pycache__``, ignored ones too:
    what ``git status`` cannot show (a ``.gitignore`` of ``*`` hides itself). Paths starting
    with one of ``theirs`` are left out."""
    found = set()
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
        for name in [*dirs, *files]:
            relative = os.path.relpath(Path(top, name), root)
            if not relative.startswith(theirs):
                found.add(relative)
    return found


def interruptible() -> None:
    """``preexec_fn`` for a child the test will Ctrl-C: SIGINT back to its default, which a
    shell's background job (or ``nohup``) passes on as ignored, and Python then never raises
    ``KeyboardInterrupt``."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
