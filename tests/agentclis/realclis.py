"""The real coding-agent CLIs, pinned in ``package-lock.json`` beside this file: their install
into a cache folder outside the repository, and one headless turn of each against the scripted
model server (``modelserver``), with a fresh HOME.

The install is keyed on the lock's hash and shared by every run and every xdist worker: the
first to take the file lock installs into a temporary folder with ``npm ci`` and renames it into
place; the others wait and reuse it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from installonce import made_once

HERE = Path(__file__).parent
LOCK = HERE / "package-lock.json"
# Taken when this module is imported, before the suite gives each test its own HOME.
_CACHE_ROOT = Path(
    os.environ.get("BOUNDED_REVIEW_AGENT_CLIS_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "pytest-boundedreview-agentclis"
)
_NPM_ENV = dict(os.environ)
# The bounded-review (and pytest) the agents run: this interpreter's, unless another build is
# named (the matrix's "before" column runs the same turns against an older install).
VENV_BIN = Path(os.environ.get("BOUNDED_REVIEW_AGENT_VENV_BIN") or Path(sys.executable).parent)


def versions() -> dict[str, str]:
    """The pinned version of each CLI package."""
    pinned = json.loads((HERE / "package.json").read_text())["dependencies"]
    assert isinstance(pinned, dict)
    return {str(k): str(v) for k, v in pinned.items()}


def install() -> Path:
    """The ``node_modules/.bin`` folder of the pinned CLIs, installed once per lock hash.
    Raises ``FileNotFoundError`` without npm, ``RuntimeError`` with npm's output when the
    install fails."""
    npm = shutil.which("npm", path=_NPM_ENV.get("PATH"))
    if npm is None:
        raise FileNotFoundError("npm is not on PATH")

    def npm_ci(temp: Path) -> str:
        for name in ("package.json", "package-lock.json"):
            shutil.copy(HERE / name, temp / name)
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=temp,
            env=_NPM_ENV,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"npm ci failed ({done.returncode}):\n{done.stderr}{done.stdout}")
        return json.dumps(versions())

    key = hashlib.sha256(LOCK.read_bytes()).hexdigest()[:16]
    return made_once(_CACHE_ROOT, key, npm_ci) / "node_modules" / ".bin"


BINARIES = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
}


def installed() -> Path:
    """``install()`` for a test: skipped without npm, failed with npm's words when the
    install fails (CI must run these tests)."""
    import pytest

    try:
        return install()
    except FileNotFoundError as exc:
        pytest.skip(f"the real agent CLIs are installed with npm, and {exc}")
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)


def agent_cli(name: str) -> str | None:
    """The pinned CLI ``name``, or ``None`` when it is not pinned here."""
    if BINARIES.get(name) not in versions():
        return None
    return str(installed() / name)


# The hook as the agent runs it, timed: `bounded-review` on the agent's PATH is this shim in
# front of the real one; it passes everything through and logs each hook call.
SHIM = """#!{python}
import json, os, subprocess, sys, time
real = {real!r}
args = sys.argv[1:]
if args[:1] != ["hook"]:
    os.execv(real, [real, *args])
data = sys.stdin.buffer.read()
start = time.monotonic()
done = subprocess.run([real, *args], input=data, capture_output=True)
took = time.monotonic() - start
sys.stdout.buffer.write(done.stdout)
sys.stderr.buffer.write(done.stderr)
with open({log!r}, "a") as f:
    f.write(json.dumps({{"args": args, "event": data.decode(errors="replace"),
                        "out": done.stdout.decode(errors="replace"),
                        "err": done.stderr.decode(errors="replace"),
                        "code": done.returncode, "seconds": took}}) + "\\n")
sys.exit(done.returncode)
"""


@dataclass
class Run:
    """One headless invocation: exit status, output, and its JSON events."""

    code: int
    stdout: str
    stderr: str
    events: list[dict[str, Any]] = field(default_factory=list)


class Cli:
    """One agent CLI driven headless in ``repo`` against the model at ``url``."""

    name = ""

    def __init__(self, bin_dir: Path, repo: Path, home: Path, url: str, base_env: dict[str, str]):
        self.bin_dir, self.repo, self.home, self.url = bin_dir, repo, home, url
        self.shim_dir = home / "shim"
        self.hook_log = home / "hooks.jsonl"
        self.shim_dir.mkdir(parents=True)
        shim = self.shim_dir / "bounded-review"
        real = str(VENV_BIN / "bounded-review")
        shim.write_text(SHIM.format(python=sys.executable, real=real, log=str(self.hook_log)))
        shim.chmod(0o755)
        env = {k: v for k, v in base_env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        path = [str(self.shim_dir), str(VENV_BIN), env.get("PATH", "")]
        env |= {"HOME": str(home), "PATH": os.pathsep.join(path)}
        env.pop("XDG_CONFIG_HOME", None)
        self.env = env
        self.session = ""
        self.setup()

    def setup(self) -> None:
        raise NotImplementedError

    def argv(self, prompt: str, resume: bool) -> list[str]:
        raise NotImplementedError

    def turn(self, prompt: str, *, resume: bool = False) -> Run:
        """One headless turn (``resume``: in the agent session of the last one)."""
        done = subprocess.run(
            self.argv(prompt, resume),
            cwd=self.repo,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        events = []
        for line in done.stdout.splitlines():
            with contextlib.suppress(ValueError):
                events.append(json.loads(line))
        run = Run(done.returncode, done.stdout, done.stderr, events)
        self.noted(run)
        return run

    def noted(self, run: Run) -> None:
        """Keep what a later turn needs to resume."""

    def hooks(self) -> list[dict[str, Any]]:
        """Every hook call so far, in order (``args``, ``event``, ``out``, ``err``,
        ``seconds``)."""
        if not self.hook_log.exists():
            return []
        return [json.loads(line) for line in self.hook_log.read_text().splitlines()]


class Claude(Cli):
    name = "claude"

    def setup(self) -> None:
        self.env |= {
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": "sk-ant-local-test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }

    def argv(self, prompt: str, resume: bool) -> list[str]:
        argv = [str(self.bin_dir / "claude"), "-p", prompt, "--output-format", "stream-json"]
        argv += ["--verbose", "--include-hook-events", "--permission-mode", "acceptEdits"]
        argv += ["--allowedTools", "Bash Read Edit Write"]
        return argv + (["--resume", self.session] if resume else [])

    def noted(self, run: Run) -> None:
        for event in run.events:
            if event.get("type") == "result" and event.get("session_id"):
                self.session = str(event["session_id"])


class Codex(Cli):
    name = "codex"

    def setup(self) -> None:
        codex_home = self.home / ".codex"
        codex_home.mkdir()
        config = f"""model = "gpt-5.5"
model_provider = "local"
approval_policy = "never"
sandbox_mode = "danger-full-access"
allow_login_shell = false

[model_providers.local]
name = "local"
base_url = "{self.url}/v1"
env_key = "LOCAL_MODEL_KEY"
wire_api = "responses"

[projects."{self.repo}"]
trust_level = "trusted"
"""
        (codex_home / "config.toml").write_text(config)
        self.env |= {"LOCAL_MODEL_KEY": "local-test", "CODEX_HOME": str(codex_home)}

    def argv(self, prompt: str, resume: bool) -> list[str]:
        argv = [str(self.bin_dir / "codex"), "exec"]
        argv += ["resume", "--last"] if resume else []
        # the hooks run on the trust `init --agent codex --write` gave them, as a user's do
        return [*argv, "--json", prompt]


class Gemini(Cli):
    name = "gemini"

    def setup(self) -> None:
        gemini_home = self.home / ".gemini"
        gemini_home.mkdir()
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
        }
        (gemini_home / "settings.json").write_text(json.dumps(settings))
        # the folder trusted once, as a user does: `--skip-trust` never reads .gemini/settings.json
        trusted = {str(self.repo): "TRUST_FOLDER"}
        (gemini_home / "trustedFolders.json").write_text(json.dumps(trusted))
        self.env |= {"GOOGLE_GEMINI_BASE_URL": self.url, "GEMINI_API_KEY": "local-test"}
        # it relaunches itself only to raise node's heap limit: a second start-up (about a
        # second) per turn that changes nothing the hooks see
        self.env["GEMINI_CLI_NO_RELAUNCH"] = "true"

    def argv(self, prompt: str, resume: bool) -> list[str]:
        argv = [str(self.bin_dir / "gemini"), "-p", prompt, "-m", "gemini-2.5-flash"]
        argv += ["--approval-mode", "yolo", "--output-format", "stream-json"]
        return argv + (["--resume", "latest"] if resume else [])


CLIS: dict[str, type[Cli]] = {"claude": Claude, "codex": Codex, "gemini": Gemini}
