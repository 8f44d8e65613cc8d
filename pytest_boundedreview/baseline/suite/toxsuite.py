"""The suite a project's tox configuration runs, where its pytest configuration sets no
``testpaths``: every path the pytest commands of the environments ``tox`` runs by default give,
together. A session whose paths are exactly those is the whole suite (``pytest tests
examples/tiny/tests`` as tox runs it leaves out no stray ``examples/test_*.py``); one command of
several is not. The tox file is read from the base commit, never from the disk (a change, or a
file git does not see, cannot define its own suite), and never run: when one of its pytest
commands cannot be read (a substitution only tox resolves, an option this session does not
know) or runs the whole rootdir, tox defines nothing, and the reason is named."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from ...change import git
from ...core.pytestconfig.argv import Table
from ...core.pytestconfig.selecting import RECONFIGURING
from ...core.pytestconfig.toxconfig import Command, commands
from ...models.record import record


@record(frozen=True)
class ToxSuite:
    """The pytest commands of tox whose paths, together, the session's are (none: they are
    not), those paths relative to the rootdir, and why commands of tox could not be read."""

    file: str
    commands: tuple[Command, ...] = ()
    paths: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()

    @property
    def defined_by(self) -> str:
        shown = "; ".join(f"{c.text} ({c.where})" for c in self.commands)
        return f"tox: {shown}"


def tox_suite(
    repo: git.Repo,
    rootdir: Path,
    base_commit: str | None,
    changed: Collection[str],
    given: Sequence[Path],
    table: Table,
) -> ToxSuite | None:
    """The tox suite of a session whose rootdir is ``rootdir`` and whose paths given are
    ``given`` (absolute), for a change against ``base_commit`` touching ``changed``; ``None``
    when the project has no tox configuration there."""
    root = repo.root.resolve()
    rootdir = rootdir.resolve()
    if not rootdir.is_relative_to(root):
        return None
    folder = rootdir.relative_to(root)

    def read(name: str) -> str | None:
        # the base's: the change cannot add or edit it, and an ignored file is not the project's
        return repo.show(base_commit, (folder / name).as_posix()) if base_commit else None

    file, found = commands(read)
    if not file:
        return None
    wanted = {p.resolve() for p in given}
    unread, suite = [], set()
    for command in found:
        why = command.unresolved or _unreadable(command, table)
        paths = [] if why else (pytest_paths(command.args, table) or [])
        if not why and not paths:
            why = "it runs the rootdir as pytest does with no paths"
        if why:
            unread.append(f"{command.where} `{command.text}`: {why}")
            continue
        start = (rootdir / command.changedir).resolve()
        suite |= {(start / p).resolve() for p in paths}
    inside = all(p.is_relative_to(rootdir) for p in suite)
    if found and not unread and suite == wanted and inside:
        relative = tuple(sorted(p.relative_to(rootdir).as_posix() for p in suite))
        return ToxSuite(file, tuple(found), relative)
    return ToxSuite(file, unread=tuple(unread))


def _unreadable(command: Command, table: Table) -> str:
    """Why pytest's arguments in ``command`` do not name a suite, if they do not."""
    positionals = pytest_paths(command.args, table)
    if positionals is None:
        return "an option this session does not know (its value cannot be told from a path)"
    if any("::" in p for p in positionals):
        return "it names tests, not a suite"
    given = {a.partition("=")[0] for a in command.args}
    changed = sorted(given & {o for o in RECONFIGURING if o != "-p"})
    if changed:
        return f"it changes pytest's configuration ({', '.join(changed)})"
    return ""


def pytest_paths(args: Sequence[str], table: Table) -> list[str] | None:
    """The arguments pytest reads as paths, with the options of ``table`` (``None``: an
    option it does not know, whose value cannot be told from a path)."""
    found: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            return found + list(args[index + 1 :])
        if arg.startswith("--"):
            name, equals, _ = arg.partition("=")
            if name not in table or table[name] in ("*", "+"):
                return None
            nargs = table[name]
            takes = nargs != 0 and not equals
            if takes and nargs == "?":  # argparse takes the next argument unless an option
                following = args[index + 1] if index + 1 < len(args) else "-"
                takes = not following.startswith("-")
            index += 2 if takes else 1
            continue
        if arg.startswith("-") and len(arg) > 1:
            for at, letter in enumerate(arg[1:], start=1):
                nargs = table.get(f"-{letter}", "unknown")
                if nargs == "unknown" or nargs in ("*", "+"):
                    return None
                if nargs != 0:  # takes the rest of the bundle, else the next argument
                    index += 1 if at == len(arg) - 1 else 0
                    break
            index += 1
            continue
        found.append(arg)
        index += 1
    return found
