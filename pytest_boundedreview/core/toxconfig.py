"""The pytest commands a project's tox configuration runs, read without running anything: which
file tox would use (``tox.ini``, ``setup.cfg`` with ``[tox:tox]``, ``pyproject.toml``'s
``legacy_tox_ini`` or ``[tool.tox]``, ``tox.toml``: tox's order), each environment's
``commands`` that start pytest (``pytest``, ``py.test``, ``python -m pytest``, ``coverage run
-m pytest``), with ``{posargs}`` as tox fills it when given none (its default, or nothing),
``{toxinidir}`` and ``{tox_root}`` resolved, and the folder they run in. Where ``env_list`` is
set, only the environments ``tox`` runs with no arguments count (``[testenv]``'s commands are
theirs; a ``benchmark`` or ``docs`` environment outside it is not the suite). A substitution
that cannot be resolved without running tox is named, never guessed."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..models.record import record

# tox's order: the first of these holding a tox configuration is the one it uses
FILES = ("tox.ini", "setup.cfg", "pyproject.toml", "tox.toml")
_POSARGS = re.compile(r"\{posargs(?::([^{}]*))?\}")
_ROOT = re.compile(r"\{(?:toxinidir|tox_root)\}")
_FACTORS = re.compile(r"^[\w.,!{}-]+:\s+")  # `py311,py312: pytest tests`
_PYTHON = re.compile(r"(?:python(?:\d+(?:\.\d+)?)?|\{envpython\}|\{env_python\})(?:\.exe)?")


@record(frozen=True)
class Command:
    """One command of an environment that starts pytest: where it was read, the folder it
    runs in (relative to the tox file's, ``.`` by default) and pytest's arguments; or why it
    cannot be read (``unresolved``)."""

    where: str  # "tox.ini [testenv:py]"
    changedir: str
    args: tuple[str, ...]
    text: str  # the command as written, for the report
    unresolved: str = ""


def commands(read: Callable[[str], str | None]) -> tuple[str, list[Command]]:
    """The tox file the project uses and its pytest commands (``read``: a file's text by name,
    ``None`` when absent); ``("", [])`` when the project has no tox configuration."""
    for name in FILES:
        text = read(name)
        if text is None:
            continue
        found = _of(name, text)
        if found is not None:
            return name, found
    return "", []


def _of(name: str, text: str) -> list[Command] | None:
    """The pytest commands of one file; ``None`` when it holds no tox configuration."""
    if name in ("tox.ini", "setup.cfg"):
        return _ini(name, text, name == "setup.cfg")
    if sys.version_info >= (3, 11):  # imported only for a project with a tox file
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    if name == "pyproject.toml":
        tox = data.get("tool", {}).get("tox")
        if not isinstance(tox, dict):
            return None
        legacy = tox.get("legacy_tox_ini")
        if isinstance(legacy, str):
            return _ini(f"{name} legacy_tox_ini", legacy, False) or []
        return list(_toml(name, tox, "tool.tox."))
    return list(_toml(name, data, ""))


def _ini(name: str, text: str, setup_cfg: bool) -> list[Command] | None:
    import configparser  # only for a project with a tox file

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    if setup_cfg and not parser.has_section("tox:tox"):
        return None
    found = []
    core = "tox:tox" if setup_cfg else "tox"
    listed = parser.get(core, "env_list", fallback=parser.get(core, "envlist", fallback=""))
    run = _expanded(re.split(r"[\s,]+(?![^{]*\})", listed))
    for section in parser.sections():
        if section != "testenv" and not section.startswith("testenv:"):
            continue
        if run and section != "testenv" and not _expanded([section[8:]]) & run:
            continue  # an environment tox runs only when asked for by name
        where = f"{name} [{section}]"
        body = parser[section]
        raw = body.get("commands", "")
        changedir = body.get("changedir", body.get("change_dir", "")).strip()
        for line in _lines(raw):
            found += _command(where, changedir, line, line)
    return found


def _lines(raw: str) -> Iterator[str]:
    """An ini ``commands`` value's commands: one a line, a trailing backslash continuing it."""
    pending = ""
    for line in raw.splitlines():
        line = line.strip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line and not line.startswith("#"):
            yield _FACTORS.sub("", line, count=1)
    if pending.strip():
        yield pending.strip()


def _toml(file: str, data: Mapping[str, Any], prefix: str) -> Iterator[Command]:
    tables: list[tuple[str, Any]] = [("env_run_base", data.get("env_run_base"))]
    envs, listed = data.get("env"), data.get("env_list")
    run = {str(n) for n in listed} if isinstance(listed, list) else set()
    if isinstance(envs, dict):
        tables += [(f"env.{n}", body) for n, body in envs.items() if not run or n in run]
    for table, body in tables:
        if not isinstance(body, dict):
            continue
        changedir = body.get("change_dir", body.get("changedir", ""))
        changedir = changedir if isinstance(changedir, str) else "{change_dir}"
        for command in body.get("commands", []) or []:
            if isinstance(command, list):
                words, text = _toml_words(command)
                where = f"{file} [{prefix}{table}]"
                yield from _command(where, changedir, shlex.join(words), text)


def _expanded(names: list[str]) -> set[str]:
    """Environment names with tox's generative braces expanded (``py{311,312}-x``)."""
    found: set[str] = set()
    for name in (n.strip() for n in names):
        match = re.search(r"\{([^{}]*)\}", name)
        if match is None:
            found |= {name} if name else set()
            continue
        start, end = name[: match.start()], name[match.end() :]
        found |= _expanded([start + part.strip() + end for part in match.group(1).split(",")])
    return found


def _toml_words(command: list[Any]) -> tuple[list[str], str]:
    """A TOML command's words, ``{replace = "posargs", default = [...]}`` filled with its
    default; its text as written."""
    words: list[str] = []
    shown: list[str] = []
    for item in command:
        if isinstance(item, dict) and item.get("replace") == "posargs":
            default = item.get("default", [])
            words += [str(d) for d in default] if isinstance(default, list) else []
            shown.append("{posargs}")
        elif isinstance(item, str):
            words.append(item)
            shown.append(item)
        else:
            words.append("{unreadable}")
            shown.append(str(item))
    return words, " ".join(shown)


def _command(where: str, changedir: str, line: str, text: str) -> list[Command]:
    """``line`` as a :class:`Command`, if it starts pytest."""
    line = _POSARGS.sub(lambda m: m.group(1) or "", line)  # tox given no posargs
    line = _ROOT.sub(".", line)  # paths are read relative to the tox file's folder
    changedir = _ROOT.sub(".", changedir)
    try:
        words = shlex.split(line)
    except ValueError:
        return []
    if words and words[0] in ("-", "!"):  # tox's "ignore the exit status" prefixes
        words = words[1:]
    if words and "{" in words[0]:  # another section's commands, say: it may start pytest
        why = f"{words[0]} cannot be resolved without running tox"
        return [Command(where, changedir or ".", (), text.strip(), why)]
    args = _pytest_args(words)
    if args is None:
        return []
    unresolved = [w for w in [changedir, *args] if "{" in w and "}" in w]
    why = f"{', '.join(unresolved)} cannot be resolved without running tox" if unresolved else ""
    return [Command(where, changedir or ".", tuple(args), text.strip(), why)]


def _pytest_args(words: list[str]) -> list[str] | None:
    """The arguments a command gives pytest, if it starts pytest."""
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if program in ("pytest", "py.test"):
        return words[1:]
    rest = words[1:]
    if program == "coverage" and rest[:1] == ["run"]:
        rest = rest[1:]
    elif not _PYTHON.fullmatch(program):
        return None
    for index, word in enumerate(rest):
        if word == "-m":
            module = rest[index + 1 : index + 2]
            return rest[index + 2 :] if module in (["pytest"], ["py.test"]) else None
        if not word.startswith("-"):
            return None  # a script, not a module
    return None
