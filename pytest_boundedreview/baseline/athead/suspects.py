"""The project's code in a process that takes part in running or reporting its tests: what can
have made a test's report differ from its call.

Found by what is registered and bound, not by the names in the source: each implementation of
a hook of the run-test protocol (by whatever name its module binds it), the module that
registers it, the ``runtest`` of a test's class and the classes it derives from, and any
function or method of pytest's, pluggy's, xdist's or this plugin's modules that code of the
project replaced. Code that is installed (pytest, its plugins, the standard library) is left
out: only the project's own can be the change's.
"""

from __future__ import annotations

import functools
import os
import site
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

import pytest

Suspect = tuple[str, int, str]  # the file (absolute), its line, what the code there is

# Hooks that run a test or make, carry or count its report. Collection hooks are left out: what
# they install on an item (its class, its runtest, its function) is read off the item itself.
HOOKS = (
    "pytest_runtestloop",
    "pytest_runtest_protocol",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_pyfunc_call",
    "pytest_runtest_teardown",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_report_teststatus",
    "pytest_report_to_serializable",
    "pytest_report_from_serializable",
)
# Modules whose functions decide how a test runs and what its report says.
MODULES = (
    "_pytest.runner",
    "_pytest.reports",
    "_pytest.python",
    "_pytest.main",
    "_pytest.nodes",
    "_pytest.skipping",
    "_pytest.unittest",
    "_pytest.outcomes",
    "_pytest.fixtures",
    "pluggy._callers",
    "pluggy._hooks",
    "pluggy._manager",
    "pluggy._result",
    "xdist.remote",
    "xdist.dsession",
    "xdist.workermanage",
    "pytest_boundedreview.baseline.failures.outcomes",
    "pytest_boundedreview.baseline.athead.witness",
    "pytest_boundedreview.baseline.athead.witnessed",
)


@functools.cache
def _installed() -> tuple[str, ...]:
    """Folders of installed code and of the interpreter's own library."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages()}
    folders.add(os.path.dirname(os.path.dirname(pytest.__file__)))  # pytest, where it lies
    return tuple(os.path.join(os.path.realpath(f), "") for f in folders)


@functools.cache
def _real(filename: str) -> str:
    """``os.path.realpath``, once per file: a scan reads the same few hundred code files'
    names thousands of times."""
    return os.path.realpath(filename)


def _code_file(thing: object) -> tuple[str, int] | None:
    """The file and first line of a function's code, through methods, class and static
    methods, properties and partials; None for anything else."""
    for _ in range(4):
        if isinstance(thing, (classmethod, staticmethod)) or hasattr(thing, "__func__"):
            thing = getattr(thing, "__func__", None)
        elif isinstance(thing, property):
            thing = thing.fget
        elif isinstance(thing, functools.partial):
            thing = thing.func
        else:
            break
    code = getattr(thing, "__code__", None)
    filename = getattr(code, "co_filename", None)
    if not isinstance(filename, str) or filename.startswith("<"):
        return None
    return _real(filename), int(getattr(code, "co_firstlineno", 1))


def _project(file: str, root: Path) -> bool:
    top = os.path.join(_real(str(root)), "")
    return file.startswith(top) and not file.startswith(_installed())


@functools.cache
def runs_through_obj(runtest: object) -> bool:
    """Whether a test class whose ``runtest`` is this runs its test function through
    ``item.obj`` as pytest's does: it is pytest's, or not an installed plugin's (the
    project's code must then call the test it is given)."""
    found = _code_file(runtest)
    if found is None:
        return True
    own = _code_file(pytest.Function.runtest)
    return found == own or not found[0].startswith(_installed())


def _add(out: set[Suspect], thing: object, what: str) -> None:
    found = _code_file(thing)
    if found is not None:
        out.add((found[0], found[1], what))


def _hooks(pluginmanager: pytest.PytestPluginManager, out: set[Suspect]) -> None:
    for name in HOOKS:
        caller = getattr(pluginmanager.hook, name, None)
        for impl in caller.get_hookimpls() if caller is not None else ():
            function = impl.function
            label = getattr(function, "__qualname__", repr(function))
            _add(out, function, f"implements {name} ({label})")
            plugin = impl.plugin
            file = getattr(plugin, "__file__", None) if isinstance(plugin, ModuleType) else None
            if isinstance(file, str):  # the module that binds it, whatever its source
                out.add((os.path.realpath(file), 1, f"registers {name} ({label})"))


def _classes(types: Iterable[type], out: set[Suspect]) -> None:
    for cls in types:
        _add(out, getattr(cls, "runtest", None), f"runs {cls.__qualname__} tests (runtest)")
        for klass in cls.__mro__:
            module = sys.modules.get(klass.__module__)
            file = getattr(module, "__file__", None)
            if isinstance(file, str):
                out.add((os.path.realpath(file), 1, f"defines the test class {klass.__qualname__}"))


def _replaced(out: set[Suspect], root: Path) -> None:
    """Functions and methods of the modules that run tests whose code is the project's."""
    for name in MODULES:
        module = sys.modules.get(name)
        for attr, value in list(vars(module).items()) if module is not None else ():
            members = (
                list(vars(value).items())
                if isinstance(value, type) and value.__module__ == name
                else [("", value)]
            )
            for member, thing in members:
                found = _code_file(thing)
                if found is not None and _project(found[0], root):
                    where = f"{name}.{attr}" + (f".{member}" if member else "")
                    out.add((found[0], found[1], f"replaces {where}"))


def _item(item: pytest.Item, out: set[Suspect]) -> None:
    """What a test runs through as it is now: its own ``runtest``, its function and the
    fixtures it uses."""
    own = vars(item)
    if "runtest" in own:
        _add(out, own["runtest"], "runs this test (its own runtest)")
    if "_obj" in own:  # the test function, or what replaced it (``item.obj`` stores it here)
        _add(out, own["_obj"], "is called as the test function (item.obj)")
    info = getattr(item, "_fixtureinfo", None)
    defs = getattr(info, "name2fixturedefs", None)
    for name, fixtures in sorted(defs.items()) if isinstance(defs, dict) else ():
        for fixture in fixtures:
            _add(out, getattr(fixture, "func", None), f"is the fixture {name}, used by the test")


def found(
    pluginmanager: pytest.PytestPluginManager,
    types: Iterable[type],
    root: Path,
    items: Iterable[pytest.Item] = (),
) -> list[Suspect]:
    """The project's code in this process that runs or reports tests of ``types``, and that
    ``items`` run through."""
    out: set[Suspect] = set()
    for item in items:
        _item(item, out)
    _hooks(pluginmanager, out)
    _classes([pytest.Function, *types], out)
    _replaced(out, root)
    return sorted(s for s in out if _project(s[0], root))
