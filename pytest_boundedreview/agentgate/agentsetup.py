"""``bounded-review init --agent NAME [--write]``: hold a coding agent to the gate in this
repository. It adds the agent's stop hook and turn-start hook to the agent's project settings
file (``agentsettings``), merged into what the file holds, and writes the portable skill to
``.claude/skills/bounded-review/SKILL.md`` and ``.agents/skills/bounded-review/SKILL.md``.

Without ``--write`` it prints the unified diff of what it would write. Every refusal (a hook
entry it did not write, a file it cannot rewrite, a skill that is not ours) comes before the
first write, so a refused run changes nothing. It writes only those files, inside the
repository, and a second run changes nothing.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
from importlib import resources
from pathlib import Path

from ..change import git
from ..core.errors import UsageError
from ..core.statefile import default_mode, write_atomic
from ..models.record import record
from . import codextrust
from .agentsettings import AGENTS, AgentHooks, merge
from .jsonfile import Layout, parse

SKILL_PATHS = (".claude/skills/bounded-review/SKILL.md", ".agents/skills/bounded-review/SKILL.md")


def skill_text() -> bytes:
    """The skill this version ships (package data, the same text as the Claude Code plugin's)."""
    return (resources.files("pytest_boundedreview.agentgate") / "skill" / "SKILL.md").read_bytes()


@record(frozen=True)
class Change:
    """One file init would write: ``before`` None when it does not exist yet."""

    label: str  # the path as shown, relative to the repository root
    path: Path  # where the bytes go (a link inside the repository is written where it points)
    before: bytes | None
    after: bytes
    what: str  # what the change adds, for the line printed once it is written

    def diff(self) -> str:
        old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = self.after.decode("utf-8", "replace").splitlines(keepends=True)
        source = f"a/{self.label}" if self.before is not None else "/dev/null"
        lines = list(difflib.unified_diff(old, new, source, f"b/{self.label}"))
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _inside(root: Path, label: str) -> tuple[Path, bytes | None]:
    """Where ``label`` lives (through links, inside the repository only) and its bytes."""
    path = (root / label).resolve()
    if not path.is_relative_to(root.resolve()):
        raise UsageError(
            f"{label} leads outside the repository (to {path}): init writes only the project's "
            "own files; nothing was written"
        )
    try:
        return path, path.read_bytes() if path.exists() else None
    except OSError as exc:
        why = exc.strerror or exc
        raise UsageError(f"{label}: cannot read it ({why}); nothing was written") from None


def settings_change(root: Path, spec: AgentHooks) -> Change:
    """The agent's settings file with our hook entries merged in."""
    path, before = _inside(root, spec.path)
    by_hand = json.dumps(spec.document(list(spec.entries())), indent=2)
    if before is None:
        data: dict[str, object] = {} if spec.version is None else {"version": spec.version}
        layout = Layout()
    else:
        data, layout = parse(spec.path, before, by_hand)
    kept = before is None or layout.dump(data) == before
    added = merge(spec, data, spec.path, before or b"")
    after = layout.dump(data) if added else (before or b"")
    kinds = spec.events()
    what = ", ".join(f"{event} runs `{spec.command(kinds[event])}`" for event in added)
    if not kept:
        what += " (the file is rewritten in one layout; every key and value kept)"
    return Change(spec.path, path, before, after, what)


def skill_changes(root: Path) -> list[Change]:
    """The skill in each place agents look for it; one that differs from ours is refused."""
    text = skill_text()
    changes = []
    for label in SKILL_PATHS:
        path, before = _inside(root, label)
        if before is not None and before != text:
            raise UsageError(
                f"{label} differs from the skill this version of bounded-review ships, and "
                "init never replaces a file it did not write: move it aside (and carry your "
                "edits over afterwards), then run init again; nothing was written"
            )
        changes.append(Change(label, path, before, text, "the bounded-review skill"))
    return changes


def codex_change(root: Path, spec: AgentHooks, settings: Change) -> Change:
    """The user's Codex configuration with our hooks trusted (outside the repository: shown
    with the rest, written only with ``--write``)."""
    hashes = codextrust.trusted_hashes(spec, root, json.loads(settings.after))
    path = codextrust.config_path()
    before, after = codextrust.trust_change(path, hashes)
    what = "trusted " + ", ".join(f"`{key}` ({value})" for key, value in hashes.items())
    return Change(str(path), path, before, after, what)


def codex_notes(root: Path) -> list[str]:
    """What Codex needs that init does not write: a trusted project, and a git directory its
    `workspace-write` sandbox lets the review write."""
    path = codextrust.config_path()
    notes = []
    if not codextrust.project_trusted(path, root):
        notes.append(
            f"Codex reads .codex/ only in a project you trust, and {path} does not trust "
            f"{root}: trust it when Codex asks, or add `[projects.{json.dumps(str(root))}]` "
            f'`trust_level = "trusted"` to {path} (that also trusts every setting of '
            ".codex/config.toml)"
        )
    notes.append(
        "Codex's `workspace-write` sandbox (`--full-auto`, `--sandbox workspace-write`) makes "
        ".git read-only and the review stops there; to review inside it, allow .git with "
        '`[sandbox_workspace_write]` `writable_roots = ["../.git"]` in .codex/config.toml (or '
        f'`writable_roots = ["{root}/.git"]` in {path}); not written for you: commands in the '
        "sandbox could then write .git/hooks and .git/config, which run outside it"
    )
    return notes


def _write(change: Change) -> None:
    mode = change.path.stat().st_mode & 0o7777 if change.before is not None else default_mode()
    change.path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(change.path, change.after)
    os.chmod(change.path, mode)  # the temporary file's 0600 must not stick


def cmd_setup(args: argparse.Namespace) -> int:
    root = git.open_repo(Path.cwd()).root
    spec = AGENTS[args.agent]
    changes = [settings_change(root, spec), *skill_changes(root)]
    if spec.agent == "codex":
        changes.append(codex_change(root, spec, changes[0]))
    notes = codex_notes(root) if spec.agent == "codex" else [spec.note] if spec.note else []
    pending = [change for change in changes if change.after != change.before]
    if not pending:
        print(f"bounded-review init: {spec.path} and the skill are in place; nothing to change")
        for note in notes:
            print(f"bounded-review init: {note}")
        return 0
    print("".join(change.diff() for change in pending), end="")
    if not args.write:
        print(
            f"bounded-review init: run `bounded-review init --agent {spec.agent} --write` to "
            "write this"
        )
        for note in notes:
            print(f"bounded-review init: {note}")
        return 0
    for change in pending:
        _write(change)
        print(f"bounded-review init: wrote {change.label}: {change.what}")
    print(
        "bounded-review init: the hooks run `bounded-review`: it must be on the PATH the agent "
        "starts them with (start the agent with the project's environment active)"
    )
    for note in notes:
        print(f"bounded-review init: {note}")
    return 0
