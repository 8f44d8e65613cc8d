"""The pytest commands a project's tox configuration runs, read without running anything: which
file tox would use (``tox.ini``, ``setup.cfg`` with ``[tox:tox]``, ``pyproject.toml``'s
``legacy_tox_ini`` or ``[tool.tox]``, ``tox.toml``: tox's order), each environment's
``commands`` that start pytest (``pytest``, ``py.test``, ``python -m pytest``, ``coverage run
-m pytest``), with ``{posargs}`` as tox fills it when given none (its default, or nothing),
``{toxinidir}`` and ``{tox_root}`` resolved, and the folder they run in. Where ``env_list`` is
set, only the environments ``tox`` runs with no arguments count, each with its own commands or
``[testenv]``'s, a line with a factor condition (``unit: pytest tests``) only where the
environment has those factors (a ``benchmark`` or ``docs`` environment outside it is not the
suite); where it is not set, every environment the file defines. A substitution that cannot be
resolved without running tox is named, never guessed."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ...models.record import record

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
    core = "tox:tox" if setup_cfg else "tox"
    listed = parser.get(core, "env_list", fallback=parser.get(core, "envlist", fallback=""))
    sections = {s for s in parser.sections() if s == "testenv" or s.startswith("testenv:")}
    run = _expanded(_split(listed))
    if not run:  # every environment the file defines: more than tox runs, never less
        run = {s[8:] for s in sections if s != "testenv"} | {"py"}
    found: list[Command] = []
    for env in sorted(run):
        own = f"testenv:{env}"
        section = own if own in sections and parser.has_option(own, "commands") else "testenv"
        if section not in sections:
            continue
        body = parser[section]
        where = f"{name} [{section}]"
        changedir = parser.get(
            own, "changedir", fallback=parser.get(own, "change_dir", fallback="")
        )
        changedir = changedir or body.get("changedir", body.get("change_dir", ""))
        for line in _lines(body.get("commands", ""), env):
            command = _command(where, changedir.strip(), line, line)
            found += [c for c in command if c not in found]
    return found


def _split(listed: str) -> list[str]:
    """A list of names, by commas or white space outside braces."""
    return re.split(r"[\s,]+(?![^{]*\})", listed)


def _applies(condition: str, env: str) -> bool:
    """Whether a factor condition (``py311,py312``, ``unit-!pypy``, ``{a,b}-c``) holds for
    the environment ``env``, whose factors are its dash-separated parts."""
    factors = set(env.split("-"))
    for alternative in _expanded(_split(condition)):
        wanted = alternative.split("-")
        if all((w[1:] not in factors) if w.startswith("!") else (w in factors) for w in wanted):
            return True
    return False


def _lines(raw: str, env: str) -> Iterator[str]:
    """An ini ``commands`` value's commands for the environment ``env``: one a line, a trailing
    backslash continuing it, a line with a factor condition only where it holds."""
    pending = ""
    for line in raw.splitlines():
        line = line.strip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if not line or line.startswith("#"):
            continue
        condition = _FACTORS.match(line)
        if condition is None:
            yield line
        elif _applies(condition.group(0).rstrip().removesuffix(":"), env):
            yield line[condition.end() :]
    if pending.strip():
        yield pending.strip()


def _toml(file: str, data: Mapping[str, Any], prefix: str) -> Iterator[Command]:
    envs, listed = data.get("env"), data.get("env_list")
    envs = envs if isinstance(envs, dict) else {}
    run = [str(n) for n in listed] if isinstance(listed, list) else [*envs, "py"]
    base = data.get("env_run_base")
    seen: list[Command] = []
    for env in run:
        own = envs.get(env)
        table, body = (f"env.{env}", own) if isinstance(own, dict) else ("env_run_base", base)
        if isinstance(own, dict) and "commands" not in own:
            table, body = "env_run_base", {**(base if isinstance(base, dict) else {}), **own}
        if not isinstance(body, dict):
            continue
        changedir = body.get("change_dir", body.get("changedir", ""))
        changedir = changedir if isinstance(changedir, str) else "{change_dir}"
        for command in body.get("commands", []) or []:
            if isinstance(command, list):
                words, text = _toml_words(command)
                where = f"{file} [{prefix}{table}]"
                for found in _command(where, changedir, shlex.join(words), text):
                    if found not in seen:
                        seen.append(found)
                        yield found


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
