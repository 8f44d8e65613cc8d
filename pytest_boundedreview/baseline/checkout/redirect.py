"""What runs inside a re-run in a copy of the repository: imports of the live repository's
code turned to the copy's, and a report of what still ran from the live repository.

``basefirst.prepare`` has the child load this file first (before anything but ``.pth`` files
has run), from the tool's own installation; it then installs:

- the ``sys.path`` entries inside the live repository moved to the same folders in the copy;
- a finder first on ``sys.meta_path`` that asks the others and, for a module whose file (links
  followed) lies in the live repository, imports the same file of the copy instead (a module
  the copy has no file for, added by the change or built in the working tree, is imported as
  it is, and reported);
- an audit hook that notes every module executed from a file of the live repository, for what
  bypasses the finders (``spec_from_file_location`` of an absolute path, ``runpy``).

A module found in the copy is given the working tree's compiled module of the same file first,
when the two files have the same bytes (see ``pycache.py``, loaded from beside this file).

When compiled modules built in the working tree were left out of the copy (``withheld.json``
in the record folder lists their files), an import of one of them that finds nothing is noted
too: what the run then did says nothing about the base as the working tree runs it.

At exit (and when its session ends, see :func:`report_now`) the child writes the modules it ran
from the live repository (``provenance.json``);
subprocesses that start from it do the same, each in a file of its own when they have any. Code
inside the standard library's folder and ``site-packages`` (a ``.venv`` in the repository) is
not the repository's code, and neither is this file (the tool reviewing itself from an
editable install runs it from the live repository). Loaded on its own, it imports only the
standard library.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec, PathFinder
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from types import CodeType
from typing import Any

ENV = "BOUNDED_REVIEW_BASE_FIRST"
REPORT = "provenance.json"
WITHHELD = "withheld.json"  # the compiled modules' files (relative) the copy was not given
_SITE_FOLDERS = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


class Place:
    """Where code comes from: the live repository, or elsewhere (the copy, the interpreter,
    installed packages)."""

    def __init__(self, live: str, copy: str, own: Sequence[str] = ()) -> None:
        self.live = os.path.realpath(live)
        self._own = frozenset(own)  # this module's files: the tool's, wherever it is installed
        self.copy = os.path.realpath(copy)
        self._live = _folder(self.live)
        # The standard library's folder, not the interpreter's prefix (/usr holds /usr/src/app);
        # installed packages are in site-packages (see relative()).
        stdlib = os.path.realpath(os.path.dirname(os.__file__))
        self._elsewhere = (_folder(self.copy), _folder(stdlib))
        self._real_folders: dict[str, str] = {}
        self._answers: dict[str, str | None] = {}

    def real(self, path: str) -> str:
        """``path`` with symlinks followed (its folder's answer is kept: imports ask often)."""
        folder, name = os.path.split(path)
        real_folder = self._real_folders.get(folder)
        if real_folder is None:
            real_folder = self._real_folders[folder] = os.path.realpath(folder)
        if os.path.islink(path):
            return os.path.realpath(path)
        return os.path.join(real_folder, name)

    def relative(self, path: str) -> str | None:
        """Where ``path`` (links followed) lies in the live repository; ``None`` when it is not
        the repository's code. (Each module's file is asked about when it is found, when it
        runs and at exit: the answer is kept.)"""
        try:
            return self._answers[path]
        except KeyError:
            answer = self._answers[path] = self._relative(path)
            return answer

    def in_copy(self, path: str) -> str | None:
        """Where ``path`` (links followed) lies in the copy; ``None`` when it does not."""
        real = self.real(path)
        return os.path.relpath(real, self.copy) if real.startswith(_folder(self.copy)) else None

    def _relative(self, path: str) -> str | None:
        if not os.path.isabs(path):
            return None
        real = self.real(path)
        inside = _folder(real)
        if not inside.startswith(self._live) or real in self._own:
            return None
        if inside.startswith(self._elsewhere) or any(s in real for s in _SITE_FOLDERS):
            return None
        return os.path.relpath(real, self.live)


def _folder(path: str) -> str:
    return path.rstrip(os.sep) + os.sep


class Redirect:
    """The meta path finder that imports the copy's module where another finder offers the
    live repository's."""

    def __init__(self, place: Place, withheld: Sequence[str] = (), bytecode: Any = None) -> None:
        self.place = place
        self._bytecode = bytecode  # pycache.py, when the copy is given compiled modules
        self.redirected: set[str] = set()
        self.lacking: dict[str, str] = {}  # live file -> module the copy has no file for
        self._asking = threading.local()
        # Each withheld file as the parts of a module name (``pkg/_x.cpython-312.so``:
        # pkg, _x); a module whose name ends with those parts is one of them.
        self._withheld = {(*Path(f).parent.parts, Path(f).name.partition(".")[0]) for f in withheld}
        self.tried: set[str] = set()  # withheld modules imported in vain

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: object = None
    ) -> ModuleSpec | None:
        asking: set[str] = self._asking.__dict__.setdefault("names", set())
        if name in asking:  # a finder below asks for the same module again
            return None
        asking.add(name)
        try:
            spec = self._others(name, path, target)
        finally:
            asking.discard(name)
        if spec is None:
            if self._withheld and self._is_withheld(name):
                self.tried.add(name)
            return None
        return self._in_copy(name, spec)

    def _is_withheld(self, name: str) -> bool:
        parts = tuple(name.split("."))
        return any(
            file[-len(parts) :] == parts for file in self._withheld if len(file) >= len(parts)
        )

    def _others(self, name: str, path: Sequence[str] | None, target: object) -> ModuleSpec | None:
        """What the finders after this one answer, as the import system would ask them."""
        finders = sys.meta_path
        start = next((i + 1 for i, f in enumerate(finders) if f is self), 0)
        for finder in finders[start:]:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:  # a legacy finder: the import system asks it and the rest
                return None
            spec: ModuleSpec | None = find(name, path, target)
            if spec is not None:
                return spec
        return None

    def _in_copy(self, name: str, spec: ModuleSpec) -> ModuleSpec:
        """``spec``, or the copy's module in its place when ``spec`` is the live one's."""
        if spec.has_location and spec.origin:
            relative = self.place.relative(spec.origin)
            if relative is None:
                mine = self.place.in_copy(spec.origin) if spec.cached else None
                if mine is not None and self._bytecode is not None:
                    # Only ever quicker: whatever goes wrong, the module is compiled as usual.
                    with contextlib.suppress(Exception):
                        self._bytecode.give_compiled(self.place.live, self.place.copy, mine)
                return spec
            package = spec.submodule_search_locations is not None
            found = _copy_spec(name, Path(self.place.copy), Path(relative), package)
            if found is None:
                # Added by the change, or built or generated in the working tree (a compiled
                # extension, a version file): the base has no such file. Imported as it is
                # and reported, it makes the run's answers unknown; a made-up ImportError
                # could instead pass for a changed failure.
                self.lacking[self.place.real(spec.origin)] = name
                return spec
            self.redirected.add(name)
            return found
        locations = spec.submodule_search_locations
        if spec.origin is not None or locations is None:
            return spec
        # A namespace package: its folders in the live repository become the copy's (one
        # without a counterpart stays; what is found in it is redirected file by file).
        moved = [self._folder_in_copy(location) for location in locations]
        if moved == list(locations):
            return spec
        self.redirected.add(name)
        namespace = ModuleSpec(name, None, is_package=True)
        namespace.submodule_search_locations = moved
        return namespace

    def _folder_in_copy(self, folder: str) -> str:
        relative = self.place.relative(folder)
        if relative is None:
            return folder
        there = os.path.normpath(os.path.join(self.place.copy, relative))
        return there if os.path.isdir(there) else folder


def _copy_spec(name: str, copy: Path, relative: Path, package: bool) -> ModuleSpec | None:
    """The spec of module ``name`` whose live file is ``relative`` (``__init__`` of a package
    when ``package``), found in ``copy``; ``None`` when the copy has no such module."""
    named = relative.parent if package else relative
    if named.name.partition(".")[0] == name.rpartition(".")[2]:
        # Found as an import finds it there: a module, a package or a namespace.
        return PathFinder.find_spec(name, [str(copy / named.parent)])
    file = copy / relative  # a finder's mapping to a file of another name
    if not file.is_file():
        return None
    locations = [str(file.parent)] if package else None
    return spec_from_file_location(name, file, submodule_search_locations=locations)


class Provenance:
    """Notes each module this process runs from a file of the live repository, and writes
    them at exit."""

    def __init__(self, place: Place, redirect: Redirect, report: Path) -> None:
        self.place, self.redirect, self.report = place, redirect, report
        self.files: dict[str, str] = {}  # live file -> the module run from it ("" unknown)

    def audit(self, event: str, args: tuple[object, ...]) -> None:
        if event == "exec" and args and isinstance(args[0], CodeType):
            filename = args[0].co_filename
            if filename[:1] == os.sep and self.place.relative(filename) is not None:
                real = self.place.real(filename)
                self.files[real] = self.files.get(real) or _running(filename)

    def note(self, name: str, module: object) -> None:
        try:
            file = getattr(module, "__file__", None)
        except Exception:  # a lazy module's __getattr__ may raise anything
            return
        if isinstance(file, str) and self.place.relative(file) is not None:
            real = self.place.real(file)
            self.files[real] = self.files.get(real) or name

    def live(self) -> list[list[str]]:
        """``[module, file]`` of what ran from the live repository (module ``""`` when it is
        not known)."""
        for file, name in self.redirect.lacking.items():
            self.files[file] = self.files.get(file) or name
        for name, module in list(sys.modules.items()):
            self.note(name, module)
        return sorted([name, file] for file, name in self.files.items())

    def write(self, always: bool) -> None:
        live, tried = self.live(), sorted(self.redirect.tried)
        if not (live or tried or always):
            return
        data: dict[str, list[Any]] = {"live": live, "redirected": sorted(self.redirect.redirected)}
        if tried:
            data["withheld"] = tried
        # Whole or not at all: the starter may end this process at any moment once its result
        # is written. When the re-run is over and its folder gone, nobody reads this any more.
        partial = self.report.with_name(f"{self.report.name}.{os.getpid()}.part")
        with contextlib.suppress(OSError):
            partial.write_text(json.dumps(data), encoding="utf-8")
            os.replace(partial, self.report)


def _running(filename: str) -> str:
    """The name of the module whose code from ``filename`` is about to run: the namespace
    ``exec`` was given is a local of its caller (the loader's, ``runpy``'s, or anyone's)."""
    caller = sys._getframe(2)  # this, the audit hook, then exec's caller
    for value in caller.f_locals.values():
        for candidate in value if isinstance(value, tuple) else (value,):
            if isinstance(candidate, dict) and candidate.get("__file__") == filename:
                name = candidate.get("__name__")
                return name if isinstance(name, str) else ""
    return ""


def install(live: str, copy: str, record: str) -> Provenance:
    """Import ``copy``'s code in place of ``live``'s from now on in this process, and report
    at exit into ``record`` what was not."""
    place = Place(live, copy, [os.path.realpath(__file__), os.path.realpath(_PYCACHE)])
    for index, entry in enumerate(sys.path):
        relative = place.relative(entry) if entry else None
        there = os.path.normpath(os.path.join(place.copy, relative)) if relative else ""
        if there and os.path.isdir(there):
            sys.path[index] = there
    try:
        withheld = json.loads(Path(record, WITHHELD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        withheld = []
    if not isinstance(withheld, list) or not all(isinstance(f, str) for f in withheld):
        withheld = []
    redirect = Redirect(place, withheld, _pycache())
    sys.meta_path.insert(0, redirect)
    main = f"--bounded-review-record={record}" in sys.orig_argv
    report = REPORT if main else f"provenance-{os.getpid()}.json"
    provenance = Provenance(place, redirect, Path(record, report))
    for name, module in list(sys.modules.items()):  # what .pth files ran before this
        provenance.note(name, module)
    sys.addaudithook(provenance.audit)
    pid = os.getpid()  # a forked child is not the re-run itself

    def write() -> None:
        provenance.write(main and os.getpid() == pid)

    _writers.append(write)
    atexit.register(write)
    return provenance


_PYCACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pycache.py")


def _pycache() -> Any:
    """``pycache.py`` beside this file, loaded as this file is (standard library only)."""
    name = "_bounded_review_pycache"
    module = sys.modules.get(name)
    if module is None:
        spec = spec_from_file_location(name, _PYCACHE)
        if spec is None or spec.loader is None:
            return None
        module = sys.modules[name] = module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception:  # then nothing is given, and the re-run runs as it would without
            del sys.modules[name]
            return None
    return module


_writers: list[Callable[[], None]] = []


def report_now() -> None:
    """Write this process's reports now, before its exit (which its starter may not wait
    for, see recorder.py); at exit they are written again with what ran since."""
    for write in _writers:
        write()


_installed: set[str] = set()


def install_from_environment() -> None:
    """:func:`install` as ``basefirst.prepare`` configured this process (and its children):
    once for each re-run it runs inside (a re-run whose tests start re-runs of their own), each
    once however many boot folders lead here."""
    for config in json.loads(os.environ[ENV]):
        if config["record"] not in _installed:
            _installed.add(config["record"])
            install(config["live"], config["copy"], config["record"])
