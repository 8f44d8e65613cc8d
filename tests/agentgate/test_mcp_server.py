"""``bounded-review mcp`` on real repositories and real review sessions, spoken to by the MCP
SDK's own client over stdio: four read-only tools, a yes only for a report of exactly the
working tree, an edit after the review is not reviewed, a broken report or loop state is a
tool error (never clean), and the user's status, index, stash and refs stay as they were.
Without the SDK the package imports and the other commands run; `mcp` exits 4 naming the
install."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

import anyio
import pytest
import warmstart
from agenthooks import BROKEN, FIXED, make_repo, review
from gitrepo import GitRepo, clean_env
from mcp import ClientSession, StdioServerParameters, stdio_client  # the `mcp` extra, in `dev`

from pytest_boundedreview.agentgate import mcpserver

OFF_BY_ONE = "def add(a, b):\n    return a + b + 1\n"
TOOLS = {"gate", "report", "next_action", "loop_status"}
REVIEW = "pytest --bounded-review"
SAMPLE_LANE = json.dumps([sys.executable, "-m", "pytest_boundedreview.samplelane"])


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path / "repo")


class Answer:
    """One tool call's result: its structured answer, or the error text."""

    def __init__(self, error: bool, text: str, data: dict[str, Any] | None) -> None:
        self.error = error
        self.text = text
        self.data = data or {}

    def __getitem__(self, key: str) -> Any:
        assert not self.error, self.text
        return self.data[key]


Call = tuple[str, dict[str, Any]]
Step = Call | Callable[[], object]  # a tool call, or something done between two calls

ROOT = Path(__file__).resolve().parents[2]


def ask(cwd: Path, steps: Sequence[Step], errlog: Path) -> tuple[list[Any], list[Answer]]:
    """Start the server in ``cwd``, list its tools, then take ``steps`` in order with one
    server, through the SDK's stdio client and session: the answers of the calls."""

    async def talk() -> tuple[list[Any], list[Answer]]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "pytest_boundedreview", "mcp"],
            env=clean_env(),
            cwd=cwd,
        )
        with anyio.fail_after(120), errlog.open("a") as log:
            async with stdio_client(params, errlog=log) as streams, ClientSession(*streams) as s:
                await s.initialize()
                tools = (await s.list_tools()).tools
                answers = []
                for step in steps:
                    if callable(step):
                        step()
                        continue
                    result = await s.call_tool(*step)
                    text = "\n".join(getattr(c, "text", "") for c in result.content)
                    answers.append(Answer(result.is_error, text, result.structured_content))
                return tools, answers

    return anyio.run(talk)


def call(repo: GitRepo, tmp_path: Path, *steps: Step) -> list[Answer]:
    return ask(repo.path, steps, tmp_path / "server.log")[1]


@pytest.mark.slow
def test_list_tools_names_exactly_the_four_read_only_tools(repo: GitRepo, tmp_path: Path) -> None:
    tools, _ = ask(repo.path, [], tmp_path / "server.log")
    assert {tool.name for tool in tools} == TOOLS
    assert len(tools) == len(TOOLS)
    for tool in tools:
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert set(tool.input_schema["properties"]) == {"repository"}
        assert not tool.input_schema.get("required")


@pytest.mark.slow
def test_gate_is_yes_on_a_reviewed_clean_tree(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", FIXED + "\n# a harmless comment\n")
    report = review(repo)
    assert report["gate"]["review_clean"] == "yes"
    with repo.untouched():
        gate, action, shown = call(
            repo, tmp_path, ("gate", {}), ("next_action", {}), ("report", {})
        )
    assert gate["gate"] == "yes"
    assert gate["tree"] == report["target"]["revision"] == gate["report_revision"]
    assert gate["nothing_to_review"] is False
    assert action["next_action"] == report["next_action"]
    assert action["command"] is None
    assert action["blockers"] == []
    assert shown["of_this_tree"] is True
    assert shown["report"]["target"] == report["target"]
    assert shown["report"]["gate"] == report["gate"]


@pytest.mark.slow
def test_a_harmless_change_of_the_same_content_stays_clean(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", FIXED + "\n# a harmless comment\n")
    review(repo)
    repo.write("app.py", FIXED + "\n# a harmless comment\n")  # rewritten, same bytes
    answers = call(
        repo,
        tmp_path,
        ("gate", {}),
        lambda: repo.git("add", "app.py"),  # staged: the same content
        ("gate", {}),
        lambda: repo.git("commit", "--quiet", "-m", "the reviewed content, committed"),
        ("gate", {}),
        lambda: repo.write("app.py", BROKEN),  # and the server sees an edit at once
        ("gate", {}),
    )
    assert [answer["gate"] for answer in answers] == ["yes", "yes", "yes", "not-reviewed"]


@pytest.mark.slow
def test_an_edit_after_the_review_is_not_reviewed(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", FIXED + "\n# reviewed\n")
    report = review(repo)
    assert report["gate"]["review_clean"] == "yes"
    repo.write("app.py", BROKEN)  # edited after the clean review
    with repo.untouched():
        gate, action, shown = call(
            repo, tmp_path, ("gate", {}), ("next_action", {}), ("report", {})
        )
    assert gate["gate"] == "not-reviewed"
    assert gate["report_revision"] == report["target"]["revision"] != gate["tree"]
    assert "not of this tree" in gate["reasons"][0]
    assert action["command"] == REVIEW
    assert action["next_action"].startswith(f"run `{REVIEW}`")
    assert shown["of_this_tree"] is False  # the old report is shown, and said to be old


@pytest.mark.slow
def test_a_review_against_another_base_is_not_a_review_of_this_tree(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.commit({"app.py": FIXED + "# a change no review has seen\n"}, "the change, committed")
    warmstart.run(  # an empty diff against HEAD: gate yes, of this very tree
        [sys.executable, "-m", "pytest", "-q", "--bounded-review", "--bounded-review-base=HEAD"],
        cwd=repo.path,
        env=clean_env(),
        capture_output=True,
        check=False,
    )
    (gate,) = call(repo, tmp_path, ("gate", {}))
    assert gate["report_revision"] == gate["tree"]
    assert gate["gate"] == "not-reviewed"
    assert "not the base main" in gate["reasons"][0]


@pytest.mark.slow
def test_an_untracked_file_added_after_the_review_is_not_reviewed(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write("app.py", FIXED + "\n# reviewed\n")
    review(repo)
    repo.write("extra.py", "import os\nos.remove('x')\n")  # never staged: still in the tree
    (gate,) = call(repo, tmp_path, ("gate", {}))
    assert gate["gate"] == "not-reviewed"


@pytest.mark.slow
def test_a_report_that_is_not_clean_gives_its_blockers(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", BROKEN)
    report = review(repo)
    assert report["gate"]["review_clean"] == "no"
    gate, action = call(repo, tmp_path, ("gate", {}), ("next_action", {}))
    assert gate["gate"] == "no"
    assert gate["reasons"] == report["gate"]["reasons"]
    assert action["next_action"] == report["next_action"]
    assert action["command"] == REVIEW
    assert any(line.startswith("test test_app.py::test_add: ") for line in action["blockers"])


@pytest.mark.slow
def test_no_report_is_not_reviewed_and_the_report_tool_says_what_to_run(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write("app.py", BROKEN)
    gate, action, shown = call(repo, tmp_path, ("gate", {}), ("next_action", {}), ("report", {}))
    assert gate["gate"] == "not-reviewed"
    assert gate["report_revision"] is None
    assert action["command"] == REVIEW
    assert shown.error
    assert "no report at" in shown.text
    assert f"run {REVIEW} first" in shown.text


@pytest.mark.slow
def test_nothing_to_review_on_the_base_tree(repo: GitRepo, tmp_path: Path) -> None:
    gate, action = call(repo, tmp_path, ("gate", {}), ("next_action", {}))
    assert gate["gate"] == "not-reviewed"  # never "yes" without a report
    assert gate["nothing_to_review"] is True
    assert action["command"] is None
    assert action["next_action"].startswith("none: the working tree is the base's tree")


DAMAGES = {
    "not-json": lambda text: "{torn",
    "not-a-report": lambda text: json.dumps({**json.loads(text), "gate": {"review_clean": "x"}}),
    "an-unknown-key": lambda text: json.dumps({**json.loads(text), "surprise": True}),
    "truncated": lambda text: json.dumps(json.loads(text))[:-40],
}


@pytest.mark.slow
def test_a_corrupt_report_is_an_error_not_clean(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", FIXED + "\n# reviewed\n")
    assert review(repo)["gate"]["review_clean"] == "yes"
    path = repo.path / ".bounded-review" / "report.json"
    good = path.read_text()
    steps: list[Step] = [("gate", {})]
    for damage in DAMAGES.values():  # compact JSON: not taken for a report the tool wrote
        steps.append(lambda damage=damage: path.write_text(damage(good)))
        steps += [(name, {}) for name in sorted(TOOLS)]
    steps += [lambda: path.write_text(good), ("gate", {})]
    answers = call(repo, tmp_path, *steps)
    assert answers[0]["gate"] == answers[-1]["gate"] == "yes"
    damaged = answers[1:-1]
    assert len(damaged) == len(DAMAGES) * len(TOOLS)
    for answer in damaged:
        assert answer.error, answer.data
        assert f"{path} is not a valid bounded-review report" in answer.text
        assert "run pytest --bounded-review again" in answer.text


@pytest.mark.slow
def test_loop_status_shows_the_loop_its_rounds_and_ceilings(repo: GitRepo, tmp_path: Path) -> None:
    lane = '[[tool.bounded-review.lanes]]\nname = "sample"\nlens = "correctness"\n'
    lane += f"command = {SAMPLE_LANE}\n"
    repo.write("pyproject.toml", (repo.path / "pyproject.toml").read_text() + lane)
    repo.git("add", "pyproject.toml")
    repo.git("commit", "--quiet", "-m", "a sample reviewer lane")
    repo.git("branch", "--force", "main")  # the lane is the base's too
    repo.write("app.py", OFF_BY_ONE)
    report = review(repo)
    assert report["loop"]["loop_id"], report["loop"]
    state = repo.path / ".bounded-review" / "loops" / report["loop"]["loop_id"] / "state.json"
    with repo.untouched():
        status, broken = call(
            repo,
            tmp_path,
            ("loop_status", {}),
            lambda: state.write_text("{torn"),
            ("loop_status", {}),
        )
    assert status["report_loop_id"] == report["loop"]["loop_id"]
    assert status["state_dir"] == str(state.parents[2])
    (loop,) = status["loops"]
    assert loop["loop_id"] == report["loop"]["loop_id"]
    assert loop["status"] == report["loop"]["status"]
    assert loop["round"] == report["loop"]["round"] == len(loop["rounds"])
    assert loop["revision"] == report["target"]["revision"]
    ceilings = loop["ceilings"]
    assert ceilings["max_repair_loops"] == report["budget"]["max_repair_loops"]
    assert ceilings["repair_loops_used"] == report["loop"]["repair_loops_used"]
    assert ceilings["max_rounds"] == ceilings["max_repair_loops"] + 1
    assert [lane["name"] for lane in loop["rounds"][0]["lanes"]] == ["sample"]
    assert broken.error
    assert str(state) in broken.text
    assert f"bounded-review reset --loop-id {loop['loop_id']}" in broken.text
    assert state.read_text() == "{torn"  # read, never repaired


@pytest.mark.slow
def test_loop_status_without_loops(repo: GitRepo, tmp_path: Path) -> None:
    (status,) = call(repo, tmp_path, ("loop_status", {}))
    assert status["loops"] == []
    assert status["report_loop_id"] is None


@pytest.mark.slow
def test_the_repository_argument_and_its_errors(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", FIXED + "\n# reviewed\n")
    review(repo)
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    calls = [
        ("gate", {"repository": str(repo.path)}),
        ("gate", {"repository": "../../repo"}),
        ("gate", {"repository": str(outside)}),
        ("gate", {"repository": str(tmp_path / "missing")}),
        ("gate", {}),
    ]
    absolute, relative, not_a_repo, missing, here = ask(outside / "sub", calls, tmp_path / "log")[1]
    assert absolute["gate"] == "yes"
    assert absolute["repository"] == str(repo.path)
    assert not_a_repo.error
    assert f"{outside} is not inside a git work tree" in not_a_repo.text
    assert missing.error
    assert f"{tmp_path / 'missing'} is not a folder" in missing.text
    assert here.error  # the server's folder is not in a repository
    assert relative["repository"] == str(repo.path)
    (from_inside,) = ask(repo.path, [("gate", {"repository": "."})], tmp_path / "log")[1]
    assert from_inside["gate"] == "yes"


@pytest.mark.slow
def test_the_users_status_index_and_stash_are_unchanged(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", FIXED + "\n# stashed\n")
    repo.git("stash", "push", "--quiet")
    repo.write("app.py", FIXED + "\n# staged\n")
    repo.git("add", "app.py")
    repo.write("app.py", FIXED + "\n# staged\n# and unstaged\n")
    repo.write("notes.txt", "untracked\n")
    review(repo)
    before = repo.user_state()
    answers = call(repo, tmp_path, *[(name, {}) for name in sorted(TOOLS)])
    assert repo.user_state() == before
    assert not any(answer.error for answer in answers), [a.text for a in answers]
    assert answers[0]["gate"] == "yes"  # gate: the tree with the unstaged and untracked files


# Without the SDK: a folder holding an `mcp` package that cannot be imported, first on the path.
BROKEN_MCP = 'raise ImportError("mcp is made unimportable here")\n'


def without_mcp(tmp_path: Path) -> dict[str, str]:
    shim = tmp_path / "shim"
    (shim / "mcp").mkdir(parents=True)
    (shim / "mcp" / "__init__.py").write_text(BROKEN_MCP)
    env = clean_env()
    env["PYTHONPATH"] = ":".join(filter(None, [str(shim), env.get("PYTHONPATH", "")]))
    return env


def test_without_the_sdk_the_package_and_the_cli_still_work(tmp_path: Path) -> None:
    env = without_mcp(tmp_path)
    code = (
        "import sys\n"
        "try:\n    import mcp\nexcept ImportError:\n    pass\nelse:\n    raise SystemExit(9)\n"
        "import pytest_boundedreview.plugin\n"
        "from pytest_boundedreview.cli import main\n"
        "assert main(['--help']) == 0\n"
        "assert main(['mcp', '--help']) == 0\n"
        "assert 'mcp' not in sys.modules, sorted(m for m in sys.modules if 'mcp' in m)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    helped = warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert helped.returncode == 0, helped.stderr
    assert "mcp" in helped.stdout


def test_without_the_sdk_mcp_exits_4_naming_the_install(tmp_path: Path) -> None:
    done = warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "mcp"],
        env=without_mcp(tmp_path),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 4, done.stderr
    assert f"-m pip install '{mcpserver.SDK}'" in done.stderr
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert extras["mcp"] == [mcpserver.SDK]
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.slow
def test_the_engine_does_not_import_the_sdk(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "import pytest_boundedreview.plugin\n"
        "from pytest_boundedreview.cli import main\n"
        "assert main(['--help']) == 0\n"
        "assert 'mcp' not in sys.modules\n"
        "import mcp\n"  # installed here: the check above is not vacuous
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=clean_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_the_server_ends_when_its_client_closes_stdin(repo: GitRepo) -> None:
    done = warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "mcp"],
        cwd=repo.path,
        env=clean_env(),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


@pytest.mark.slow
def test_gate_counts_only_the_whole_review(repo: GitRepo, tmp_path: Path) -> None:
    """A clean report an option made less than the rules ask (here written as a session
    would write one with --bounded-review-no-lanes where lanes are configured) is no review
    of the tree, as for the commit gate and the stop hook."""
    repo.write("app.py", FIXED + "\n# a harmless comment\n")
    review(repo)
    path = repo.path / ".bounded-review" / "report.json"
    document = json.loads(path.read_text())
    reduced = {
        "key": "no_lanes",
        "option": "--bounded-review-no-lanes",
        "configured": "false",
        "used": "true",
        "why": "no reviewer lane ran: the deterministic gate only",
    }
    document["invocation"]["reduced"] = [reduced]
    path.write_text(json.dumps(document, indent=2))
    (gate,) = call(repo, tmp_path, ("gate", {}))
    assert gate["gate"] == "not-reviewed"
    (reason,) = gate["reasons"]
    assert "--bounded-review-no-lanes=true where the rules give false" in reason
    assert reason.endswith("; run pytest --bounded-review")
