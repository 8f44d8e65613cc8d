"""The GitHub Action (`action.yml`, composite): its shell steps run here with the `GITHUB_*`
variables a runner sets, on a real repository with a regression. The comment step talks to a
stand-in for `gh` that keeps the pull request's comments in a file and answers `gh api` (GET
with `--paginate --jq`, PATCH and POST with `-F body=@FILE`) as the real one does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = ROOT.parent / "shared" / "data" / "sarif-schema-2.1.0.json"
MARKER = "<!-- bounded-review -->"

FAKE_GH = r"""#!/usr/bin/env python3
import json, os, re, sys
state = os.environ["FAKE_GH_STATE"]
comments = json.load(open(state)) if os.path.exists(state) else []
args = sys.argv[1:]
with open(state + ".log", "a") as log:
    log.write(json.dumps(args) + "\n")
assert args[0] == "api", args
method = args[args.index("--method") + 1] if "--method" in args else "GET"
path = next(a for a in args[1:] if a.startswith("repos/"))
if method == "GET":
    if os.environ.get("FAKE_GH_FAIL"):
        print("gh: HTTP 403: Resource not accessible by integration", file=sys.stderr)
        sys.exit(1)
    query = args[args.index("--jq") + 1]
    prefix = re.search(r'startswith\("(.*?)"\)', query)[1]
    login = re.search(r'\.user\.login == "(.*?)"', query)[1]
    for comment in comments:
        if comment["user"]["login"] == login and comment["body"].startswith(prefix):
            print(comment["id"])
    sys.exit(0)
body = open(args[args.index("-F") + 1].split("=@", 1)[1]).read()
if method == "PATCH":
    number = int(path.rsplit("/", 1)[1])
    next(c for c in comments if c["id"] == number)["body"] = body
else:
    bot = {"login": "github-actions[bot]"}
    comments.append({"id": 100 + len(comments), "body": body, "user": bot})
json.dump(comments, open(state, "w"))
"""


def test_the_action_is_a_composite_with_the_promised_inputs() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {
        "python-version",
        "install",
        "pytest-args",
        "base",
        "upload-sarif",
        "comment",
        "github-token",
    }
    runs = [step["run"] for step in action["runs"]["steps"] if "run" in step]
    scripts = {word.strip('"').split("/")[-1] for run in runs for word in run.split()}
    assert {"review.sh", "comment.sh"} <= scripts
    assert all((ROOT / "action" / name).is_file() for name in ("review.sh", "comment.sh"))
    uses = [step.get("uses", "") for step in action["runs"]["steps"]]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)


@pytest.fixture
def workflow(repo: GitRepo, tmp_path: Path) -> tuple[GitRepo, dict[str, str]]:
    """A pull request that breaks a test, and the environment of a runner's step."""
    repo.commit({"app.py": "def double(x):\n    return 2 * x\n"}, "app")
    repo.commit(
        {
            "test_app.py": "from app import double\n\n\ndef test_double():\n"
            "    assert double(2) == 4\n"
        },
        "test",
    )
    repo.git("branch", "base")
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.commit({"app.py": "def double(x):\n    return 3 * x\n"}, "regression")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH)
    (bin_dir / "gh").chmod(0o755)
    path = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]])
    env = {
        **os.environ,
        "PATH": path,
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "owner/project",
        "GH_TOKEN": "not-a-token",
        "FAKE_GH_STATE": str(tmp_path / "comments.json"),
        "BOUNDED_REVIEW_BASE": "base",
        "BOUNDED_REVIEW_PYTEST_ARGS": "-p no:randomly -q",
        "TMPDIR": str(tmp_path),
    }
    return repo, env


def step(script: str, repo: GitRepo, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(ROOT / "action" / script)],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def outputs(env: dict[str, str]) -> dict[str, str]:
    lines = Path(env["GITHUB_OUTPUT"]).read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


@pytest.mark.slow
def test_the_review_step_writes_the_summary_the_sarif_log_and_its_status(
    workflow: tuple[GitRepo, dict[str, str]],
) -> None:
    repo, env = workflow
    with repo.untouched():
        done = step("review.sh", repo, env)
    assert done.returncode == 0, done.stdout + done.stderr  # the gate is the last step's
    sarif = ".bounded-review/bounded-review.sarif"  # no RUNNER_TEMP: the state folder
    assert outputs(env) == {"status": "1", "sarif": sarif}
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.startswith(MARKER)
    assert "test_app.py::test_double" in summary
    assert "::error file=test_app.py" in done.stdout  # the annotations
    log = json.loads((repo.path / sarif).read_text())
    if SARIF_SCHEMA.exists():
        jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_text())).validate(log)
    assert any(r["ruleId"] == "target-related-failure" for r in log["runs"][0]["results"])
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    last_step = action["runs"]["steps"][-1]
    assert last_step["if"] == "always()"  # whatever the upload and the comment did
    for status in ("0", "1", "2"):
        last = subprocess.run(["sh", "-c", last_step["run"]], env={"STATUS": status}, check=False)
        assert last.returncode == int(status)


@pytest.mark.slow
def test_the_comment_is_posted_once_then_edited_on_every_push(
    workflow: tuple[GitRepo, dict[str, str]],
) -> None:
    repo, env = workflow
    state = Path(env["FAKE_GH_STATE"])
    someone = {"login": "mallory"}
    state.write_text(
        json.dumps(
            [
                {"id": 1, "body": "a reviewer's own comment", "user": someone},
                {"id": 2, "body": MARKER + "\nnot ours", "user": someone},
            ]
        )
    )
    step("review.sh", repo, env)
    first = step("comment.sh", repo, env)
    assert first.returncode == 0, first.stderr
    comments: list[dict[str, Any]] = json.loads(state.read_text())
    assert [c["id"] for c in comments] == [1, 2, 102]
    assert comments[2]["body"].startswith(MARKER)
    assert "test_app.py::test_double" in comments[2]["body"]

    repo.commit({"app.py": "def double(x):\n    return 2 * x\n"}, "fix")  # the next push
    step("review.sh", repo, env)
    second = step("comment.sh", repo, env)
    assert "comment 102 updated" in second.stdout
    comments = json.loads(state.read_text())
    assert [c["id"] for c in comments] == [1, 2, 102]  # the same comment, edited
    assert comments[0]["body"] == "a reviewer's own comment"
    assert comments[1]["body"] == MARKER + "\nnot ours"  # someone else's, marker or not
    assert "test_app.py::test_double" not in comments[2]["body"]
    calls = [json.loads(line) for line in Path(f"{state}.log").read_text().splitlines()]
    assert [c[c.index("--method") + 1] for c in calls if "--method" in c] == ["POST", "PATCH"]


@pytest.mark.slow
def test_a_comment_that_cannot_be_listed_is_a_warning_not_a_second_comment(
    workflow: tuple[GitRepo, dict[str, str]],
) -> None:
    repo, env = workflow
    step("review.sh", repo, env)
    done = step("comment.sh", repo, {**env, "FAKE_GH_FAIL": "1"})
    assert done.returncode == 0  # the gate decides the job
    assert "::warning title=bounded review::cannot list the comments of #7" in done.stdout
    calls = Path(f"{env['FAKE_GH_STATE']}.log").read_text().splitlines()
    assert all("POST" not in call for call in calls)


def test_no_comment_outside_a_pull_request(workflow: tuple[GitRepo, dict[str, str]]) -> None:
    repo, env = workflow
    Path(env["GITHUB_EVENT_PATH"]).write_text(json.dumps({"ref": "refs/heads/main"}))
    done = step("comment.sh", repo, env)
    assert done.returncode == 0
    assert "not a pull request" in done.stdout
    assert not Path(f"{env['FAKE_GH_STATE']}.log").exists()


def test_the_comment_body_fits_a_pull_request_comment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`report --max-bytes` cuts the Markdown at a line, says how much is left out, and keeps
    the marker the comment is found by."""
    from reports import report

    from pytest_boundedreview import cli
    from pytest_boundedreview.models.plain import dumps

    path = tmp_path / "report.json"
    path.write_text(dumps(report(40, "x" * 200), indent=2))
    assert cli.main(["report", "--report", str(path), "--format", "markdown"]) == 1
    whole = capsys.readouterr().out
    assert (
        cli.main(["report", "--report", str(path), "--format", "markdown", "--max-bytes", "2000"])
        == 1
    )
    cut = capsys.readouterr().out
    assert len(whole.encode()) > 2000 >= len(cut.encode())  # the closing line counted
    assert cut.startswith(MARKER + "\n")
    assert "more line(s) omitted" in cut
    assert (
        cli.main(["report", "--report", str(path), "--format", "markdown", "--max-bytes", "9"]) == 4
    )
    assert "--max-bytes" in capsys.readouterr().err
