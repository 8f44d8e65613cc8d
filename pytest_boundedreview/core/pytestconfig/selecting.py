"""Where each selecting option of a session came from: the project's own configuration (the
ini's ``addopts``, the declared ``suite``) defines the suite; the command line and
``PYTEST_ADDOPTS`` only narrow one run of it."""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Sequence

from ...models.record import record
from .argv import BUILTIN, Table, read

# The options that leave tests out, as pytest names them (it takes no abbreviation).
_SHORT = ("-m", "-k")
_LONG = ("--deselect", "--ignore", "--ignore-glob")
SELECTING = _SHORT + _LONG
PROJECT = ("addopts", "declared suite")  # the project's own origins; the rest is the invocation


@record(frozen=True)
class Given:
    """One selecting option as given: where, which, and its value."""

    origin: str  # "addopts", "declared suite", "PYTEST_ADDOPTS" or "command line"
    option: str
    value: str

    @property
    def project(self) -> bool:
        return self.origin in PROJECT

    def __str__(self) -> str:
        value = f" {shlex.quote(self.value)}" if self.value else ""
        return f"{self.origin}: {self.option}{value}"


def scan(
    tokens: Sequence[str], origin: str, options: Sequence[str] = SELECTING, table: Table = BUILTIN
) -> list[Given]:
    """The ``options`` among ``tokens``, each with its value, read as pytest reads them with
    the options of ``table`` (``-m EXPR``, ``-mEXPR``, ``-qm EXPR``, ``-m=EXPR``,
    ``--ignore=PATH``...: :mod:`.argv`)."""
    return [Given(origin, option, value) for option, value in read(tokens, options, table)]


# What reconfigures the collection itself when given at invocation: an ini override of a
# collection key, another configuration file or rootdir, conftest files cut off, a collecting
# plugin turned off.
RECONFIGURING = ("-o", "--override-ini", "-c", "--config-file", "--rootdir", "--confcutdir", "-p")
COLLECTION_KEYS = frozenset(
    {"addopts", "testpaths", "python_files", "python_classes", "python_functions", "norecursedirs"}
)
COLLECTING_PLUGINS = frozenset({"doctest", "python", "unittest", "main"})


def reconfiguring(tokens: Sequence[str], origin: str, table: Table = BUILTIN) -> list[Given]:
    """The options among ``tokens`` that change how pytest collects: ``-o KEY=...`` of a
    collection key, ``-c``, ``--rootdir``, ``--confcutdir``, ``--noconftest``, ``-p no:NAME``
    of a collecting plugin (``-c`` and ``--rootdir`` may name the project's own; the caller
    compares)."""
    found = []
    for given in scan(tokens, origin, RECONFIGURING, table):
        if given.option in ("-o", "--override-ini"):
            if given.value.partition("=")[0].strip() in COLLECTION_KEYS:
                found.append(given)
        elif given.option == "-p":
            if given.value.startswith("no:") and given.value[3:] in COLLECTING_PLUGINS:
                found.append(given)
        else:
            found.append(given)
    if "--noconftest" in tokens:
        found.append(Given(origin, "--noconftest", ""))
    return found


def _unvalued(tokens: Sequence[str]) -> Iterator[str]:
    """The tokens that are not the value of a selecting option given apart (``-m EXPR``)."""
    skip = False
    for token in map(str, tokens):
        if skip:
            skip = False
        elif token in SELECTING:
            skip = True
        else:
            yield token


def paths(tokens: Sequence[str]) -> list[str]:
    """The tokens that are neither a selecting option nor its value: paths."""
    return [t for t in _unvalued(tokens) if not t.startswith("-")]


def unknown(tokens: Sequence[str]) -> list[str]:
    """The options among ``tokens`` that are not selecting ones (a declared suite holds paths
    and selecting options only)."""
    return [t for t in _unvalued(tokens) if t.startswith("-") and not scan([t], "")]


@record(frozen=True)
class Selection:
    """Every selecting option of a session, in the order pytest reads them (``addopts``,
    ``PYTEST_ADDOPTS``, the command line), and the declared suite's."""

    given: tuple[Given, ...]
    declared: tuple[Given, ...] = ()
    reconfigured: tuple[Given, ...] = ()  # given at invocation: see :func:`reconfiguring`
    invocation: tuple[str, ...] = ()  # every token given at invocation
    # the same tokens by where they were given: PYTEST_ADDOPTS, then the command line
    origins: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def of(
        cls,
        addopts: Sequence[str],
        env_addopts: str,
        command_line: Sequence[str],
        declared: Sequence[str] = (),
        table: Table = BUILTIN,
    ) -> Selection:
        """The selection of a session given these tokens, read with its parser's ``table``."""
        try:
            from_env = shlex.split(env_addopts)
        except ValueError:
            from_env = env_addopts.split()
        given = [
            *scan(addopts, "addopts", SELECTING, table),
            *scan(from_env, "PYTEST_ADDOPTS", SELECTING, table),
            *scan(command_line, "command line", SELECTING, table),
        ]
        reconfigured = [
            *reconfiguring(from_env, "PYTEST_ADDOPTS", table),
            *reconfiguring(command_line, "command line", table),
        ]
        return cls(
            tuple(given),
            tuple(scan(declared, "declared suite", SELECTING, table)),
            tuple(reconfigured),
            (*from_env, *map(str, command_line)),
            (("PYTEST_ADDOPTS", tuple(from_env)), ("command line", tuple(map(str, command_line)))),
        )

    def effective(self, option: str) -> Given | None:
        """Where the value pytest used for a last-one-wins option (``-m``, ``-k``) came from:
        the project's own when its configuration gives that very value."""
        last = next((g for g in reversed(self.given) if g.option == option), None)
        if last is None or last.project:
            return last
        own = [g for g in (*self.declared, *self.given) if g.option == option and g.project]
        return next((g for g in own if g.value == last.value), last)

    def every(self, option: str) -> list[Given]:
        """Every value of a repeatable option (``--deselect``, ``--ignore``), the declared
        suite's included; a value the project gives counts as the project's."""
        own = {g.value for g in (*self.declared, *self.given) if g.option == option and g.project}
        found = [g for g in (*self.declared, *self.given) if g.option == option]
        return [g for g in found if g.project or g.value not in own]
