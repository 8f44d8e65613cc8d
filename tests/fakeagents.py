"""Stand-ins for the ``claude``, ``codex`` and ``gemini`` programs, put on PATH by tests.

Each reproduces the documented non-interactive interface of the version the adapters were
built against (Claude Code 2.1.332, codex-cli 0.171.0, Gemini CLI 0.61.0): ``--version``,
the flags ``--help`` lists, the success envelope or event stream, and the failure signals,
including those a real tool gives while exiting 0. A fake logs its argv, stdin, working
folder and environment to ``<name>.log`` beside it, and does what ``<name>.json`` says:
``{"mode": ..., "answer": {...}}``. With ``"reconcile": true`` it also accepts every scout
finding of the packet it was given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

VERSIONS = {
    "claude": "2.1.332 (Claude Code)",
    "codex": "codex-cli 0.171.0",
    "gemini": "0.61.0",
}

# The flags each version's --help lists (the subset the adapters look for, and a few more).
HELP = {
    "claude": """Usage: claude [options] [command] [prompt]
  --allowedTools, --allowed-tools <tools...>
  --disable-slash-commands              Disable all skills and commands
  --effort <level>                      Effort level for the current session
  --json-schema <schema>                JSON Schema for structured output
  --max-budget-usd <amount>             Maximum dollar amount to spend on API
  --mcp-config <configs...>             Load MCP servers from JSON files or
  --model <model>                       Model for the current session.
  --no-session-persistence              Don't save sessions to disk
  --output-format <format>              Output format (only works with --print)
  --permission-mode <mode>              Permission mode to use for the session
  --permission-prompts <target>         Who answers permission prompts with
  -p, --print                           Print response and exit
  --safe-mode                           Start with all customizations disabled
  --setting-sources <sources>           Comma-separated list of setting sources
  --strict-mcp-config                   Only use MCP servers from --mcp-config,
  --tools <tools...>                    Built-in tools to make available
  -v, --version                         Output the version number
""",
    "codex": """Run Codex non-interactively
Usage: codex exec [OPTIONS] [PROMPT]
  -c, --config <key=value>
  -m, --model <MODEL>
  -s, --sandbox <SANDBOX_MODE>  [possible values: read-only, workspace-write]
  -C, --cd <DIR>
      --skip-git-repo-check
      --ephemeral
      --ignore-user-config
      --ignore-rules
      --output-schema <FILE>
      --color <COLOR>
      --json
  -o, --output-last-message <FILE>
""",
    "gemini": """Usage: gemini [options] [command]
  -m, --model                     Model  [string]
  -p, --prompt                    Run in non-interactive (headless) mode
      --skip-trust                Trust the current workspace for this session.
      --approval-mode             Set the approval mode
      --allowed-mcp-server-names  Allowed MCP server names  [array]
  -e, --extensions                A list of extensions to use.  [array]
  -o, --output-format             The format of the CLI output.
""",
}

PASS = {
    "schema": "bounded-review/lane-result/v1",
    "verdict": "pass",
    "rationale": "checked the changed lines; nothing blocks",
}

_FAKE = r"""#!__PYTHON__
import json, os, re, sys, time
here = os.path.dirname(os.path.abspath(__file__))
name = os.path.basename(__file__)
args = sys.argv[1:]
with open(os.path.join(here, name + ".json")) as f:
    config = json.load(f)
if args == ["--version"]:
    print(__VERSIONS__[name])
    sys.exit(0)
if "--help" in args:
    print(config.get("help", __HELP__[name]))
    sys.exit(0)
if name == "codex" and args[:2] == ["debug", "models"]:
    if config.get("models") is None:
        sys.exit(1)
    levels = [{"effort": "low"}, {"effort": "high"}]
    print(json.dumps({"models": [{"slug": slug, "supported_reasoning_levels": levels}
                                 for slug in config["models"]]}))
    sys.exit(0)
stdin = sys.stdin.read()
# gemini's own folder as it finds it: GEMINI_CLI_HOME, else HOME (links shown by target)
gemini_dir = os.path.join(os.environ.get("GEMINI_CLI_HOME") or os.environ["HOME"], ".gemini")
found = {}
for entry in sorted(os.listdir(gemini_dir)) if os.path.isdir(gemini_dir) else []:
    full = os.path.join(gemini_dir, entry)
    found[entry] = ("-> " + os.readlink(full)) if os.path.islink(full) else (
        open(full).read() if os.path.isfile(full) else "/")
with open(os.path.join(here, name + ".log"), "a") as f:
    f.write(json.dumps({"argv": sys.argv, "stdin": stdin, "cwd": os.getcwd(),
                        "env": dict(os.environ), "gemini_dir": found}) + "\n")
mode, answer = config["mode"], config.get("answer", __PASS__)
if config.get("reconcile"):
    packet = json.loads(re.search(r"```json\n(.*?)\n```", stdin, re.S).group(1))
    answer = dict(answer, reconciliation=[
        {"fingerprint": s["fingerprint"], "decision": "accepted"}
        for s in packet["scout_findings"]])
if mode == "hang":
    time.sleep(600)
if mode == "huge":
    sys.stdout.write("x" * (12 * 1024 * 1024))
    sys.exit(0)
if mode == "empty":
    sys.exit(0)
text = json.dumps(answer)
if mode == "prose":
    text = "Here is my review.\n```json\n" + text + "\n```\nThanks!"
def emit(obj):
    print(json.dumps(obj))

if name == "claude":
    env = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1998,
           "num_turns": 2, "result": "", "session_id": "0e639165", "total_cost_usd": 0.0123,
           "usage": {"input_tokens": 3, "cache_read_input_tokens": 1000, "output_tokens": 50},
           "modelUsage": {"claude-sonnet-4-5": {"inputTokens": 1003, "outputTokens": 50}}}
    if mode == "is_error":  # API errors: is_error with subtype success, and exit 0
        env.update(is_error=True, api_error_status=404, terminal_reason="api_error",
                   result="model not found")
    elif mode == "not_logged_in":  # Claude Code 2.1.197 with no login, exactly
        env.update(is_error=True, api_error_status=None, num_turns=1, duration_api_ms=0,
                   result="Not logged in \u00b7 Please run /login", stop_reason="stop_sequence",
                   total_cost_usd=0, modelUsage={}, terminal_reason="completed")
        env["usage"] = {"input_tokens": 0, "output_tokens": 0}
        emit(env)
        sys.exit(1)
    elif mode == "max_turns":
        env.update(subtype="error_max_turns", is_error=True,
                   errors=["Reached maximum number of turns (1)"])
        emit(env)
        sys.exit(1)
    elif mode == "prose":
        env["result"] = text  # no structured_output: the answer is in the result text
    else:
        env["structured_output"] = json.loads(text) if mode != "invalid" else {"verdict": "maybe"}
    emit(env)
elif name == "codex":
    last = args[args.index("--output-last-message") + 1]
    emit({"type": "thread.started", "thread_id": "t1"})
    emit({"type": "turn.started"})
    if mode == "turn_failed":
        emit({"type": "error", "message": "You've hit your usage limit."})
        emit({"type": "turn.failed", "error": {"message": "usage limit"}})
        sys.exit(0)
    if mode == "no_turn":
        emit({"type": "error", "message": "stream disconnected before completion"})
        sys.exit(0)
    if mode == "recovered":  # transient trouble codex reports and then gets over
        emit({"type": "error", "message": "Reconnecting... 2/5 (stream disconnected)"})
        emit({"type": "item.completed", "item": {"id": "item_0", "type": "error",
              "message": "Falling back from WebSockets to HTTPS transport."}})
    final = text if mode != "invalid" else json.dumps({"schema": "nope"})
    emit({"type": "item.completed", "item": {"id": "item_3", "type": "agent_message",
                                             "text": final}})
    emit({"type": "turn.completed", "usage": {"input_tokens": 24763,
          "cached_input_tokens": 24448, "output_tokens": 122}})
    with open(last, "w") as f:
        f.write(final)
elif name == "gemini":
    stats = {"models": {"gemini-2.5-pro": {"api": {"totalRequests": 2},
             "tokens": {"prompt": 900, "candidates": 40, "total": 940}}}}
    # Fatal errors: the JSON envelope goes to stderr, pretty-printed, with an exit status.
    fatal = {"error": (1, "ApiError", "quota exceeded"), "auth": (41, "FatalAuthenticationError",
             "Please set an Auth method"), "turn_limit": (53, "FatalTurnLimitedError",
             "Reached max session turns for this session.")}
    if mode in fatal:
        code, kind, message = fatal[mode]
        sys.stderr.write("Loaded cached credentials.\n" + json.dumps(
            {"session_id": "s1", "error": {"type": kind, "message": message, "code": code}},
            indent=2) + "\n")
        sys.exit(code)
    os.makedirs(os.path.join(gemini_dir, "tmp", "chats"), exist_ok=True)  # its session file
    with open(os.path.join(gemini_dir, "tmp", "chats", "session-s1.jsonl"), "w") as f:
        f.write(stdin)
    response = text if mode != "invalid" else "I think it is fine."
    emit({"session_id": "s1", "response": response, "stats": stats})
"""


def install(folder: Path, name: str, mode: str = "ok", answer: Any = None, **extra: Any) -> Path:
    """Put the fake ``name`` in ``folder`` (the test puts ``folder`` on PATH)."""
    folder.mkdir(parents=True, exist_ok=True)
    source = (
        _FAKE.replace("__PYTHON__", sys.executable)
        .replace("__VERSIONS__", repr(VERSIONS))
        .replace("__HELP__", repr(HELP))
        .replace("__PASS__", repr(PASS))
    )
    program = folder / name
    program.write_text(source)
    program.chmod(0o755)
    config: dict[str, Any] = {"mode": mode, **extra}
    if answer is not None:
        config["answer"] = answer
    (folder / f"{name}.json").write_text(json.dumps(config))
    return program


def calls(folder: Path, name: str) -> list[dict[str, Any]]:
    """What the fake ``name`` logged, one entry per run (not counting --version/--help)."""
    log = folder / f"{name}.log"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]
