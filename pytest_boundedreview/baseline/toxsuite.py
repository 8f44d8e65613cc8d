"""The suite a project's tox configuration runs, where its pytest configuration sets no
``testpaths``: a session whose paths are exactly those one pytest command of tox gives is the
whole suite (``pytest tests examples/tiny/tests`` as tox runs it leaves out no stray
``examples/test_*.py``). The tox file is read as the base has it when the change touches it
(a change cannot define its own suite), and never run: a command whose arguments cannot be read
(a substitution only tox resolves, an option this session does not know) defines nothing, and
is named."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from ..core.argv import Table
from ..core.selecting import RECONFIGURING
from ..core.toxconfig import Command, commands
from ..models.record import record
from ..target import git


@record(frozen=True)
class ToxSuite:
    """The tox command the session's paths match (``None``: none), those paths relative to
    the rootdir, and why other pytest commands of tox could not be read."""

    file: str
    command: Command | None = None
    paths: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()

    @property
    def defined_by(self) -> str:
        assert self.command is not None
        return f"tox: {self.command.text} ({self.command.where})"


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
        where = (folder / name).as_posix()
        if base_commit and where in changed:
            return repo.show(base_commit, where)  # the base's, or none when the change adds it
        try:
            return (rootdir / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    file, found = commands(read)
    if not file:
        return None
    wanted = {p.resolve() for p in given}
    unread = []
    for command in found:
        why = command.unresolved or _unreadable(command, table)
        if why:
            unread.append(f"{command.where} `{command.text}`: {why}")
            continue
        paths = pytest_paths(command.args, table) or []
        start = (rootdir / command.changedir).resolve()
        absolute = {(start / p).resolve() for p in paths}
        if paths and absolute == wanted and all(p.is_relative_to(rootdir) for p in absolute):
            relative = tuple(sorted(p.relative_to(rootdir).as_posix() for p in absolute))
            return ToxSuite(file, command, relative, tuple(unread))
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
