"""Where each selecting option of a session came from: the project's own configuration (the
ini's ``addopts``, the declared ``suite``) defines the suite; the command line and
``PYTEST_ADDOPTS`` only narrow one run of it."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

# The options that leave tests out, spelled as pytest spells them (pytest takes no abbreviation).
_SHORT = ("-m", "-k")
_LONG = ("--deselect", "--ignore", "--ignore-glob")
SELECTING = _SHORT + _LONG
PROJECT = ("addopts", "declared suite")  # the project's own origins; the rest is the invocation


@dataclass(frozen=True)
class Given:
    """One selecting option as given: where, which, and its value."""

    origin: str  # "addopts", "declared suite", "PYTEST_ADDOPTS" or "command line"
    option: str
    value: str

    @property
    def project(self) -> bool:
        return self.origin in PROJECT

    def __str__(self) -> str:
        return f"{self.origin}: {self.option} {shlex.quote(self.value)}"


def scan(tokens: Sequence[str], origin: str) -> list[Given]:
    """The selecting options among ``tokens`` (``-m EXPR``, ``-mEXPR``, ``--ignore=PATH``...)."""
    found, pending = [], None
    for token in map(str, tokens):
        if pending is not None:
            found.append(Given(origin, pending, token))
            pending = None
        elif token in SELECTING:
            pending = token
        elif token.startswith(_SHORT) and not token.startswith("--"):
            found.append(Given(origin, token[:2], token[2:]))
        elif token.startswith(tuple(f"{o}=" for o in _LONG)):
            option, _, value = token.partition("=")
            found.append(Given(origin, option, value))
    return found


def paths(tokens: Sequence[str]) -> list[str]:
    """The tokens that are neither a selecting option nor its value: paths."""
    found, skip = [], False
    for token in map(str, tokens):
        if skip:
            skip = False
        elif token in SELECTING:
            skip = True
        elif not token.startswith("-"):
            found.append(token)
    return found


def unknown(tokens: Sequence[str]) -> list[str]:
    """The options among ``tokens`` that are not selecting ones (a declared suite holds paths
    and selecting options only)."""
    found, skip = [], False
    for token in map(str, tokens):
        if skip:
            skip = False
        elif token in SELECTING:
            skip = True
        elif token.startswith("-") and not scan([token], ""):
            found.append(token)
    return found


@dataclass(frozen=True)
class Selection:
    """Every selecting option of a session, in the order pytest reads them (``addopts``,
    ``PYTEST_ADDOPTS``, the command line), and the declared suite's."""

    given: tuple[Given, ...]
    declared: tuple[Given, ...] = ()

    @classmethod
    def of(
        cls,
        addopts: Sequence[str],
        env_addopts: str,
        command_line: Sequence[str],
        declared: Sequence[str] = (),
    ) -> Selection:
        try:
            from_env = shlex.split(env_addopts)
        except ValueError:
            from_env = env_addopts.split()
        given = [
            *scan(addopts, "addopts"),
            *scan(from_env, "PYTEST_ADDOPTS"),
            *scan(command_line, "command line"),
        ]
        return cls(tuple(given), tuple(scan(declared, "declared suite")))

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
