"""Agent lanes (claude, codex, gemini) against stand-ins of the real programs: the exact
invocation, what reaches the tool, and every failure a tool reports."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from fakeagents import HELP, PASS, VERSIONS, calls, install

from pytest_boundedreview.core.settings.tables import LaneConfig
from pytest_boundedreview.lanes.agents import agent, codex, geminihome
from pytest_boundedreview.lanes.agents.agents import AGENTS
from pytest_boundedreview.lanes.prompt import builtin, contract, full_prompt
from pytest_boundedreview.lanes.result import Attempt
from pytest_boundedreview.models.plain import validate_data

MARKER = "PACKET-TEXT-7f3a9c"
PACKET = json.dumps(
    {"schema": "bounded-review/packet/v1", "diff": f"+x = 1  # {MARKER}", "scout_findings": []}
).encode()
KINDS = ("claude", "codex", "gemini")

# The read-only and isolation flags each kind must pass (with their values where they take one).
READ_ONLY = {
    "claude": [
        ["--print"],
        ["--output-format", "json"],
        ["--tools", "Read,Grep,Glob"],
        ["--allowedTools", "Read,Grep,Glob"],
        ["--permission-mode", "dontAsk"],
        ["--no-session-persistence"],
        ["--strict-mcp-config"],
        ["--mcp-config", '{"mcpServers": {}}'],
        ["--safe-mode"],
        ["--setting-sources", "user"],
        ["--permission-prompts", "none"],
    ],
    "codex": [
        ["exec"],
        ["--sandbox", "read-only"],
        ["--ephemeral"],
        ["--skip-git-repo-check"],
        ["--ignore-user-config"],
        ["--ignore-rules"],
        ["--json"],
    ],
    "gemini": [
        ["--output-format", "json"],
        ["--approval-mode", "default"],
        ["--skip-trust"],
        ["--extensions", "none"],
    ],
}


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    monkeypatch.setenv("SECRET_TOKEN", "do-not-leak")
    agent._probe.cache_clear()  # each test has its own fakes
    codex._catalog.cache_clear()
    return folder


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "snapshot"
    folder.mkdir()
    (folder / "app.py").write_text("x = 1\n")
    return folder


def lane(kind: str, **extra: object) -> LaneConfig:
    return validate_data(
        LaneConfig,
        {"name": f"{kind}-lane", "lens": "correctness", "kind": kind, "timeout": 20, **extra},
    )


def run(kind: str, workdir: Path, **extra: object) -> Attempt:
    return agent.run_once(AGENTS[kind], lane(kind, **extra), PACKET, workdir)


def contains(argv: list[str], run_of: list[str]) -> bool:
    return any(argv[i : i + len(run_of)] == run_of for i in range(len(argv)))


@pytest.mark.parametrize("kind", KINDS)
def test_a_review_through_each_agent(kind: str, bin_dir: Path, workdir: Path) -> None:
    install(bin_dir, kind)
    attempt = run(kind, workdir, model="m-1")
    assert attempt.ok, attempt.detail
    assert attempt.result is not None
    assert attempt.result.verdict == "pass"
    assert attempt.tool == kind
    assert attempt.tool_version == VERSIONS[kind]
    (call,) = calls(bin_dir, kind)
    argv = call["argv"][1:]
    for flags in READ_ONLY[kind]:
        assert contains(argv, flags), (flags, argv)
    assert contains(argv, ["--model", "m-1"])
    assert not any(MARKER in arg for arg in argv)  # the packet never goes on the command line
    assert call["stdin"] == full_prompt(PACKET, builtin("correctness"))
    assert Path(call["cwd"]) == workdir
    assert "SECRET_TOKEN" not in call["env"]
    assert call["env"]["PATH"].startswith(str(bin_dir))


def test_claude_gets_the_strict_schema_and_its_usage_is_kept(bin_dir: Path, workdir: Path) -> None:
    install(bin_dir, "claude")
    attempt = run("claude", workdir)
    argv = calls(bin_dir, "claude")[0]["argv"]
    schema = json.loads(argv[argv.index("--json-schema") + 1])
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == set(schema["properties"])
    assert attempt.model == "claude-sonnet-4-5"  # the model that answered, from the envelope
    assert attempt.usage is not None
    assert dataclasses.asdict(attempt.usage) == {
        "input_tokens": 1003,
        "output_tokens": 50,
        "cost_usd": 0.0123,
        "turns": 2,
    }


def test_codex_gets_a_schema_file_and_answers_in_the_last_message_file(
    bin_dir: Path, workdir: Path
) -> None:
    install(bin_dir, "codex")
    attempt = run("codex", workdir)
    argv = calls(bin_dir, "codex")[0]["argv"]
    assert argv[-1] == "-"  # the prompt is read from stdin
    assert argv[argv.index("--cd") + 1] == str(workdir)
    schema_path = Path(argv[argv.index("--output-schema") + 1])
    assert schema_path.name == "lane-result.schema.json"
    assert not schema_path.exists()  # the private folder is gone after the attempt
    assert attempt.usage is not None
    assert dataclasses.asdict(attempt.usage) == {
        "input_tokens": 24763,
        "output_tokens": 122,
        "cost_usd": None,
        "turns": 1,
    }


def test_gemini_usage_and_model_come_from_its_stats(bin_dir: Path, workdir: Path) -> None:
    install(bin_dir, "gemini")
    attempt = run("gemini", workdir)
    assert attempt.model == "gemini-2.5-pro"
    assert attempt.usage is not None
    assert (attempt.usage.input_tokens, attempt.usage.output_tokens) == (900, 40)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "mode", "failure", "detail"),
    [
        ("claude", "is_error", "error", "claude reported a failure: subtype 'success'; is_error"),
        ("claude", "max_turns", "limit", "error_max_turns"),
        ("claude", "empty", "error", "claude printed nothing (exit 0)"),
        ("claude", "invalid", "error", "not a lane result"),
        ("claude", "hang", "limit", "timed out after 3s"),
        ("claude", "huge", "limit", "output over the cap"),
        ("codex", "turn_failed", "error", "codex reported turn.failed: usage limit"),
        ("codex", "no_turn", "error", "codex completed no turn (error event: stream disconn"),
        ("codex", "empty", "error", "codex completed no turn"),
        ("codex", "invalid", "error", "not a lane result"),
        ("codex", "hang", "limit", "timed out after 3s"),
        ("codex", "huge", "limit", "output over the cap"),
        ("gemini", "error", "error", "gemini reported a failure: quota exceeded"),
        ("gemini", "auth", "error", "gemini reported a failure: Please set an Auth method"),
        ("gemini", "turn_limit", "limit", "gemini reported a failure: Reached max session"),
        ("gemini", "empty", "error", "gemini printed nothing (exit 0)"),
        ("gemini", "invalid", "error", "invalid JSON"),
        ("gemini", "hang", "limit", "timed out after 3s"),
        ("gemini", "huge", "limit", "output over the cap"),
    ],
)
def test_every_reported_failure_is_a_failed_attempt(
    kind: str, mode: str, failure: str, detail: str, bin_dir: Path, workdir: Path
) -> None:
    install(bin_dir, kind, mode)
    attempt = run(kind, workdir, timeout=3)
    assert not attempt.ok
    assert attempt.failure == failure
    assert detail in attempt.detail
    assert attempt.tool == kind


@pytest.mark.parametrize("kind", KINDS)
def test_json_wrapped_in_prose_is_read(kind: str, bin_dir: Path, workdir: Path) -> None:
    install(bin_dir, kind, "prose")
    attempt = run(kind, workdir)
    assert attempt.ok, attempt.detail
    assert attempt.result is not None
    assert attempt.result.rationale == PASS["rationale"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_tool_not_on_path_is_named(kind: str, bin_dir: Path, workdir: Path) -> None:
    attempt = run(kind, workdir)
    assert attempt.detail == f"{kind} not found on PATH"
    assert not attempt.ok


def test_a_tool_without_its_read_only_flags_is_not_run(bin_dir: Path, workdir: Path) -> None:
    install(bin_dir, "claude", help=HELP["claude"].replace("--tools", "--toolz"))
    attempt = run("claude", workdir)
    assert "does not list --tools in its help" in attempt.detail
    assert "not run without its read-only controls" in attempt.detail
    assert calls(bin_dir, "claude") == []


def test_claude_limits_are_passed(bin_dir: Path, workdir: Path) -> None:
    install(bin_dir, "claude")
    run("claude", workdir, max_turns=7, max_budget_usd=1.5)
    argv = calls(bin_dir, "claude")[0]["argv"]
    assert contains(argv, ["--max-budget-usd", "1.5"])
    assert contains(argv, ["--max-turns", "7"])  # hidden from 2.1.332's help, yet accepted


def test_claude_without_safe_mode_is_not_run(bin_dir: Path, workdir: Path) -> None:
    install(bin_dir, "claude", help=HELP["claude"].replace("--safe-mode", "--safe-mod"))
    attempt = run("claude", workdir)
    assert "does not list --safe-mode in its help" in attempt.detail
    assert calls(bin_dir, "claude") == []


def test_codex_recovers_from_transient_errors_and_says_so(bin_dir: Path, workdir: Path) -> None:
    install(bin_dir, "codex", "recovered")
    attempt = run("codex", workdir)
    assert attempt.ok, attempt.detail
    assert (
        attempt.detail
        == "codex recovered from error event: Reconnecting... 2/5 (stream disconnected)"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("models", "extra", "ok", "detail"),
    [
        (["gpt-a", "gpt-b"], {"model": "gpt-b"}, True, "model listed by `codex debug models`"),
        (
            ["gpt-a"],
            {"model": "gpt-z"},
            False,
            "model not available: gpt-z (codex debug models lists: gpt-a)",
        ),
        (
            ["gpt-a"],
            {"model": "gpt-a", "reasoning": "max"},
            False,
            "reasoning 'max' not offered by gpt-a (low, high)",
        ),
        (None, {"model": "gpt-a"}, True, "model not verified against a live list"),
        (["gpt-a"], {}, True, "model: the tool's default, not verified against a live list"),
    ],
)
def test_codex_models_are_checked_against_its_live_list(
    models: list[str] | None,
    extra: dict[str, str],
    ok: bool,
    detail: str,
    bin_dir: Path,
    workdir: Path,
) -> None:
    install(bin_dir, "codex", models=models)
    attempt = run("codex", workdir, **extra)
    assert (attempt.ok, attempt.detail) == (ok, detail)
    assert len(calls(bin_dir, "codex")) == (1 if ok else 0)


def test_gemini_gets_every_at_sign_escaped(bin_dir: Path, workdir: Path) -> None:
    install(bin_dir, "gemini")
    packet = PACKET.replace(MARKER.encode(), b"@tests and user@example.com")
    attempt = agent.run_once(AGENTS["gemini"], lane("gemini"), packet, workdir)
    assert attempt.ok, attempt.detail
    stdin = calls(bin_dir, "gemini")[0]["stdin"]
    assert "\\@tests and user\\@example.com" in stdin
    assert re.search(r"(?<!\\)@", stdin) is None


def test_a_named_variable_reaches_the_tool(
    bin_dir: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("MY_SETTING", "v")
    install(bin_dir, "claude")
    run("claude", workdir, env=["MY_SETTING"])
    env = calls(bin_dir, "claude")[0]["env"]
    assert (env["ANTHROPIC_API_KEY"], env["MY_SETTING"]) == ("k", "v")
    assert "SECRET_TOKEN" not in env


@pytest.mark.parametrize("kind", ["codex", "gemini", "command"])
def test_turn_and_budget_limits_belong_to_claude(kind: str) -> None:
    with pytest.raises(ValueError, match="only the claude kind can enforce"):
        lane(kind, max_turns=3, command=["x"])


@pytest.mark.parametrize("kind", KINDS)
def test_a_prompt_file_replaces_only_the_lens_prompt(
    kind: str, bin_dir: Path, workdir: Path
) -> None:
    (workdir / "review").mkdir()
    (workdir / "review" / "house.md").write_text("# House rules\n\nNo global state.\n")
    install(bin_dir, kind)
    attempt = run(kind, workdir, prompt_file="review/house.md")
    assert attempt.ok, attempt.detail
    stdin = calls(bin_dir, kind)[0]["stdin"]
    assert stdin == full_prompt(PACKET, "# House rules\n\nNo global state.\n")
    assert builtin("correctness") not in stdin
    assert MARKER in stdin
    assert stdin.rstrip().endswith(contract(tools=True).rstrip())


def test_a_prompt_file_missing_from_the_snapshot_fails_the_attempt(
    bin_dir: Path, workdir: Path
) -> None:
    install(bin_dir, "codex")
    attempt = run("codex", workdir, prompt_file="review/gone.md")
    assert not attempt.ok
    assert attempt.detail == (
        "the prompt_file review/gone.md is not a file of the reviewed snapshot "
        "(a link out of it is not followed)"
    )
    assert calls(bin_dir, "codex") == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"kind": "command", "command": ["x"]}, "a command lane writes its own prompt"),
        ({"kind": "claude", "prompt_file": "/etc/passwd"}, "must be a path inside the repository"),
        ({"kind": "claude", "prompt_file": "../up.md"}, "must be a path inside the repository"),
    ],
)
def test_a_prompt_file_must_be_inside_and_for_a_model_lane(
    extra: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        validate_data(
            LaneConfig, {"name": "l", "lens": "correctness", "prompt_file": "p.md", **extra}
        )


def test_a_prompt_file_linking_out_of_the_snapshot_is_not_read(
    bin_dir: Path, workdir: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET\n")
    (workdir / "house.md").symlink_to(secret)
    install(bin_dir, "claude")
    attempt = run("claude", workdir, prompt_file="house.md")
    assert "is not a file of the reviewed snapshot" in attempt.detail
    assert calls(bin_dir, "claude") == []


def test_a_gemini_lane_never_sees_the_changes_own_gemini_settings(
    bin_dir: Path, workdir: Path
) -> None:
    (workdir / ".gemini").mkdir()
    (workdir / ".gemini" / "settings.json").write_text('{"hooks": {}}')
    install(bin_dir, "gemini")
    attempt = run("gemini", workdir)
    assert attempt.ok, attempt.detail
    # removed from the lane's own copy; an empty .env ends gemini's search for .env files
    assert [p.name for p in (workdir / ".gemini").iterdir()] == [".env"]
    assert (workdir / ".gemini" / ".env").read_text() == ""
    argv = calls(bin_dir, "gemini")[0]["argv"]
    allowed = argv[argv.index("--allowed-mcp-server-names") + 1]
    assert allowed.startswith("bounded-review-none-")
    assert allowed != "none"


def test_a_gemini_lane_runs_in_a_home_of_its_own_without_the_users_hooks_or_env_files(
    bin_dir: Path, workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user-home"
    (user / ".gemini").mkdir(parents=True)
    hook = {"SessionStart": [{"hooks": [{"type": "command", "command": "touch /tmp/x"}]}]}
    auth = {"selectedType": "oauth-personal"}
    settings = {"hooks": hook, "mcpServers": {"mine": {}}, "security": {"auth": auth}}
    commented = "// mine\n" + json.dumps(settings).replace("{", "{ /* note: // here */ ", 1)
    (user / ".gemini" / "settings.json").write_text(commented)
    (user / ".gemini" / "oauth_creds.json").write_text('{"refresh_token": "r"}')
    (user / ".gemini" / ".env").write_text("GEMINI_API_KEY='from-dotenv'\nOTHER=1\n")
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    install(bin_dir, "gemini")
    attempt = run("gemini", workdir)
    assert attempt.ok, attempt.detail
    call = calls(bin_dir, "gemini")[0]
    home = Path(call["env"]["GEMINI_CLI_HOME"])
    assert call["env"]["HOME"] == str(user)  # only gemini's own folder moves
    seen = call["gemini_dir"]
    assert json.loads(seen["settings.json"]) == {
        "hooksConfig": {"enabled": False},
        "advanced": {"ignoreLocalEnv": True},
        "security": {"auth": auth},
    }
    assert seen["oauth_creds.json"] == f"-> {user / '.gemini' / 'oauth_creds.json'}"
    assert ".env" not in seen  # its credential variables come through the environment
    assert call["env"]["GEMINI_API_KEY"] == "from-dotenv"
    assert "OTHER" not in call["env"]
    assert not home.exists()  # removed after the attempt, the session file with it
    assert sorted(p.name for p in (user / ".gemini").iterdir()) == [
        ".env",
        "oauth_creds.json",
        "settings.json",
    ]
    monkeypatch.setenv("GEMINI_API_KEY", "from-the-environment")  # the environment wins
    run("gemini", workdir)
    assert calls(bin_dir, "gemini")[1]["env"]["GEMINI_API_KEY"] == "from-the-environment"


def test_gemini_answers_quote_with_a_plain_at_sign(bin_dir: Path, workdir: Path) -> None:
    answer = dict(PASS, rationale="checked \\@pytest.fixture")
    install(bin_dir, "gemini", answer=answer)
    attempt = run("gemini", workdir)
    assert attempt.result is not None
    assert attempt.result.rationale == "checked @pytest.fixture"


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ('{"url": "http://x"} // a comment', '{"url": "http://x"} '),
        ('{"q": "a\\"//b"} /* c */', '{"q": "a\\"//b"} '),
        ('/* a { */{"a": 1}', '{"a": 1}'),
        ('{"a": "/* not a comment */"}', '{"a": "/* not a comment */"}'),
    ],
)
def test_gemini_settings_comments_are_read_as_gemini_reads_them(text: str, plain: str) -> None:
    assert geminihome.without_comments(text) == plain


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "mode", "final"),
    [
        ("claude", "not_logged_in", True),
        ("claude", "is_error", True),  # model not found
        ("gemini", "auth", True),
        ("claude", "hang", False),
        ("codex", "no_turn", False),  # a stream that broke may not break again
        ("gemini", "error", False),  # quota
    ],
)
def test_a_failure_no_retry_can_change_is_final(
    kind: str, mode: str, final: bool, bin_dir: Path, workdir: Path
) -> None:
    install(bin_dir, kind, mode)
    attempt = run(kind, workdir, timeout=3)
    assert not attempt.ok
    assert attempt.final is final, attempt.detail


def test_a_missing_tool_is_final(bin_dir: Path, workdir: Path) -> None:
    attempt = run("claude", workdir)
    assert attempt.detail == "claude not found on PATH"
    assert attempt.final
