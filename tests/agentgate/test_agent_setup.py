"""``bounded-review init --agent NAME``: each agent's hooks merged into its project settings
file and the skill written, in real repositories, by the real command in a new process.

The expected entries are written out here, apart from the code: they are the shapes checked
against the installed agents (tests/data/agents/README.md), so a change to what init writes
fails here first.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import warmstart
from gitrepo import GitRepo

from pytest_boundedreview.agentgate.agentsetup import skill_text

DATA = Path(__file__).resolve().parents[1] / "data" / "agents"
SKILLS = (".claude/skills/bounded-review/SKILL.md", ".agents/skills/bounded-review/SKILL.md")


def _claude_like(agent: str) -> dict[str, Any]:
    return {
        event: {
            "type": "command",
            "command": f"bounded-review hook {kind} --agent {agent}",
            "timeout": 30,
        }
        for event, kind in (("UserPromptSubmit", "start"), ("Stop", "stop"))
    }


def _copilot(kind: str) -> dict[str, Any]:
    command = f"bounded-review hook {kind} --agent copilot"
    return {"type": "command", "bash": command, "powershell": command, "timeoutSec": 30}


def _gemini(kind: str) -> dict[str, Any]:
    command = f"bounded-review hook {kind} --agent gemini"
    name = f"bounded-review-{kind}"
    return {"name": name, "type": "command", "command": command, "timeout": 30000}  # ms


# agent: (settings file, handlers grouped in {"hooks": [...]}, {event: handler}, version)
EXPECTED: dict[str, tuple[str, bool, dict[str, Any], int | None]] = {
    "claude": (".claude/settings.json", True, _claude_like("claude"), None),
    "codex": (".codex/hooks.json", True, _claude_like("codex"), None),
    "gemini": (
        ".gemini/settings.json",
        True,
        {"BeforeAgent": _gemini("start"), "AfterAgent": _gemini("stop")},
        None,
    ),
    "cursor": (
        ".cursor/hooks.json",
        False,
        {
            "beforeSubmitPrompt": {"command": "bounded-review hook start --agent cursor"},
            "stop": {"command": "bounded-review hook stop --agent cursor"},
        },
        1,
    ),
    "copilot": (
        ".github/hooks/bounded-review.json",
        False,
        {"userPromptSubmitted": _copilot("start"), "agentStop": _copilot("stop")},
        1,
    ),
}
AGENTS = sorted(EXPECTED)


def item(agent: str, event: str) -> dict[str, Any]:
    """What init appends to the event's list."""
    _, grouped, handlers, _ = EXPECTED[agent]
    return {"hooks": [handlers[event]]} if grouped else handlers[event]


def fresh(agent: str) -> dict[str, Any]:
    _, _, handlers, version = EXPECTED[agent]
    data: dict[str, Any] = {} if version is None else {"version": version}
    data["hooks"] = {event: [item(agent, event)] for event in handlers}
    return data


def init(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(repo.path.parent)}
    if "PYTHONPATH" in os.environ:  # the package under test, where it is not installed
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "init", *args],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def settings(repo: GitRepo, agent: str) -> Path:
    return repo.path / EXPECTED[agent][0]


def git_state(repo: GitRepo) -> tuple[bytes, str, str]:
    """The user's index bytes, stash and refs: init never touches them."""
    _, index, stash, refs = repo.user_state()
    return index, stash, refs


def added_by(diff: str, label: str) -> str:
    """The text a unified diff gives a new file ``label``."""
    section = diff.split(f"+++ b/{label}\n", 1)[1].split("\n--- ", 1)[0]
    return "".join(line[1:] + "\n" for line in section.splitlines() if line.startswith("+"))


@pytest.mark.slow
@pytest.mark.parametrize("agent", AGENTS)
def test_the_proposal_is_the_diff_of_what_write_writes(repo: GitRepo, agent: str) -> None:
    before = repo.user_state()
    shown = init(repo, "--agent", agent)
    assert shown.returncode == 0, shown.stderr
    label = EXPECTED[agent][0]
    assert shown.stdout.startswith(f"--- /dev/null\n+++ b/{label}\n")
    assert f"run `bounded-review init --agent {agent} --write`" in shown.stdout
    assert repo.user_state() == before  # a proposal writes nothing
    written = init(repo, "--agent", agent, "--write")
    assert written.returncode == 0, written.stderr
    for path in (label, *SKILLS):
        assert added_by(shown.stdout, path) == (repo.path / path).read_text(), path
        assert f"wrote {path}" in written.stdout


@pytest.mark.slow
@pytest.mark.parametrize("agent", AGENTS)
def test_write_into_a_repository_with_no_settings(repo: GitRepo, agent: str) -> None:
    state = git_state(repo)
    out = init(repo, "--agent", agent, "--write")
    assert out.returncode == 0, out.stderr
    path = settings(repo, agent)
    assert json.loads(path.read_text()) == fresh(agent)
    assert path.read_text().startswith('{\n  "')  # two spaces, like the agents' own examples
    for handler in EXPECTED[agent][2].values():
        assert f"runs `{handler.get('command') or handler['bash']}`" in out.stdout
    assert git_state(repo) == state
    untracked = repo.git("status", "--porcelain", "--untracked-files=all").splitlines()
    assert sorted(untracked) == sorted(f"?? {p}" for p in (EXPECTED[agent][0], *SKILLS))


def _existing(agent: str) -> dict[str, Any]:
    """A settings file with other keys, other hooks on our events and other events."""
    _, grouped, handlers, version = EXPECTED[agent]
    stop = list(handlers)[1]
    other = {"type": "command", "command": "./scripts/notify.sh --done"}
    mine = {"type": "command", "command": "echo ünïcode"}
    elsewhere = {"gemini": "BeforeTool", "cursor": "afterFileEdit", "copilot": "postToolUse"}
    hooks = {
        stop: [{"matcher": "", "hooks": [other]} if grouped else other],
        elsewhere.get(agent, "PreToolUse"): [{"hooks": [mine]} if grouped else mine],
    }
    data: dict[str, Any] = {} if version is None else {"version": version}
    if agent == "codex":
        return {"description": "project hooks", "hooks": hooks}  # Codex takes no other key
    first, last = {"model": "sonnet"}, {"permissions": {"allow": ["Bash(ls)"]}}
    if agent == "gemini":  # keys Gemini CLI knows, with the types it checks
        first, last = {"context": {"fileName": "AGENTS.md"}}, {"hooksConfig": {"enabled": True}}
    return {**data, **first, "hooks": hooks, **last}


@pytest.mark.slow
@pytest.mark.parametrize("indent", ["    ", "\t"])
@pytest.mark.parametrize("agent", AGENTS)
def test_an_existing_file_keeps_every_key_hook_and_its_layout(
    repo: GitRepo, agent: str, indent: str
) -> None:
    original = _existing(agent)
    text = json.dumps(original, indent=indent, ensure_ascii=False) + "\n"
    path = settings(repo, agent)
    repo.write(EXPECTED[agent][0], text)
    path.chmod(0o640)
    sibling = repo.write(".github/hooks/other.json", '{"version": 1}')
    out = init(repo, "--agent", agent, "--write")
    assert out.returncode == 0, out.stderr
    after_text = path.read_text()
    after = json.loads(after_text)
    expected = json.loads(text)
    start, stop = list(EXPECTED[agent][2])
    expected["hooks"][stop].append(item(agent, stop))
    expected["hooks"][start] = [item(agent, start)]
    assert after == expected
    assert list(after) == list(original)  # no key reordered
    assert list(after["hooks"]) == [stop, *list(original["hooks"])[1:], start]
    # The layout is the file's: only added lines, and lines that gained a comma.
    old, new = text.splitlines(), after_text.splitlines()
    removed = [line for line in difflib.ndiff(old, new) if line.startswith("- ")]
    assert all(line[2:] + "," in new for line in removed), removed
    assert "ünïcode" in after_text
    assert path.stat().st_mode & 0o777 == 0o640
    assert sibling.read_text() == '{"version": 1}'


def test_a_one_line_file_and_crlf_lines_stay_so(repo: GitRepo) -> None:
    repo.write(".claude/settings.json", '{"model": "opus"}')
    repo.write(".cursor/hooks.json", b'{\r\n  "version": 1,\r\n  "hooks": {}\r\n}\r\n')
    assert init(repo, "--agent", "claude", "--write").returncode == 0
    assert init(repo, "--agent", "cursor", "--write").returncode == 0
    claude = (repo.path / ".claude/settings.json").read_bytes()
    assert b"\n" not in claude  # still one line, with no final newline added
    assert json.loads(claude) == {"model": "opus", **fresh("claude")}
    cursor = (repo.path / ".cursor/hooks.json").read_bytes()
    assert b"\n" not in cursor.replace(b"\r\n", b"")
    assert json.loads(cursor) == fresh("cursor")


@pytest.mark.slow
@pytest.mark.parametrize("agent", AGENTS)
def test_a_second_run_changes_nothing(repo: GitRepo, agent: str) -> None:
    assert init(repo, "--agent", agent, "--write").returncode == 0
    files = {p: (repo.path / p).read_bytes() for p in (EXPECTED[agent][0], *SKILLS)}
    for args in (("--write",), ()):
        again = init(repo, "--agent", agent, *args)
        assert again.returncode == 0, again.stderr
        assert "nothing to change" in again.stdout
        assert "+++" not in again.stdout
    assert {p: (repo.path / p).read_bytes() for p in files} == files


@pytest.mark.slow
def test_only_the_missing_entry_is_added_and_a_tuned_entry_is_kept(repo: GitRepo) -> None:
    tuned = {"type": "command", "command": "bounded-review hook stop --agent claude"}
    tuned["timeout"] = 120  # the user's own timeout: still our command, kept as it is
    repo.write(".claude/settings.json", json.dumps({"hooks": {"Stop": [{"hooks": [tuned]}]}}))
    out = init(repo, "--agent", "claude", "--write")
    assert out.returncode == 0, out.stderr
    after = json.loads((repo.path / ".claude/settings.json").read_text())
    assert after["hooks"]["Stop"] == [{"hooks": [tuned]}]
    assert after["hooks"]["UserPromptSubmit"] == [item("claude", "UserPromptSubmit")]
    assert "wrote .claude/settings.json: UserPromptSubmit runs" in out.stdout
    assert "Stop runs" not in out.stdout


@pytest.mark.slow
def test_other_bounded_review_commands_outside_our_events_are_kept(repo: GitRepo) -> None:
    gate = {"type": "command", "command": "bounded-review gate --stage pre-commit"}
    repo.write(".codex/hooks.json", json.dumps({"hooks": {"PreToolUse": [{"hooks": [gate]}]}}))
    out = init(repo, "--agent", "codex", "--write")
    assert out.returncode == 0, out.stderr
    after = json.loads((repo.path / ".codex/hooks.json").read_text())
    assert after["hooks"]["PreToolUse"] == [{"hooks": [gate]}]
    assert after["hooks"]["Stop"] == [item("codex", "Stop")]


def _refused(repo: GitRepo, agent: str, *needles: str) -> str:
    """Run init --write; it must exit 4 naming each needle and write nothing."""
    files = {
        p: p.read_bytes() for p in repo.path.rglob("*") if p.is_file() and ".git" not in p.parts
    }
    out = init(repo, "--agent", agent, "--write")
    assert out.returncode == 4, out.stdout + out.stderr
    for needle in needles:
        assert needle in out.stderr
    assert "nothing was written" in out.stderr
    assert "Traceback" not in out.stderr
    now = {p: p.read_bytes() for p in repo.path.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert now == files
    return out.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("agent", "hooks", "where", "runs"),
    [
        pytest.param(
            "claude",
            {"Stop": [{"hooks": [{"type": "command", "command": "x"}, {"command": "y"}]}]}
            | {
                "SubagentStop": [{"hooks": [{"command": "bounded-review hook stop --agent codex"}]}]
            },
            "hooks.SubagentStop[0].hooks[0]",
            "bounded-review hook stop --agent codex",
            id="our-hook-under-another-event",
        ),
        pytest.param(
            "claude",
            {"Stop": [{"hooks": [{"type": "command", "command": "bounded-review gate"}]}]},
            "hooks.Stop[0].hooks[0]",
            "bounded-review gate",
            id="another-bounded-review-command-on-our-event",
        ),
        pytest.param(
            "codex",
            {"Stop": [{"hooks": [{"command": "bounded-review hook stop --agent claude"}]}]},
            "hooks.Stop[0].hooks[0]",
            "bounded-review hook stop --agent claude",
            id="another-agent's-protocol",
        ),
        pytest.param(
            "gemini",
            {
                "AfterAgent": [
                    {
                        "hooks": [
                            {
                                "type": "command",
                                "command": "bash -c 'bounded-review hook stop --agent gemini'",
                            }
                        ]
                    }
                ]
            },
            "hooks.AfterAgent[0].hooks[0]",
            "bash -c 'bounded-review hook stop --agent gemini'",
            id="our-command-wrapped",
        ),
        pytest.param(
            "copilot",
            {
                "agentStop": [
                    {"type": "command", "bash": "bounded-review hook stop --agent copilot --x"}
                ]
            },
            "hooks.agentStop[0]",
            "bounded-review hook stop --agent copilot --x",
            id="flat-layout",
        ),
        pytest.param(
            "cursor",
            {"stop": [{"type": "prompt", "command": "bounded-review hook stop --agent cursor"}]},
            "hooks.stop[0]",
            "bounded-review hook stop --agent cursor",
            id="our-command-as-another-hook-type",
        ),
    ],
)
def test_an_entry_init_did_not_write_is_refused(
    repo: GitRepo, agent: str, hooks: dict[str, Any], where: str, runs: str
) -> None:
    version = EXPECTED[agent][3]
    data = ({"version": version} if version else {}) | {"hooks": hooks}
    repo.write(EXPECTED[agent][0], json.dumps(data, indent=2))
    line = next(
        n for n, text in enumerate(json.dumps(data, indent=2).splitlines(), 1) if runs in text
    )
    ours = EXPECTED[agent][2][list(EXPECTED[agent][2])[1]]  # the stop event's handler
    fix = f"or make it run exactly `{ours.get('command') or ours['bash']}`"
    if where.startswith("hooks.SubagentStop"):
        fix = "remove it (no bounded-review hook belongs under SubagentStop)"
    _refused(
        repo,
        agent,
        f"{EXPECTED[agent][0]}: {where} (line {line}) runs `{runs}`",
        "an entry `bounded-review init` did not write",
        fix,
    )
    assert not (repo.path / SKILLS[0]).exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("agent", "text", "needles"),
    [
        ("claude", '{\n  "model": "x",\n  "hooks": {},\n}\n', ["invalid JSON at line 4"]),
        (
            "gemini",
            '{\n  // project settings\n  "hooks": {}\n}\n',
            ["invalid JSON at line 2", "(comments are not JSON)"],
        ),
        ("codex", '{"hooks": {}, "hooks": {}}', ["duplicate key 'hooks'"]),
        ("claude", '{"timeout": NaN}', ["NaN is not a JSON number"]),
        ("cursor", '[{"version": 1}]', ["holds a JSON list, not an object"]),
        ("copilot", b'{"version": 1, "x": "\xff"}', ["not UTF-8 text"]),
        ("claude", '{"hooks": []}', ["`hooks` is not an object"]),
        ("codex", '{"hooks": {"Stop": {}}}', ["`hooks.Stop` is not a list"]),
        ("copilot", '{"version": 2, "hooks": {}}', ["`version` is 2; init writes version 1"]),
    ],
)
def test_a_file_init_cannot_rewrite_is_refused_with_its_line(
    repo: GitRepo, agent: str, text: str | bytes, needles: list[str]
) -> None:
    repo.write(EXPECTED[agent][0], text)
    err = _refused(repo, agent, f"{EXPECTED[agent][0]}: ", *needles)
    if (
        "JSON" in needles[0] or "UTF-8" in needles[0] or "key" in needles[0]
    ):  # the entries to add by hand are shown
        shown = err.split("by hand:\n", 1)[1].rsplit("\n", 1)[0]
        assert json.loads(shown) == fresh(agent)


@pytest.mark.slow
def test_a_skill_that_is_not_ours_is_refused(repo: GitRepo) -> None:
    repo.write(SKILLS[1], "---\nname: bounded-review\ndescription: mine\n---\nmy own words\n")
    _refused(repo, "claude", f"{SKILLS[1]} differs from the skill", "move it aside")
    assert not (repo.path / ".claude/settings.json").exists()


@pytest.mark.slow
def test_a_settings_file_linked_outside_the_repository_is_refused(
    repo: GitRepo, tmp_path: Path
) -> None:
    outside = tmp_path / "user-settings.json"
    outside.write_text('{"model": "x"}')
    (repo.path / ".claude").mkdir()
    (repo.path / ".claude/settings.json").symlink_to(outside)
    _refused(repo, "claude", ".claude/settings.json leads outside the repository")
    assert outside.read_text() == '{"model": "x"}'


@pytest.mark.slow
def test_a_link_inside_the_repository_is_written_where_it_points(repo: GitRepo) -> None:
    repo.write("config/claude.json", '{"model": "x"}\n')
    (repo.path / ".claude").mkdir()
    (repo.path / ".claude/settings.json").symlink_to("../config/claude.json")
    assert init(repo, "--agent", "claude", "--write").returncode == 0
    assert (repo.path / ".claude/settings.json").is_symlink()
    assert json.loads((repo.path / "config/claude.json").read_text())["hooks"]


@pytest.mark.slow
def test_the_skill_is_the_packaged_text_in_both_places(repo: GitRepo) -> None:
    assert init(repo, "--agent", "codex", "--write").returncode == 0
    for path in SKILLS:
        assert (repo.path / path).read_bytes() == skill_text()
    text = skill_text().decode()
    head, body = text.split("---\n")[1:3]
    front = dict(line.split(": ", 1) for line in head.strip().splitlines())
    assert set(front) == {"name", "description"}  # portable: what every agent reads
    assert front["name"] == "bounded-review"
    assert 50 < len(front["description"]) <= 1024
    for step in ("pytest --bounded-review", "verified blocker", "scope", "ceiling", "next_action"):
        assert step in body, step


@pytest.mark.slow
def test_an_unknown_agent_is_a_usage_error(repo: GitRepo) -> None:
    out = init(repo, "--agent", "aider")
    assert out.returncode == 4
    assert "invalid choice: 'aider'" in out.stderr


@pytest.mark.slow
def test_the_written_gemini_settings_match_its_settings_schema(repo: GitRepo) -> None:
    """tests/data/agents: what Gemini CLI 0.61.0's settings validator accepts for `hooks`."""
    schema = json.loads((DATA / "gemini-0.61.0-settings-hooks.schema.json").read_text())
    events = schema["properties"]["hooks"]["properties"]
    assert {"BeforeAgent", "AfterAgent"} <= set(events)  # the events init writes exist
    repo.write(".gemini/settings.json", json.dumps(_existing("gemini")))
    assert init(repo, "--agent", "gemini", "--write").returncode == 0
    written = json.loads((repo.path / ".gemini/settings.json").read_text())
    jsonschema.validate(written, schema)
    timeout = events["AfterAgent"]["items"]["properties"]["hooks"]["items"]["properties"]
    assert timeout["timeout"] == {"type": "number"}
    with pytest.raises(jsonschema.ValidationError):  # the schema can fail
        jsonschema.validate({"hooks": {"AfterAgent": {"hooks": []}}}, schema)


@pytest.mark.slow
def test_a_layout_json_would_not_write_is_said_to_be_rewritten(repo: GitRepo) -> None:
    text = '{\n  "permissions": {"allow": ["Bash(ls)", "Read"]}\n}\n'
    repo.write(".claude/settings.json", text)
    out = init(repo, "--agent", "claude", "--write")
    assert out.returncode == 0, out.stderr
    assert "rewritten in one layout; every key and value kept" in out.stdout
    after = json.loads((repo.path / ".claude/settings.json").read_text())
    assert after == {**json.loads(text), **fresh("claude")}
    repo.write(".codex/hooks.json", '{\n  "description": "mine"\n}\n')  # json's own layout
    out = init(repo, "--agent", "codex", "--write")
    assert out.returncode == 0, out.stderr
    assert "rewritten in one layout" not in out.stdout
