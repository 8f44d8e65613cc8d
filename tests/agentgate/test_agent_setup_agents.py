"""What ``bounded-review init --agent`` writes, read by each installed agent's own loader: the
check that the shapes are the agents', not ours. Each test runs the CLI pinned in
tests/agentclis (Claude Code, Codex, Gemini CLI), or where the agent's CLI is on PATH (and
node, for the ones shipped as JavaScript), in a throwaway home, and also shows that the loader
rejects a broken entry, so a pass means something. Where they ran, and the
versions, is in tests/data/agents/README.md.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agentclis.realclis import agent_cli
from gitrepo import GitRepo
from test_agent_setup import EXPECTED, _existing, init

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "claude-plugin" / "bounded-review"


def _tool(name: str) -> str:
    """The agent's CLI: the pinned install of ``tests/agentclis`` for the CLIs pinned there,
    else the one on PATH."""
    pinned = agent_cli(name)
    if pinned is not None:
        return pinned
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not on PATH")
    return found


def _set_up(repo: GitRepo, agent: str) -> dict[str, Any]:
    """The agent's settings after init merged into a file with other keys and hooks."""
    repo.write(EXPECTED[agent][0], json.dumps(_existing(agent), indent=2))
    out = init(repo, "--agent", agent, "--write")
    assert out.returncode == 0, out.stderr
    data: dict[str, Any] = json.loads((repo.path / EXPECTED[agent][0]).read_text())
    return data


def _run(argv: list[str], home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {"PATH": os.environ["PATH"], "HOME": str(home)}
    return subprocess.run(
        argv, env=base | env, capture_output=True, text=True, timeout=120, check=False
    )


def _claude_validate(claude: str, hooks: dict[str, Any], tmp_path: Path) -> str:
    """`claude plugin validate --strict` on a plugin carrying ``hooks``: the same schema
    Claude Code applies to the `hooks` of a settings file."""
    plugin = tmp_path / "plugin"
    shutil.rmtree(plugin, ignore_errors=True)
    (plugin / "hooks").mkdir(parents=True)
    shutil.copytree(PLUGIN / ".claude-plugin", plugin / ".claude-plugin")
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    done = _run([claude, "plugin", "validate", "--strict", str(plugin)], tmp_path / "home")
    return f"{done.returncode}\n{done.stdout}{done.stderr}"


@pytest.mark.slow
def test_claude_code_accepts_the_hooks_of_the_written_settings(
    repo: GitRepo, tmp_path: Path
) -> None:
    claude = _tool("claude")
    written = _set_up(repo, "claude")
    shown = _claude_validate(claude, written["hooks"], tmp_path)
    assert shown.startswith("0\n"), shown
    assert "Validation passed" in shown
    written["hooks"]["Stop"][-1]["hooks"][0]["timeout"] = "30"
    shown = _claude_validate(claude, written["hooks"], tmp_path)
    assert shown.startswith("1\n"), shown
    assert "hooks.Stop.1.hooks.0" in shown
    assert "timeout" in shown


def _trust_project(repo: GitRepo, home: Path) -> None:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    root = repo.path.resolve()
    (codex_home / "config.toml").write_text(f'[projects."{root}"]\ntrust_level = "trusted"\n')


def _codex_hooks(codex: str, repo: GitRepo, home: Path, *, keep: bool = False) -> dict[str, Any]:
    """The hooks Codex's app server finds for the repository (`hooks/list`), the project
    trusted in a throwaway CODEX_HOME (``keep``: in the configuration as it is)."""
    codex_home = home / ".codex"
    root = repo.path.resolve()
    if not keep:
        _trust_project(repo, home)
    requests = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "0"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(root)]}},
    ]
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(codex_home)}
    with subprocess.Popen(
        [codex, "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        server.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        server.stdin.flush()
        try:
            for line in server.stdout:
                answer = json.loads(line)
                if answer.get("id") == 2:
                    result: dict[str, Any] = answer["result"]["data"][0]
                    return result
        finally:
            server.kill()
    raise AssertionError("the app server gave no answer to hooks/list")


def test_codex_finds_the_written_hooks(repo: GitRepo, tmp_path: Path) -> None:
    codex = _tool("codex")
    _set_up(repo, "codex")
    found = _codex_hooks(codex, repo, tmp_path / "home")
    assert found["errors"] == [], found
    assert found["warnings"] == [], found
    ours = {
        (h["eventName"], h["command"], h["timeoutSec"], h["source"])
        for h in found["hooks"]
        if "bounded-review" in h["command"]
    }
    assert ours == {
        ("userPromptSubmit", "bounded-review hook start --agent codex", 30, "project"),
        ("stop", "bounded-review hook stop --agent codex", 30, "project"),
    }
    assert len(found["hooks"]) == 4  # the file's own two hooks are found too
    path = repo.path / ".codex/hooks.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "model": "x"}))
    broken = _codex_hooks(codex, repo, tmp_path / "home")
    assert "unknown field `model`" in " ".join(broken["warnings"]), broken


@pytest.mark.slow
def test_init_leaves_the_codex_hooks_trusted_for_headless_runs(repo: GitRepo) -> None:
    """`codex exec` skips an untrusted project hook without a word: after init, Codex's own
    loader reports our two hooks trusted (and only ours: the file's other hooks stay as the
    user left them); an entry changed afterwards is no longer trusted, and init trusts it
    again, replacing the stale hash."""
    codex = _tool("codex")
    home = repo.path.parent  # the HOME `init` runs with
    _trust_project(repo, home)
    _set_up(repo, "codex")
    config = home / ".codex" / "config.toml"
    assert config.read_text().startswith(f'[projects."{repo.path.resolve()}"]')
    found = _codex_hooks(codex, repo, home, keep=True)
    status = {h["command"]: h["trustStatus"] for h in found["hooks"]}
    assert status.pop("bounded-review hook start --agent codex") == "trusted", found
    assert status.pop("bounded-review hook stop --agent codex") == "trusted", found
    assert set(status.values()) == {"untrusted"}, found
    keys = {h["key"] for h in found["hooks"] if "bounded-review" in h["command"]}
    assert keys == {
        f"{repo.path.resolve()}/.codex/hooks.json:user_prompt_submit:0:0",
        f"{repo.path.resolve()}/.codex/hooks.json:stop:1:0",
    }
    path = repo.path / ".codex/hooks.json"
    data = json.loads(path.read_text())
    data["hooks"]["Stop"][-1]["hooks"][0]["timeout"] = 45  # the user's longer timeout
    path.write_text(json.dumps(data, indent=2) + "\n")
    found = _codex_hooks(codex, repo, home, keep=True)
    assert {h["trustStatus"] for h in found["hooks"] if "hook stop" in h["command"]} == {"modified"}
    again = init(repo, "--agent", "codex", "--write")
    assert again.returncode == 0, again.stderr
    wrote = [line for line in again.stdout.splitlines() if f"wrote {config}: trusted" in line]
    assert len(wrote) == 1, again.stdout
    assert "/.codex/hooks.json:stop:1:0` (sha256:" in wrote[0], again.stdout
    found = _codex_hooks(codex, repo, home, keep=True)
    assert {h["trustStatus"] for h in found["hooks"] if "bounded-review" in h["command"]} == {
        "trusted"
    }
    assert config.read_text().count("[hooks.state.") == 2


GEMINI_LOAD = """
const [chunk, workspace] = process.argv.slice(2);
const loaded = (await import(chunk)).loadSettings(workspace);
console.log(JSON.stringify({errors: loaded.errors, hooks: loaded.merged.hooks}));
process.exit(0);
"""


def _gemini_settings(gemini: str, repo: GitRepo, tmp_path: Path) -> dict[str, Any]:
    """Gemini CLI's own settings loader (its bundle's `loadSettings`) on the repository."""
    bundle = Path(os.path.realpath(gemini)).parent
    chunks = [
        p for p in sorted(bundle.glob("*.js")) if "function _doLoadSettings(" in p.read_text()
    ]
    if not chunks:
        pytest.skip(f"no settings loader found in {bundle}")
    script = tmp_path / "load.mjs"
    script.write_text(GEMINI_LOAD)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    done = _run(
        ["node", str(script), str(chunks[0]), str(repo.path)],
        home,
        GEMINI_CLI_TRUST_WORKSPACE="true",
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_gemini_loads_the_written_settings(repo: GitRepo, tmp_path: Path) -> None:
    gemini = _tool("gemini")
    _tool("node")
    written = _set_up(repo, "gemini")
    loaded = _gemini_settings(gemini, repo, tmp_path)
    assert loaded["errors"] == [], loaded
    for event in ("BeforeAgent", "AfterAgent"):
        assert loaded["hooks"][event] == written["hooks"][event]
    path = repo.path / ".gemini/settings.json"
    path.write_text(json.dumps({"hooks": {"AfterAgent": {"hooks": []}}}))
    broken = _gemini_settings(gemini, repo, tmp_path)
    assert "hooks.AfterAgent" in broken["errors"][0]["message"], broken


COPILOT_DISCOVER = """
const [sdk, cli, folder] = process.argv.slice(2);
const { CopilotClient } = await import(sdk);
const client = new CopilotClient({connection: {kind: "stdio", path: cli}, logLevel: "none",
                                  useLoggedInUser: false});
await client.start();
const found = await client.rpc.hooks.discover({hookDirectories: [folder], excludeHostHooks: true});
console.log(JSON.stringify(found));
process.exit(0);
"""


@pytest.fixture(scope="module")
def copilot_sdk(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    """Copilot CLI, the SDK it unpacks on its first run (in a throwaway home), and that home."""
    copilot = _tool("copilot")
    _tool("node")
    home = tmp_path_factory.mktemp("copilot-home")
    _run([copilot, "--version"], home)
    sdks = sorted(home.glob(".cache/copilot/pkg/*/*/copilot-sdk/index.js"))
    if not sdks:
        pytest.skip("copilot unpacked no SDK to ask")
    return copilot, sdks[-1], home


def _copilot_hooks(sdk: tuple[str, Path, Path], repo: GitRepo, tmp_path: Path) -> dict[str, Any]:
    copilot, index, home = sdk
    script = tmp_path / "discover.mjs"
    script.write_text(COPILOT_DISCOVER)
    folder = repo.path / ".github" / "hooks"
    done = _run(["node", str(script), str(index), copilot, str(folder)], home)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_copilot_finds_the_written_hooks(
    copilot_sdk: tuple[str, Path, Path], repo: GitRepo, tmp_path: Path
) -> None:
    _set_up(repo, "copilot")
    found = _copilot_hooks(copilot_sdk, repo, tmp_path)
    assert found["errors"] == [], found
    assert found["warnings"] == [], found
    events = sorted(h["hookType"] for h in found["hooks"] if h["source"].endswith("review.json"))
    assert events == ["agentStop", "agentStop", "postToolUse", "userPromptSubmitted"]
    path = repo.path / ".github/hooks/bounded-review.json"
    data = json.loads(path.read_text())
    data["hooks"]["agentStop"][-1]["timeoutSec"] = "30"
    path.write_text(json.dumps(data))
    broken = _copilot_hooks(copilot_sdk, repo, tmp_path)
    assert "timeoutSec must be a number" in " ".join(broken["errors"]), broken
