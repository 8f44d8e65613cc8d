"""``bounded-review demo``: a throwaway repository with a known change, reviewed end to end.

The example has one pre-existing failing test at the base and a change that breaks another
test. The demo runs ``pytest --bounded-review`` on it, shows the output and checks that the
tool saw what was designed into the example: the regression blocks, the old failure does not.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..change import git

_IDENTITY = {
    "GIT_AUTHOR_NAME": "demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
}
BASE_FILES = {
    "calc.py": (
        "def add(a, b):\n    return a + b\n\n\n"
        "def legacy_round(x):\n    return int(x)  # known bug: truncates\n"
    ),
    "test_calc.py": (
        "from calc import add, legacy_round\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_legacy_round():\n    assert legacy_round(2.7) == 3\n"
    ),
    "pyproject.toml": (
        '[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n\n'
        "[[tool.bounded-review.lanes]]\n"
        'name = "sample-reviewer"\nlens = "correctness"\n'
        f"command = {json.dumps([sys.executable, '-m', 'pytest_boundedreview.samplelane'])}\n"
    ),
}
# The change under review: a regression in add(), and a helper with a vague name (a nit).
HEAD_FILES = {
    "calc.py": BASE_FILES["calc.py"].replace("a + b", "a + b + 1")
    + "\n\ndef hlp(v):\n    return v\n"
}


def _commit(repo: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (repo / name).write_text(text, encoding="utf-8")
    git.run(["add", "--all"], repo)
    # The throwaway repository is never signed, whatever the user's global config says.
    signing_off = ["-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"]
    git.run([*signing_off, "commit", "--quiet", "--no-verify", "-m", message], repo, env=_IDENTITY)


def build(folder: Path) -> Path:
    """Create the example repository inside ``folder``: ``main`` plus a ``feature`` branch."""
    repo = folder / "example"
    repo.mkdir()
    git.run(["init", "--quiet", "--initial-branch=main"], repo)
    _commit(repo, BASE_FILES, "calculator with a known rounding bug")
    git.run(["checkout", "--quiet", "-b", "feature"], repo)
    _commit(repo, HEAD_FILES, "tweak add()")
    return repo


# What the demo must show (text in pytest's output) and what each line proves.
EXPECTED = (
    ("bounded-review: target pr (base main", "the header names the frozen `pr` target"),
    ("1 file changed", "the scope holds exactly the one changed file"),
    ("test_calc.py::test_add - passes at base", "the regression in add() is target-related"),
    ("test_calc.py::test_legacy_round - fails the same at base", "the old bug is pre-existing"),
    ("lane sample-reviewer finished: revise", "the sample reviewer lane ran and asked for a fix"),
    (
        "blocking: calc.py:2 an off-by-one constant",
        "the reviewer's finding was verified (its quote is at the cited line) and blocks",
    ),
    (
        "advisory: calc.py:9 the name `hlp`",
        "the reviewer's naming nit, filed as blocking, was demoted to advisory: it does not block",
    ),
    ("status: local verification failed", "every status line is reported on its own"),
    ("review_clean: no (exit 1)", "the gate says the change is not clean"),
)


def _expectations(output: str) -> list[str]:
    """Each returned line is one thing the demo should have shown and did not."""
    return [meaning for text, meaning in EXPECTED if text not in output]


_SGR = re.compile("\x1b\\[[0-9;]*m")


def run(keep: bool = False, color: str = "auto") -> int:
    """Build the example, review it, print what happened; 0 when it behaved as designed."""
    from ..render.verdict import colour_wanted

    folder = Path(tempfile.mkdtemp(prefix="bounded-review-demo-"))
    try:
        repo = build(folder)
        print(f"example repository: {repo} (branch feature, base main)")
        print(
            "change under review: add() now returns a + b + 1 and a helper `hlp` is added; "
            "test_legacy_round already failed at the base"
        )
        argv = [sys.executable, "-m", "pytest", "--bounded-review", "--bounded-review-base=main"]
        print("$ " + " ".join(["pytest", *argv[3:]]), flush=True)
        # pytest writes to a pipe here: it colours by what this command's output is
        argv.append(f"--color={'yes' if colour_wanted(sys.stdout, color) else 'no'}")
        proc = subprocess.run(
            argv, cwd=repo, env=git.scrubbed_env(), capture_output=True, text=True, check=False
        )
        print(proc.stdout + proc.stderr, end="")
        shown = _SGR.sub("", proc.stdout)
        missing = _expectations(shown)
        print("demo: what the output above shows")
        for text, meaning in EXPECTED:
            print(f"  {'ok     ' if text in shown else 'MISSING'} {meaning}")
        for line in missing:
            print(f"demo: expected but not seen: {line}")
        print("demo: behaved as designed" if not missing else "demo: did not behave as designed")
        return 0 if not missing else 1
    finally:
        if keep:
            print(f"kept: {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
