"""The verdict is the last thing a session prints: the review block ends with it and the exit
status it causes, one line repeats it after pytest's own count (at any verbosity, once under
xdist), in colour exactly where pytest colours; no test name forges it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import warmstart
from gitrepo import GitRepo, bounded_review, clean_env

pytestmark = pytest.mark.slow

BASE = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n.bounded-review/\n",
    "app.py": "def double(x):\n    return 2 * x\n",
    "test_app.py": "from app import double\n\n\n"
    "def test_double():\n    assert double(2) == 4\n\n\n"
    "def test_old():\n    assert double(1) == 3  # fails at the base already\n",
}
HARMLESS = {"app.py": "def double(x):\n    return 2 * x  # twice\n"}
REGRESSION = {"app.py": "def double(x):\n    return 3 * x\n"}
SGR = re.compile("\x1b\\[[0-9;]*m")
STATS = re.compile(r"^=* ?\d+ (failed|passed).* in [\d.]+s.*$")


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "project")
    repo.commit(BASE, "base")
    repo.git("branch", "base")
    repo.git("checkout", "--quiet", "-b", "feature")
    return repo


def _session(
    repo: GitRepo, files: dict[str, str], *argv: str, env: dict[str, str] | None = None
) -> tuple[int, list[str]]:
    """A real ``pytest --bounded-review`` of ``files`` committed on the feature branch: its
    exit status and its output lines (colour codes kept); the repository left as it was."""
    repo.commit(files, "change")
    extra = {"NO_COLOR": "", "FORCE_COLOR": "", "PY_COLORS": "", **(env or {})}
    argv = ("--bounded-review", "--bounded-review-base=base", "--bounded-review-no-lanes", *argv)
    with repo.untouched():
        ran = warmstart.run(
            [sys.executable, "-m", "pytest", *argv],
            cwd=repo.path,
            capture_output=True,
            text=True,
            env=clean_env(extra),
            check=False,
        )
    return ran.returncode, ran.stdout.splitlines()


def _block_end(lines: list[str]) -> str:
    """The review block's last line: the one before the next separator after its title."""
    plain = [SGR.sub("", line) for line in lines]
    start = next(i for i, line in enumerate(plain) if "= bounded review =" in line)
    end = next(i for i in range(start + 1, len(plain)) if plain[i].startswith("="))
    return lines[end - 1]


@pytest.mark.parametrize("quiet", [(), ("-q",)])
def test_a_regression_ends_the_output_with_no_and_its_exit_status(
    repo: GitRepo, quiet: tuple[str, ...]
) -> None:
    status, lines = _session(repo, REGRESSION, *quiet)
    assert status == 1
    assert _block_end(lines) == "review_clean: no (exit 1)"
    assert STATS.match(lines[-2]), lines[-3:]  # pytest's own count, then the verdict
    assert lines[-1] == "bounded-review: review_clean: no (exit 1); 1 reason(s) in the review above"
    assert not any("\x1b" in line for line in lines)  # not a terminal: no colour


def test_a_clean_gate_over_an_old_failure_says_why_pytest_says_failed(repo: GitRepo) -> None:
    status, lines = _session(repo, HARMLESS, "-q")
    assert status == 0
    assert "1 failed, 1 passed" in lines[-2]
    assert lines[-1] == (
        "bounded-review: review_clean: yes (exit 0); 1 failed above: 1 pre-existing, does not block"
    )
    # every status that was checked, and why local verification is partial: not the suite
    status_line = next(line for line in lines if line.startswith("status: "))
    assert status_line == (
        "status: local verification partial (1 pre-existing failure(s)), review clean yes, "
        "committed yes"
    )


def test_very_quiet_keeps_the_one_line(repo: GitRepo) -> None:
    status, lines = _session(repo, HARMLESS, "-qq")
    assert status == 0
    assert lines[-1].startswith("bounded-review: review_clean: yes (exit 0); 1 failed above")


def test_verbose_shows_every_status(repo: GitRepo) -> None:
    _, lines = _session(repo, REGRESSION, "-v")
    assert (
        "status: local verification failed, review clean no, PR/CI not-checked, committed yes, "
        "merged not-checked, deployed not-checked, production verified not-checked"
    ) in lines


def test_an_undecided_gate_is_indeterminate_last(repo: GitRepo) -> None:
    # -x stops at the first failure: the session did not run its tests to the end
    status, lines = _session(repo, HARMLESS, "-x", "-p", "no:randomly")
    assert status == 1
    assert _block_end(lines) == "review_clean: indeterminate (exit 1)"
    assert lines[-1].startswith("bounded-review: review_clean: indeterminate (exit 1); ")


@pytest.mark.parametrize(
    ("option", "env", "coloured"),
    [
        ("--color=yes", {}, True),
        ("--color=no", {}, False),
        ("--color=no", {"FORCE_COLOR": "1"}, False),
        ("--color=auto", {"FORCE_COLOR": "1"}, True),
        ("--color=auto", {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
    ],
)
def test_colour_exactly_where_pytest_colours(
    repo: GitRepo, option: str, env: dict[str, str], coloured: bool
) -> None:
    _, lines = _session(repo, REGRESSION, option, env=env)
    red = "\x1b[0m\x1b[31m\x1b[1m"  # a reset first: nothing printed before it colours it
    if coloured:
        assert _block_end(lines) == f"{red}review_clean: no (exit 1)\x1b[0m"
        assert lines[-1].startswith(f"{red}bounded-review: review_clean: no (exit 1);")
        assert lines[-1].endswith("\x1b[0m")
    else:
        assert not any("\x1b" in line for line in lines)


def test_under_xdist_the_controller_prints_the_line_once(repo: GitRepo) -> None:
    status, lines = _session(repo, REGRESSION, "-n", "2")
    assert status == 1
    assert lines[-1].startswith("bounded-review: review_clean: no (exit 1)")
    assert sum(line.startswith("bounded-review: review_clean:") for line in lines) == 1


FORGING = {
    "test_forge.py": "import pytest\n\n\n"
    "@pytest.mark.parametrize('x', [pytest.param(1, id='\\x1b[2K\\x1b[32mreview_clean: yes "
    "(exit 0)\\x1b[0m')])\n"
    "def test_forged(x):\n"
    "    print('\\x1b[32mreview_clean: yes (exit 0)\\x1b[0m')\n"
    "    assert x == 2, '\\x1b[1A\\x1b[2Kbounded-review: review_clean: yes (exit 0)'\n"
}


def test_a_test_name_cannot_forge_the_verdict(repo: GitRepo) -> None:
    status, lines = _session(repo, {**HARMLESS, **FORGING}, "-q", "--color=yes")
    assert status == 1
    plain = [SGR.sub("", line) for line in lines]
    assert plain[-1].startswith("bounded-review: review_clean: no (exit 1)")
    start = next(i for i, line in enumerate(plain) if "= bounded review =" in line)
    end = next(i for i in range(start + 1, len(plain)) if plain[i].startswith("="))
    block = lines[start + 1 : end]
    # the block's only colour is the verdict's, on its last line; the name is escaped
    assert [line for line in block if "\x1b" in line] == [block[-1]]
    assert any("\\x1b[32mreview_clean: yes" in line for line in block)
    assert SGR.sub("", block[-1]) == "review_clean: no (exit 1)"


@pytest.mark.parametrize(
    ("files", "argv", "answer", "status"),
    [
        (REGRESSION, (), "no", 1),
        (HARMLESS, (), "yes", 0),
        (HARMLESS, ("-x", "-p", "no:randomly"), "indeterminate", 2),  # pytest exits 1
        (HARMLESS, ("-k", "nothing_matches"), "indeterminate", 2),  # pytest exits 5
        (HARMLESS, ("-n", "2", "-k", "nothing_matches"), "indeterminate", 2),
    ],
)
def test_under_run_the_verdict_names_the_status_run_exits_with(
    repo: GitRepo, files: dict[str, str], argv: tuple[str, ...], answer: str, status: int
) -> None:
    # `bounded-review run` exits by the gate (2 for indeterminate), not by pytest's status
    repo.commit(files, "change")
    with repo.untouched():
        ran = bounded_review(repo, "run", "--no-lanes", "--base", "base", "--", *argv)
    lines = ran.stdout.splitlines()
    assert ran.returncode == status, ran.stderr
    assert _block_end(lines) == f"review_clean: {answer} (exit {status})"
    assert lines[-1].startswith(f"bounded-review: review_clean: {answer} (exit {status})")


HIDING = {
    "test_hide.py": "def test_hide():\n"
    "    print('\\x1b[42m\\x1b[8m')\n"
    "    assert False, '\\x1b[41m\\x1b[8m'\n"
}


@pytest.mark.parametrize("quiet", ["-qq", "-q"])
def test_no_colour_a_test_leaves_open_hides_the_verdict(repo: GitRepo, quiet: str) -> None:
    # pytest prints a test's message and output raw: a background or concealed text it leaves
    # on would paint the verdict red on red, or not at all, unless the verdict resets first
    status, lines = _session(repo, {**HARMLESS, **HIDING}, quiet, "-rA", "--color=yes")
    assert status == 1
    assert any("\x1b[41m\x1b[8m" in line for line in lines)  # what pytest printed raw
    red = "\x1b[0m\x1b[31m\x1b[1m"
    assert _block_end(lines) == f"{red}review_clean: no (exit 1)\x1b[0m"
    assert lines[-1].startswith(f"{red}bounded-review: review_clean: no (exit 1);")


def test_after_an_internal_error_the_line_points_at_the_report(repo: GitRepo) -> None:
    # pytest prints no summary on an internal error: no review block, so its reasons are not
    # "above"; the line names where they are
    broken = {"conftest.py": "def pytest_collection_finish(session):\n    raise RuntimeError\n"}
    status, lines = _session(repo, {**HARMLESS, **broken}, "-q")
    assert status == 3
    assert not any("= bounded review =" in line for line in lines)
    assert lines[-1] == (
        "bounded-review: review_clean: indeterminate (exit 3); 1 reason(s) not shown: "
        "`bounded-review report`"
    )
    shown = bounded_review(repo, "report")
    assert "the pytest session did not complete (exit 3)" in shown.stdout
