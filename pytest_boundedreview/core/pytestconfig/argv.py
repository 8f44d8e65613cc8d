"""How pytest reads the options it is given, so that what the tool finds among them is what
pytest acted on: its arguments are read by :mod:`argparse` without abbreviations (a long option
is spelled whole, ``--opt VALUE`` or ``--opt=VALUE``), short options may be bundled (``-qW
ignore``, ``-vWignore``: the first letter that takes a value takes the rest of the token or
the next one), ``-X=VALUE`` gives ``VALUE``, ``--`` ends the options and ``@FILE`` reads more
arguments from a file; ``-p`` alone is read before that, by pytest's own loop, which sees
only ``-p NAME`` and ``-pNAME``."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

# An option string and the number of values argparse gives it (argparse's ``nargs``: 0 for a
# flag, None for one value).
Table = Mapping[str, Any]
# pytest's own short options. Which of them take a value decides how a bundle is read
# (``-rW`` is ``-r W``, ``-qW`` is ``-q -W``); a session gives its own table, plugins' too.
BUILTIN: Table = {
    **dict.fromkeys(("-V", "-h", "-l", "-q", "-s", "-v", "-x"), 0),
    **dict.fromkeys(("-W", "-c", "-k", "-m", "-o", "-p", "-r"), None),
}


def table_of(config: object) -> Table:
    """The option strings of a session's parser (``pytest.Config``), plugins' included, and
    their number of values; pytest's own short ones when it cannot be read."""
    parser = getattr(config, "_parser", None)  # no public API gives the option table
    optparser = getattr(parser, "optparser", None)  # pytest 9; pytest 8 builds it on demand
    if optparser is None and parser is not None and hasattr(parser, "_getparser"):
        optparser = parser._getparser()
    actions = getattr(optparser, "_actions", None)
    if not isinstance(actions, list):
        return BUILTIN
    table = {
        s: a.nargs for a in actions if isinstance(a, argparse.Action) for s in a.option_strings
    }
    return table or BUILTIN


class _Unreadable(Exception):
    pass


class _Reader(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Unreadable(message)


class _Record(argparse.Action):
    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        value = " ".join(map(str, values)) if isinstance(values, list) else str(values or "")
        namespace.found.append((option_string or "", value))


@functools.lru_cache(maxsize=16)
def _reader(table: tuple[tuple[str, Any], ...], wanted: frozenset[str]) -> _Reader:
    reader = _Reader(add_help=False, allow_abbrev=False, fromfile_prefix_chars="@")
    for index, (option, nargs) in enumerate(table):
        record = option in wanted
        action: Any = _Record if record else ("store" if nargs != 0 else "store_true")
        extra = {"nargs": nargs} if record or nargs != 0 else {}
        reader.add_argument(option, dest=f"o{index}", action=action, **extra)
    return reader


def _parse(reader: _Reader, tokens: list[str]) -> list[tuple[str, str]]:
    namespace = argparse.Namespace(found=[])
    reader.parse_known_args(tokens, namespace)
    return list(namespace.found)


def _preparse(tokens: Sequence[str]) -> list[tuple[str, str]]:
    """``-p`` as pytest's plugin manager reads it, before argparse (``-qpNAME`` is not seen)."""
    found, pending = [], False
    for token in tokens:
        if pending:
            found.append(("-p", token.strip()))
            pending = False
        elif token == "-p":
            pending = True
        elif token.startswith("-p"):
            found.append(("-p", token[2:].strip()))
    return found


def read(
    tokens: Sequence[str], wanted: Sequence[str], table: Table = BUILTIN
) -> list[tuple[str, str]]:
    """The ``wanted`` options among ``tokens`` with their values, in order, read as pytest
    reads them with the options of ``table``."""
    tokens = [str(t) for t in tokens]
    found = _preparse(tokens) if "-p" in wanted else []
    others = frozenset(wanted) - {"-p"}
    if not others:
        return found
    # the short options read a bundle; another long option is read alike known or not (an
    # option never takes a value that looks like one: pytest refuses ``--tb -W``)
    every = {o: n for o, n in table.items() if not o.startswith("--")}
    every.update({o: table.get(o) for o in others})
    reader = _reader(tuple(sorted(every.items())), others)
    try:
        return [*_parse(reader, tokens), *found]
    except (_Unreadable, OSError):
        pass  # pytest would not have run: read each option on its own, to miss none
    for index, token in enumerate(tokens):
        if token.startswith("-") and token != "--":
            try:
                found += _parse(reader, tokens[index : index + 2])
            except (_Unreadable, OSError):
                continue
    return found
