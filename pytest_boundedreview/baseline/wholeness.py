"""Whether a session ran the whole suite, and what defined the suite.

The suite is what ``pytest`` with no arguments runs in the checkout under the project's own
configuration: ``testpaths`` (or the rootdir), ``python_files``, ``norecursedirs``, the ini's
``addopts`` (``-m``, ``-k``, ``--deselect``, ``--ignore``), conftest ``collect_ignore`` and a
conftest's own deselection, and the declared ``suite`` of ``[tool.bounded-review]``. A run is
partial only when it ran less than that: test files its paths or ignores left out, or tests
deselected by what was given for this run (the command line, ``PYTEST_ADDOPTS``, ``--lf``)."""

from __future__ import annotations

import glob
import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..core.selecting import Given, Selection, paths
from .deselection import Deselections
from .suite import Collected, Ignores, left_out, suite_files

SHOWN = 20  # files or tests named before a count


@dataclass
class Wholeness:
    """What defined the suite, what the project's configuration left out, and why the run is
    partial (if it is), with the test files or tests it left out."""

    defined_by: list[str] = field(default_factory=list)
    project_notes: list[str] = field(default_factory=list)  # deselected by the project's own
    partial: list[str] = field(default_factory=list)  # reasons, paths and ignores aside
    paths_partial: str | None = None  # what the paths and ignores given left out
    left_out: list[str] = field(default_factory=list)  # files or tests
    covered: list[str] = field(default_factory=list)  # suite files the paths given reach
    suite: list[str] = field(default_factory=list)  # the suite's test files, when listed
    run_deselected: list[str] = field(default_factory=list)  # deselected by this run

    @property
    def reasons(self) -> list[str]:
        return [*filter(None, [self.paths_partial]), *self.partial]


def _list(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _shown(names: Sequence[str]) -> str:
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return ", ".join(names[:SHOWN]) + more


@dataclass(frozen=True)
class Session:
    """A finished (or finishing) session as the judgement needs it."""

    config: pytest.Config
    selection: Selection
    declared: Sequence[str]  # the declared suite, as configured
    deselections: Deselections
    workers: bool  # xdist ran the tests: deselection happened on the workers
    listed: bool = False  # list the suite's files even when nothing needs comparing (a shard)

    @property
    def rootdir(self) -> Path:
        return Path(self.config.rootpath).resolve()

    def _absolute(self, value: str, origin: str) -> Path:
        # paths on pytest's side are relative to where it started; the declared suite's to
        # the rootdir, like testpaths
        start = self.rootdir if origin == "declared suite" else self.config.invocation_params.dir
        return Path(start, value).resolve()

    def ignores(self, project: bool) -> Ignores:
        chosen = [g for g in (*self.selection.every("--ignore"),) if g.project == project]
        globs = [g for g in self.selection.every("--ignore-glob") if g.project == project]
        found = {self._absolute(g.value, g.origin) for g in chosen}
        patterns = [str(self._absolute(g.value, g.origin)) for g in globs]
        if project:  # conftest files' collect_ignore, of those this session loaded
            for plugin in self.config.pluginmanager.get_plugins():
                file = getattr(plugin, "__file__", None)
                if not isinstance(file, str) or os.path.basename(file) != "conftest.py":
                    continue
                folder = Path(file).resolve().parent
                found |= {
                    (folder / p).resolve() for p in _list(getattr(plugin, "collect_ignore", None))
                }
                patterns += [
                    str(folder / p) for p in _list(getattr(plugin, "collect_ignore_glob", None))
                ]
        return Ignores(frozenset(found), tuple(patterns))

    def collected(self) -> Collected:
        ini = self.config.getini
        project_tokens = [*_list(ini("addopts")), *self.declared]
        globs = [
            after
            for token, after in itertools.pairwise(project_tokens)
            if token == "--doctest-glob"
        ]
        globs += [t.partition("=")[2] for t in project_tokens if t.startswith("--doctest-glob=")]
        declared_paths = paths(self.declared)
        return Collected(
            testpaths=declared_paths or _list(ini("testpaths")),
            patterns=_list(ini("python_files")),
            skipped_dirs=_list(ini("norecursedirs")),
            doctest_modules="--doctest-modules" in project_tokens,
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
        into.paths_partial = f"only the tests named ran: {' '.join(named)}"
        into.left_out = named
        return
    ignores = session.ignores(project=False)
    source = config.args_source
    given = [Path(config.invocation_params.dir, a).resolve() for a in args]
    if not (ignores or session.listed) and _reaches_all(session, given):
        return  # the paths given hold every folder of the suite: no git to ask
    suite = into.suite = session.suite()
    missed = left_out(suite, session.rootdir, given, ignores)
    into.covered = sorted(set(suite) - set(missed))
    if missed:
        how = (
            " ".join(args)
            if source == pytest.Config.ArgsSource.ARGS
            else "the folder it started in"
        )
        into.paths_partial = (
            f"{len(missed)} test file(s) of the suite left out by the paths and ignores of this "
            f"run ({how}): {_shown(missed)}"
        )
        into.left_out = missed


def _reaches_all(session: Session, given: Sequence[Path]) -> bool:
    """Whether the paths ``given`` hold every folder the suite is collected from."""
    entries = session.collected().testpaths
    if any(glob.has_magic(entry) for entry in entries):
        return False
    roots = [Path(session.rootdir, entry).resolve() for entry in entries] or [session.rootdir]
    return all(any(r == g or r.is_relative_to(g) for g in given) for r in roots)


def _deselected(session: Session, into: Wholeness) -> None:
    """Sort each deselection by where it came from: the project's own, or this run's."""
    selection = session.selection
    for who, ids in sorted(session.deselections.by.items()):
        if who in ("-m", "-k"):
            given = selection.effective(who)
            _file(into, ids, given.project if given else False, str(given) if given else who)
        elif who == "--deselect":  # a test is the project's if a prefix of its deselects it
            prefixes = selection.every("--deselect")
            own = [g for g in prefixes if g.project]
            mine = [i for i in ids if _matched(i, own)]
            theirs = [i for i in ids if not _matched(i, own)]
            if mine:
                _file(into, mine, True, "; ".join(map(str, own)))
            if theirs:
                _file(into, theirs, False, "; ".join(str(g) for g in prefixes if not g.project))
        elif who.startswith("conftest "):
            _file(into, ids, True, f"{who}'s pytest_collection_modifyitems")
        else:
            _file(into, ids, False, who)


def _matched(nodeid: str, given: Sequence[Given]) -> bool:
    return any(nodeid.startswith(g.value) for g in given)


def _file(into: Wholeness, ids: Sequence[str], project: bool, source: str) -> None:
    if project:
        into.project_notes.append(
            f"{len(ids)} test(s) deselected by the project's configuration ({source}); not reviewed"
        )
        into.defined_by.append(f"{source} ({len(ids)} deselected)")
    else:
        into.partial.append(f"{len(ids)} test(s) deselected by this run ({source})")
        into.left_out += ids
        into.run_deselected += ids


def judge(session: Session) -> Wholeness:
    """What defined the suite of ``session``, and whether it ran the whole of it."""
    into = Wholeness()
    config = session.config
    testpaths = paths(session.declared) or _list(config.getini("testpaths"))
    origin = "declared suite" if paths(session.declared) else "testpaths"
    into.defined_by.append(
        f"{origin}: {' '.join(testpaths)}" if testpaths else "the rootdir (no testpaths)"
    )
    _paths(session, into)
    _deselected(session, into)
    if session.workers and not session.deselections.reported:
        invocation = [
            g for o in ("-m", "-k") if (g := session.selection.effective(o)) and not g.project
        ]
        invocation += [g for g in session.selection.every("--deselect") if not g.project]
        if invocation:
            into.partial.append(
                "deselection under xdist that no worker reported: "
                + "; ".join(map(str, invocation))
            )
    return into
