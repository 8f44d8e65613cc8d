"""What the agent lane kinds (``claude``, ``codex``, ``gemini``) share.

The tool is found on the lane's ``PATH``; its version and ``--help`` are read once per process,
and a flag is passed only when that help lists it. A tool that lacks one of the read-only or
isolation flags its adapter requires is not run at all. Each attempt gets a private folder for
the files the tool reads or writes, runs in the lane's snapshot copy with the scrubbed
environment, bounded by the lane's timeout and an output cap, and its prompt arrives on stdin:
argv holds only flags and paths. The snapshot copy stays the real guard; flags are a second
layer.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...core import strictjson, subproc, tempdirs
from ...core.errors import UsageError
from ...core.settings.tables import LaneConfig
from ...models.record import record
from ..environment import lane_env
from ..prompt import full_prompt, lens_prompt
from ..result import Attempt, exit_reason, process_failure, settled

# Agents print envelopes and event streams around the answer: more room than a command lane.
OUTPUT_CAP = 8 * 1024 * 1024
PROBE_TIMEOUT = 60.0


@record(frozen=True)
class Tool:
    """An agent program as found: where, which version, and the flags its help lists."""

    name: str
    argv: tuple[str, ...]  # how to start it: the resolved program, then any fixed arguments
    version: str | None
    help: str

    def offers(self, flag: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", self.help) is not None


@record(frozen=True)
class Agent:
    """One adapter: the tool's name, how to read its help, the variables it needs (its
    credentials and home), the flags without which it is not run, how to invoke it and how
    to read what it printed."""

    name: str
    help_argv: tuple[str, ...]
    env: tuple[str, ...]
    required: tuple[str, ...]
    # (lane, tool, private folder, snapshot copy) -> argv after the program
    invocation: Callable[[LaneConfig, Tool, Path, Path], list[str]]
    # (lane, finished process, private folder) -> the attempt
    read: Callable[[LaneConfig, subproc.Outcome, Path], Attempt]
    # (lane, tool, environment) -> whether the model may be used, and the row's note on it
    verify: Callable[[LaneConfig, Tool, dict[str, str]], tuple[bool, str]] = (
        lambda lane, tool, env: (True, unverified(lane.model))
    )
    # the prompt as this tool must receive it (a tool that expands text needs it escaped)
    shield: Callable[[str], str] = lambda text: text
    # what the tool's own files in the reviewed copy must not do: removed before the run
    strip: tuple[str, ...] = ()
    # (private folder, working folder, environment) -> variables to add for a run of the
    # tool, such as a home of its own (the probe of --version and --help included)
    setup: Callable[[Path, Path, dict[str, str]], dict[str, str]] = lambda f, w, e: {}


def unverified(model: str | None) -> str:
    """The note of a model no live list could confirm."""
    if model is None:
        return "model: the tool's default, not verified against a live list"
    return "model not verified against a live list"


def _first_line(data: bytes) -> str | None:
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[0].strip()[:200] if lines else None


@functools.cache
def _probe(agent: Agent, argv: tuple[str, ...], path: str) -> tuple[str | None, str]:
    """The tool's version and help, asked in a private folder (nothing lands in the user's)."""
    env = lane_env([], {"PATH": path, "NO_COLOR": "1"})
    folder = tempdirs.make("agent")
    try:
        cwd = folder / "cwd"
        cwd.mkdir()
        env.update(agent.setup(folder, cwd, env))
        version = subproc.run([*argv, "--version"], cwd=cwd, env=env, timeout=PROBE_TIMEOUT)
        shown = _first_line(version.stdout) if version.returncode == 0 else None
        helped = subproc.run([*argv, *agent.help_argv], cwd=cwd, env=env, timeout=PROBE_TIMEOUT)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return shown, (helped.stdout + helped.stderr).decode("utf-8", "replace")


def find(agent: Agent, lane: LaneConfig, env: dict[str, str]) -> Tool | str:
    """The tool for ``lane``, or why there is none to run."""
    start: Sequence[str] = lane.command or [agent.name]
    found = shutil.which(start[0], path=env.get("PATH", ""))
    if found is None:
        return f"{start[0]} not found on PATH"
    argv = (found, *start[1:])
    version, shown = _probe(agent, argv, env.get("PATH", ""))
    tool = Tool(agent.name, argv, version, shown)
    missing = [flag for flag in agent.required if not tool.offers(flag)]
    if missing:
        return (
            f"{agent.name} {version or '(unknown version)'} does not list "
            f"{', '.join(missing)} in its help: not run without its read-only controls"
        )
    return tool


def run_once(agent: Agent, lane: LaneConfig, packet: bytes, workdir: Path) -> Attempt:
    """One attempt of an agent lane on ``packet`` in ``workdir`` (the snapshot copy)."""
    env = lane_env([*agent.env, *lane.env], {"NO_COLOR": "1"})
    tool = find(agent, lane, env)
    if isinstance(tool, str):  # missing, or too old: no retry changes that
        return Attempt(None, "error", tool, lane.model, tool=agent.name, final=True)
    usable, note = agent.verify(lane, tool, env)
    if not usable:  # a model or reasoning level the tool does not offer: final too
        version = tool.version
        unusable = Attempt(None, "error", note, lane.model, tool=agent.name, tool_version=version)
        return dataclasses.replace(unusable, final=True)
    try:
        prompt = agent.shield(full_prompt(packet, lens_prompt(lane, workdir))).encode("utf-8")
    except UsageError as exc:
        return Attempt(None, "error", str(exc), lane.model, tool=agent.name)
    for name in agent.strip:  # the copy is the lane's own: the live tree is never touched
        target = workdir / name
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
    folder = tempdirs.make("agent")
    try:
        argv = [*tool.argv, *agent.invocation(lane, tool, folder, workdir)]
        out = subproc.run(
            argv,
            cwd=workdir,
            env={**env, **agent.setup(folder, workdir, env)},
            timeout=lane.timeout,
            stdin=prompt,
            cap=OUTPUT_CAP,
        )
        failed = process_failure(out, lane.timeout, OUTPUT_CAP, lane.model)
        attempt = failed or agent.read(lane, out, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    detail = attempt.detail if not attempt.ok or attempt.detail else note
    done = dataclasses.replace(attempt, detail=detail, tool=agent.name, tool_version=tool.version)
    return settled(done)


def read_envelope(
    name: str, data: bytes | None, out: subproc.Outcome, model: str | None
) -> dict[str, Any] | Attempt:
    """The tool's JSON envelope (an object) in ``data``, or the failed attempt saying why
    there is none: it printed nothing, or not JSON, or not an object."""
    if data is None or not data.strip():
        return Attempt(None, "error", f"{name} printed nothing ({exit_reason(out)})", model)
    try:
        envelope = strictjson.loads(data, max_bytes=OUTPUT_CAP)
    except strictjson.StrictJSONError as exc:
        return Attempt(None, "error", f"{name}'s output is not its JSON envelope: {exc}")
    if not isinstance(envelope, dict):
        return Attempt(None, "error", f"{name}'s JSON envelope is not an object", model)
    return envelope
