"""``bounded-review lanes`` and ``bounded-review prompt`` against a real repository: what
would run and why, and the exact prompt, without dispatching anything."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import warmstart
from fakeagents import calls, install
from gitrepo import GitRepo

from pytest_boundedreview.lanes.prompt import builtin, contract

CONFIG = """\
[tool.bounded-review]
[[tool.bounded-review.lanes]]
name = "surgical"
lens = "correctness"
kind = "claude"
[[tool.bounded-review.lanes]]
name = "deep"
lens = "security"
kind = "codex"
prompt_file = "review/deep.md"
[[tool.bounded-review.lanes]]
name = "facts"
lens = "facts"
role = "scout"
kind = "gemini"
"""


@pytest.fixture
def project(repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    repo.commit({"pyproject.toml": CONFIG, "review/deep.md": "# Deep\n\nLook for leaks.\n"})
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.commit({"app.py": "x = 1\ny = 3\n"}, "change")
    bin_dir = tmp_path / "bin"
    install(bin_dir, "claude")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return repo


def bounded_review(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", *args, "--base", "main"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_lanes_shows_what_would_run_and_dispatches_nothing(
    project: GitRepo, tmp_path: Path
) -> None:
    before = project.user_state()
    out = bounded_review(project, "lanes")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("target pr (base main), tree:")
    assert lines[0].endswith("1 file(s), 2 changed line(s): small")
    assert "budget 1 lane(s), 1 at once, 0 repair loop(s)" in lines
    assert "lane surgical [correctness, verdict, claude]: would run" in lines
    assert f"  tool: {tmp_path / 'bin' / 'claude'} (2.1.332 (Claude Code))" in lines
    assert "  model: the tool's default, not verified against a live list" in lines
    assert (
        "lane deep [security, verdict, codex]: skipped - "
        "the security lens is not needed: a small target"
    ) in lines
    assert calls(tmp_path / "bin", "claude") == []  # --version and --help only
    assert project.user_state() == before
    assert not (project.path / ".bounded-review").exists()  # reads the state, creates none


def at_base(project: GitRepo, files: dict[str, str]) -> None:
    """Commit ``files`` as part of the base (the rules come from there), then change app.py
    again on top."""
    project.commit(files, "configure")
    project.git("branch", "--force", "main")
    project.commit({"app.py": "x = 1\ny = 4\n"}, "change")


def test_lanes_names_a_missing_tool(project: GitRepo) -> None:
    selection = "[tool.bounded-review.selection]\nsmall_lines = 0\n"
    at_base(project, {"pyproject.toml": CONFIG.replace("[[", selection + "[[", 1)})
    out = bounded_review(project, "lanes", "--risk", "strict")
    assert out.returncode == 0, out.stderr
    assert "lane deep [security, verdict, codex]: would run" in out.stdout
    assert "  tool: codex not found on PATH (the lane would be unverified)" in out.stdout


def test_a_configuration_error_exits_4(project: GitRepo) -> None:
    project.commit({"pyproject.toml": CONFIG.replace('kind = "codex"', 'kind = "kodex"')})
    out = bounded_review(project, "lanes")
    assert out.returncode == 4
    assert "kind" in out.stderr
    assert "kodex" in out.stderr


def test_an_unknown_base_names_the_commands_own_option(project: GitRepo) -> None:
    out = warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "lanes", "--base", "nosuchrev"],
        cwd=project.path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 4
    assert "base ref 'nosuchrev' (from the base option or the `base` setting)" in out.stderr
    assert "(bounded-review commands: --base REF)" in out.stderr


@pytest.mark.slow
def test_lanes_says_when_a_clean_run_would_settle_a_trivial_change(project: GitRepo) -> None:
    settle = "[tool.bounded-review.selection]\nsettle_trivial = true\n"
    at_base(project, {"pyproject.toml": CONFIG.replace("[[", settle + "[[", 1)})
    out = bounded_review(project, "lanes", "--risk", "economy")
    assert out.returncode == 0, out.stderr
    note = (
        "note: selection.settle_trivial: if the tests and checks come out clean, they settle "
        "this change and no lane runs"
    )
    assert note in out.stdout.splitlines()
    assert note not in bounded_review(project, "lanes", "--risk", "strict").stdout


def test_prompt_prints_the_packet_the_lens_prompt_and_the_contract(project: GitRepo) -> None:
    out = bounded_review(project, "prompt", "surgical")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# The review packet\n\n```json\n{")
    assert '"diff":"diff --git a/app.py b/app.py' in out.stdout
    assert builtin("correctness").rstrip() in out.stdout
    assert out.stdout.endswith(contract(tools=True))


def test_prompt_uses_the_lanes_prompt_file_from_the_snapshot(project: GitRepo) -> None:
    project.write("review/deep.md", "# Live edit, not committed\n")  # the snapshot has it
    out = bounded_review(project, "prompt", "deep", "--target", "pr")
    assert out.returncode == 0, out.stderr
    assert "# Deep\n\nLook for leaks.\n" in out.stdout
    assert builtin("security").rstrip() not in out.stdout


def test_prompt_refuses_an_unknown_lane(project: GitRepo) -> None:
    out = bounded_review(project, "prompt", "nobody")
    assert out.returncode == 4
    assert "no lane named 'nobody' (lanes: surgical, deep, facts)" in out.stderr


def test_prompt_shows_a_gemini_lane_its_escaped_text_and_the_nudge(project: GitRepo) -> None:
    project.commit({"app.py": "@decorator\ndef f(): ...\n"}, "decorated")
    out = bounded_review(project, "prompt", "facts")
    assert out.returncode == 0, out.stderr
    assert "\\@decorator" in out.stdout
    assert re.search(r"(?<!\\)@", out.stdout.split("\nReview as the text above")[0]) is None
    assert out.stdout.rstrip().endswith("quote code with a plain @.")
