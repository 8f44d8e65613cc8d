"""Whether a session ran the whole suite, and what defined the suite.

The suite is what ``pytest`` with no arguments runs in the checkout under the project's own
configuration, as the base has it: the configuration file pytest uses at the checkout (the
repository root's, when it collects the session's rootdir), its ``testpaths`` (or its folder),
``python_files``, ``norecursedirs`` and ``addopts`` (``-m``, ``-k``, ``--deselect``,
``--ignore``, doctests), conftest ``collect_ignore``, the deselection of conftest files and
local plugins the change does not touch, and the declared ``suite`` of
``[tool.bounded-review]``. A run is partial only when it ran less than that: test files its
paths or ignores left out, tests deselected by what was given for this run (the command line,
``PYTEST_ADDOPTS``, ``--lf``, an option a conftest acts on, a conftest the change touches), a
configuration changed at invocation (``-o addopts=...``, ``-c``, ``--rootdir``,
``-p no:doctest``), or the project's outcome configuration weakened at invocation (``-W ignore``
where it makes warnings errors, ``-p no:`` of a plugin it loads:
``core/pytestconfig/outcomes.py``)."""

from __future__ import annotations

import glob
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ...change import git
from ...change.trees.livetree import shown
from ...core.pytestconfig.argv import table_of
from ...core.pytestconfig.outcomes import PLUGINS, weakened_in_file, weakening
from ...core.pytestconfig.pytestini import DEFAULT_NORECURSEDIRS, words
from ...core.pytestconfig.selecting import Selection, paths, scan
from ...models.record import record
from .deselection import DROPPED, Deselections
from .suite import Collected, Ignores, left_out, suite_files

if TYPE_CHECKING:
    from .toxsuite import ToxSuite

SHOWN = 20  # files or tests named before a count


@record(frozen=True)
class Project:
    """The project's own pytest configuration: the folder its paths are relative to, its
    options as the base has them, its file (``None``: pytest's defaults), and the options the
    session ran with when the change touches that file."""

    rootdir: Path
    options: Mapping[str, Any]
    file: Path | None = None
    ran: Mapping[str, Any] | None = None  # None: the file as the base has it


@record
class Wholeness:
    """What defined the suite, what the project's configuration left out, and why the run is
    partial (if it is), with the test files or tests it left out."""

    defined_by: list[str] = field(default_factory=list)
    project_notes: list[str] = field(default_factory=list)  # deselected by the project's own
    partial: list[str] = field(default_factory=list)  # reasons, paths and ignores aside
    blind: list[str] = field(default_factory=list)  # what could not be seen (a shard's too)
    paths_partial: str | None = None  # what the paths and ignores given left out
    left_out: list[str] = field(default_factory=list)  # files or tests
    covered: list[str] = field(default_factory=list)  # suite files the paths given reach
    suite: list[str] = field(default_factory=list)  # the suite's test files, when listed
    run_deselected: list[str] = field(default_factory=list)  # deselected by this run
    project_deselected: list[str] = field(default_factory=list)  # by the project's own

    @property
    def reasons(self) -> list[str]:
        return [*filter(None, [self.paths_partial]), *self.partial, *self.blind]


def _list(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []


def _shown(names: Sequence[str]) -> str:
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return ", ".join(names[:SHOWN]) + more


@record(frozen=True)
class Session:
    """A finished (or finishing) session as the judgement needs it."""

    config: pytest.Config
    selection: Selection
    declared: Sequence[str]  # the declared suite, as configured
    deselections: Deselections
    workers: bool  # xdist ran the tests: deselection happened on the workers
    project: Project
    root: Path  # the checkout
    changed: frozenset[str] = frozenset()  # the files the change touches, from the root
    base_commit: str | None = None  # the base the change is judged against
    listed: bool = False  # list the suite's files even when nothing needs comparing (a shard)
    tox: ToxSuite | None = None  # the project's tox suite, where no testpaths is set

    @property
    def rootdir(self) -> Path:
        return self.project.rootdir.resolve()

    def absolute(self, value: str, origin: str) -> Path:
        # paths on pytest's side are relative to where it started; the declared suite's to
        # the rootdir, like testpaths
        start = self.rootdir if origin == "declared suite" else self.config.invocation_params.dir
        return Path(start, value).resolve()

    def ignores(self, project: bool) -> Ignores:
        chosen = [g for g in self.selection.every("--ignore") if g.project == project]
        globs = [g for g in self.selection.every("--ignore-glob") if g.project == project]
        found = {self.absolute(g.value, g.origin) for g in chosen if g.value}
        patterns = [str(self.absolute(g.value, g.origin)) for g in globs if g.value]
        if project:  # conftest files' collect_ignore, of those this session loaded
            for plugin in self.config.pluginmanager.get_plugins():
                file = getattr(plugin, "__file__", None)
                if not isinstance(file, str) or os.path.basename(file) != "conftest.py":
                    continue
                folder = Path(file).resolve().parent
                ignored = _list(getattr(plugin, "collect_ignore", None))
                found |= {(folder / p).resolve() for p in ignored}
                ignored = _list(getattr(plugin, "collect_ignore_glob", None))
                patterns += [str(folder / p) for p in ignored]
        return Ignores(frozenset(found), tuple(patterns))

    def _project_tokens(self) -> list[str]:
        return [*words(self.project.options.get("addopts", ())), *self.declared]

    def collected(self) -> Collected:
        options, tokens = self.project.options, self._project_tokens()
        globs = [g.value for g in scan(tokens, "addopts", ("--doctest-glob",))]
        tox = self.tox.paths if self.tox is not None else ()
        return Collected(
            testpaths=paths(self.declared) or words(options.get("testpaths", ())) or tox,
            patterns=words(options.get("python_files", ())),
            skipped_dirs=words(options.get("norecursedirs", DEFAULT_NORECURSEDIRS)),
            doctest_modules="--doctest-modules" in tokens,
            doctest_globs=globs,
        )

    def suite(self) -> list[str]:
        return suite_files(self.rootdir, self.collected(), self.ignores(project=True))


def _paths(session: Session, into: Wholeness) -> None:
    """Which of the suite's test files the paths and ignores of this run left out."""
    config = session.config
    args = [str(a) for a in config.args]
    named = [a for a in args if "::" in a]
    if named:
        into.paths_partial = f"only the tests named ran: {' '.join(map(shown, named))}"
        into.left_out = [shown(n) for n in named]
        return
    ignores = session.ignores(project=False)
    given = [Path(config.invocation_params.dir, a).resolve() for a in args]
    if not (ignores or session.listed) and _reaches_all(session, given):
        return  # the paths given hold every folder of the suite: no git to ask
    suite = into.suite = session.suite()
    missed = left_out(suite, session.rootdir, given, ignores)
    theirs = _of_other_repositories(session, missed)
    if theirs:
        missed = [m for m in missed if m not in theirs]
        into.defined_by.append(
            f"test files of submodules the change does not touch are theirs, not this "
            f"project's: {_shown([shown(t) for t in theirs])}"
        )
    into.covered = sorted(set(suite) - set(missed))
    if missed:
        source = config.args_source
        how = (
            " ".join(args)
            if source == pytest.Config.ArgsSource.ARGS
            else "the folder it started in"
        )
        names = [shown(m) for m in missed]
        into.paths_partial = (
            f"{len(missed)} test file(s) of the suite left out by the paths and ignores of this "
            f"run ({shown(how)}): {_shown(names)}"
        )
        into.left_out = names


def _of_other_repositories(session: Session, names: Sequence[str]) -> list[str]:
    """Those of ``names`` (relative to the rootdir) inside a submodule the base records and the
    change does not move, where no ``testpaths`` or declared suite names the suite's folders:
    another repository's tests, run by its own CI, which the project's CI leaves out as often
    as not. A folder git does not record as a submodule (an embedded ``.git`` of the working
    tree) is the project's; so is every folder the project names as its suite."""
    if session.base_commit is None or paths(session.declared):
        return []
    if words(session.project.options.get("testpaths", ())):
        return []
    root = session.root.resolve()
    folders: dict[str, list[str]] = {}
    for name in names:
        file = (session.rootdir / name).resolve()
        if file.is_relative_to(root):
            for folder in file.relative_to(root).parents:
                if folder.name:
                    folders.setdefault(folder.as_posix(), []).append(name)
    links = git.open_repo(root).gitlinks(session.base_commit, sorted(folders))
    theirs = {n for link in links - session.changed for n in folders[link]}
    return [n for n in names if n in theirs]


def _reaches_all(session: Session, given: Sequence[Path]) -> bool:
    """Whether the paths ``given`` hold every folder the suite is collected from."""
    entries = session.collected().testpaths
    if any(glob.has_magic(entry) for entry in entries):
        return False
    roots = [Path(session.rootdir, entry).resolve() for entry in entries] or [session.rootdir]
    return all(any(r == g or r.is_relative_to(g) for g in given) for r in roots)


def _reconfigured(session: Session, into: Wholeness) -> None:
    """A configuration changed at invocation: the suite the session ran is not the project's."""
    file = session.project.file
    own = file.resolve() if file is not None else None
    for given in session.selection.reconfigured:
        if given.option in ("-c", "--config-file") and session.absolute(given.value, "") == own:
            continue
        if given.option == "--rootdir" and session.absolute(given.value, "") == session.rootdir:
            continue
        into.partial.append(f"the configuration was changed at invocation ({given})")
    project = {**session.project.options, PLUGINS: _conftest_plugins(session)}
    table = table_of(session.config)
    for origin, tokens in session.selection.origins:
        for given, why in weakening(tokens, origin, project, table):
            into.partial.append(
                f"the project's outcome configuration was weakened ({given}: {why})"
            )
    ran, file = session.project.ran, session.project.file
    if ran is not None and file is not None:  # the change touches the configuration file
        where = shown(os.path.relpath(file, session.root))
        for given, why in weakened_in_file(ran, where, project):
            into.partial.append(
                f"the change weakens the project's outcome configuration ({given}: {why})"
            )


def _conftest_plugins(session: Session) -> list[str]:
    """The plugins the conftest files the session loaded name in ``pytest_plugins``."""
    named: list[str] = []
    for plugin in session.config.pluginmanager.get_plugins():
        file = getattr(plugin, "__file__", None)
        if isinstance(file, str) and os.path.basename(file) == "conftest.py":
            value = getattr(plugin, "pytest_plugins", ())
            named += [value] if isinstance(value, str) else _list(value)
    return named


def _deselected(session: Session, into: Wholeness) -> None:
    """Sort each deselection by where it came from: the project's own, or this run's."""
    selection, option = session.selection, session.config.option
    for who, ids in sorted(session.deselections.by.items()):
        if who in ("-m", "-k"):
            used = str((option.markexpr if who == "-m" else option.keyword) or "")
            given = selection.effective(who)
            if given is not None and given.value == used:
                _file(into, ids, given.project, str(given))
            else:  # spelled where no option of pytest's is looked for (-vm, -o addopts=...)
                _file(into, ids, False, f"{who} {shlex.quote(used)}, given at invocation")
        elif who == "--deselect":  # a test is the project's if a prefix of its deselects it
            prefixes = selection.every("--deselect")
            own = [g for g in prefixes if g.project]
            mine = [i for i in ids if any(i.startswith(g.value) for g in own)]
            theirs = [i for i in ids if not any(i.startswith(g.value) for g in own)]
            if mine:
                _file(into, mine, True, "; ".join(map(str, own)))
            if theirs:
                others = "; ".join(str(g) for g in prefixes if not g.project)
                _file(into, theirs, False, others or "--deselect")
        elif who.startswith(("conftest ", "local plugin ")):
            why = _driven(session, who.split(" ", 2)[-1])
            _file(into, ids, why is None, f"{who}{why or ''}")
        elif who == DROPPED:  # which hook cannot be told: the change's, if it touches one
            touched = _touched_plugins(session)
            why = f", and the change touches {', '.join(touched)}" if touched else ""
            _file(into, ids, not touched, f"{who}{why}")
        else:
            _file(into, ids, False, who)


def _touched_plugins(session: Session) -> list[str]:
    """The conftest files and local plugins the session loaded, and its configuration file,
    that the change touches."""
    root = session.root.resolve()
    files = {getattr(p, "__file__", None) for p in session.config.pluginmanager.get_plugins()}
    if session.config.inipath:
        files.add(str(session.config.inipath))
    touched = []
    for file in filter(None, files):
        path = Path(str(file)).resolve()
        if path.is_relative_to(root) and path.relative_to(root).as_posix() in session.changed:
            touched.append(path.relative_to(root).as_posix())
    return sorted(touched)


def _driven(session: Session, path: str) -> str | None:
    """Why deselection by the project's file at ``path`` is this run's, not the project's:
    the change touches the file, or an option given at invocation is one it acts on."""
    if path in session.changed:
        return ", which the change touches"
    try:
        text = (session.root / path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ", which could not be read"
    options = {t.partition("=")[0] for t in session.selection.invocation if t.startswith("--")}
    acted = sorted(o for o in options if f'"{o}"' in text or f"'{o}'" in text)
    return f" acting on {', '.join(acted)} given at invocation" if acted else None


def _file(into: Wholeness, ids: Sequence[str], project: bool, source: str) -> None:
    names = [shown(i) for i in ids]
    if project:
        into.project_notes.append(
            f"{len(ids)} test(s) deselected by the project's configuration ({source}); not reviewed"
        )
        into.defined_by.append(f"{source} ({len(ids)} deselected)")
        into.project_deselected += names
    else:
        into.partial.append(f"{len(ids)} test(s) deselected by this run ({source})")
        into.left_out += names
        into.run_deselected += names


def judge(session: Session) -> Wholeness:
    """What defined the suite of ``session``, and whether it ran the whole of it."""
    into = Wholeness()
    testpaths = session.collected().testpaths
    origin = "declared suite" if paths(session.declared) else "testpaths"
    where = session.project.file
    config = f" ({shown(os.path.relpath(where, session.root))})" if where else ""
    tox = session.tox
    if tox is not None and tox.commands and tuple(testpaths) == tox.paths:
        into.defined_by.append(shown(tox.defined_by))
    else:
        into.defined_by.append(
            f"{origin}: {' '.join(testpaths)}{config}"
            if testpaths
            else f"the rootdir, no testpaths{config}"
        )
    _paths(session, into)
    if into.paths_partial and tox is not None and tox.unread:
        unread = "; ".join(map(shown, tox.unread))
        into.paths_partial += f" (tox's pytest commands that could not be read: {unread})"
    _reconfigured(session, into)
    _deselected(session, into)
    if session.workers and not session.deselections.reported:
        selection = session.selection
        unseen = [g for o in ("-m", "-k") if (g := selection.effective(o)) and not g.project]
        unseen += [g for g in selection.every("--deselect") if not g.project]
        if unseen:
            into.blind.append(
                "deselection under xdist that no worker reported: " + "; ".join(map(str, unseen))
            )
    return into
