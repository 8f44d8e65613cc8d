"""Which options given at invocation (the command line, ``PYTEST_ADDOPTS``) weaken what the
project's own configuration says a test's outcome is: a warning it makes an error, an xfail it
makes strict, a plugin it loads. Such a run did not run the project's suite as the project
defines it, so it is partial and the option is named, like a deselection. One table decides
every option; an option not in it, or whose rule finds nothing to weaken, is harmless.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .argv import BUILTIN, Table
from .pytestini import words
from .selecting import Given, scan

# The project's pytest options, as the base has them; under PLUGINS, the plugins its conftest
# files load (their ``pytest_plugins``), which ``-p no:`` blocks too.
Project = Mapping[str, Any]
PLUGINS = "pytest_plugins"
# A rule: given the option's value and the project's options, why it weakens them, or None.
Rule = Callable[[str, Project], str | None]

_TRUE = ("true", "1", "yes", "on")
_STRICT_KEYS = ("strict_markers", "strict_config", "strict_parametrization_ids")


def _lines(value: object) -> list[str]:
    """A ``linelist`` option's lines (a TOML list, or an ini string of lines)."""
    if isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    return [str(item).strip() for item in value] if isinstance(value, (list, tuple)) else []


def _true(value: object) -> bool:
    return value is True or str(value).strip().lower() in _TRUE


def _errors_on_warnings(project: Project) -> bool:
    """The project turns some warning into an error: a ``filterwarnings`` line, or ``-W``
    in its ``addopts``, whose action is ``error``."""
    addopts = words(project.get("addopts", ()))
    given = [g.value for g in scan(addopts, "addopts", ("-W", "--pythonwarnings"))]
    filters = [*_lines(project.get("filterwarnings")), *given]
    return any(_error(line) for line in filters)


def _strict_xfail(project: Project) -> bool:
    return any(_true(project.get(k, False)) for k in ("xfail_strict", "strict_xfail", "strict"))


def _loads(project: Project) -> set[str]:
    """The plugins the project's configuration loads or requires (its ``addopts``'s ``-p``,
    ``required_plugins``, its conftest files' ``pytest_plugins``), by every name ``-p no:``
    would block them by (pytest blocks ``NAME`` and ``pytest_NAME``)."""
    addopts = words(project.get("addopts", ()))
    named = [g.value for g in scan(addopts, "addopts", ("-p",)) if not g.value.startswith("no:")]
    named += [
        n.split(">")[0].split("=")[0].split("<")[0]
        for n in words(project.get("required_plugins", ()))
    ]
    named += [str(n).rsplit(".", 1)[-1] for n in project.get(PLUGINS, ())]  # a module's name
    return {_plain(n) for n in named if n}


def _plain(name: str) -> str:
    """A plugin's name as ``-p no:`` matches it: ``pytest-timeout``, ``pytest_timeout`` and
    ``timeout`` are one."""
    name = name.strip().lower().replace("-", "_")
    return name.removeprefix("pytest_")


def _warnings_option(value: str, project: Project) -> str | None:
    action = value.split(":", 1)[0].strip()
    if action != "error" and _errors_on_warnings(project):
        return "turns off a warning the project's configuration makes an error"
    return None  # "-W error..." only tightens; without the project's errors, nothing to undo


# -p no:NAME of pytest's own plugins, and the configuration whose outcome each one enforces.
_BUILTIN: dict[str, tuple[Callable[[Project], bool], str]] = {
    # filterwarnings and -W live in this plugin: off, no warning is an error
    "warnings": (_errors_on_warnings, "the warnings the project makes errors"),
    # these two report unraisable exceptions and thread exceptions as warnings
    "unraisableexception": (_errors_on_warnings, "the warnings the project makes errors"),
    "threadexception": (_errors_on_warnings, "the warnings the project makes errors"),
    # xfail (strict or not) and skip marks are this plugin's: off, a strict xpass passes
    "skipping": (_strict_xfail, "the project's strict xfail"),
}


def _plugin_off(value: str, project: Project) -> str | None:
    if not value.startswith("no:"):
        return None  # loading a plugin is not weakening the project's own
    name = _plain(value[3:])
    if name in _BUILTIN:
        applies, what = _BUILTIN[name]
        return f"turns off {what}" if applies(project) else None
    if name in _loads(project):
        return "turns off a plugin the project's configuration loads"
    return None  # a plugin the project does not load: cacheprovider, randomly, ...


def _error(line: str) -> bool:
    return line.split(":", 1)[0].strip() == "error"


def _filters_replaced(given: str, project: Project) -> str | None:
    """Filters in place of the project's: the same but for errors added and other filters
    dropped only tighten; any other change (an error dropped, another filter added, the
    order changed: a later line wins) may undo an error of the project's."""
    kept, lines = _lines(given), _lines(project.get("filterwarnings"))
    if not _errors_on_warnings(project):
        return None
    mine = [line for line in kept if line in lines or not _error(line)]
    theirs = [line for line in lines if line in kept or _error(line)]
    if mine != theirs:
        return "changes the filters by which the project's configuration makes warnings errors"
    return None


def _xfail_off(given: str, project: Project) -> str | None:
    if _strict_xfail(project) and not _true(given):
        return "turns off the project's strict xfail"
    return None


def _strict_off(key: str) -> Rule:
    def rule(given: str, project: Project) -> str | None:
        own = _true(project.get(key, False)) or _true(project.get("strict", False))
        return f"turns off the project's {key}" if own and not _true(given) else None

    return rule


def _replaced(key: str) -> Rule:
    def rule(given: str, project: Project) -> str | None:
        own = key in project and words(project[key]) != words(given)
        return f"replaces the project's {key}" if own else None

    return rule


# -o KEY=VALUE of a key that decides outcomes (collection keys: selecting.reconfiguring).
_INI_KEYS: dict[str, Rule] = {
    "filterwarnings": _filters_replaced,
    "xfail_strict": _xfail_off,
    "strict_xfail": _xfail_off,
    "strict": _xfail_off,  # and the keys below, which it sets too
    **{key: _strict_off(key) for key in _STRICT_KEYS},
    # an empty parameter set that fails, fixtures every test uses, where the code tested is
    # imported from, the warnings a passing run may have: the project's, replaced
    **{k: _replaced(k) for k in ("empty_parameter_set_mark", "usefixtures", "pythonpath")},
    "max_warnings": lambda given, project: _max_warnings(given, project),
}


def _ini(value: str, project: Project) -> str | None:
    key, _, given = value.partition("=")
    rule = _INI_KEYS.get(key.strip())
    return None if rule is None else rule(given, project)


def _max_warnings(value: str, project: Project) -> str | None:
    own = str(project.get("max_warnings", "")).strip()
    if own.isdigit() and (not value.strip().isdigit() or int(value) > int(own)):  # "": none
        return "allows more warnings than the project's max_warnings"
    return None


def _strict_xfail_flag(value: str, project: Project) -> str | None:
    return "reports the project's strict xfails as plain tests" if _strict_xfail(project) else None


def _always(why: str) -> Rule:
    return lambda value, project: why


# Every option given at invocation that can change a test's outcome, and its rule. Options not
# listed only change what is shown or where files go (-q, -v, -r, --tb, --disable-warnings,
# --color, --basetemp, --junit-xml), or tighten (--strict-markers, --strict-config, -x), or are
# judged elsewhere: selection and collection in selecting.py, an unfinished session in session.
OUTCOME_OPTIONS: dict[str, Rule] = {
    # -W ignore (or default, always, once, module) overrides the ini's filterwarnings, which
    # pytest applies first; -W error only adds errors
    "-W": _warnings_option,
    "--pythonwarnings": _warnings_option,
    # -p no:warnings, no:skipping, no:<a plugin the project's addopts or required_plugins
    # name>; -p no:cacheprovider, no:randomly and other plugins the project does not load are
    # harmless
    "-p": _plugin_off,
    # -o of an outcome key: filterwarnings, the strict keys, empty_parameter_set_mark,
    # usefixtures, pythonpath, max_warnings (collection keys: selecting.reconfiguring)
    "-o": _ini,
    "--override-ini": _ini,
    # more warnings allowed than the project's max_warnings; a lower number only tightens
    "--max-warnings": _max_warnings,
}
# Flags without a value, and their rule.
OUTCOME_FLAGS: dict[str, Rule] = {
    # xfail marks ignored: an xfail(strict) test that passes passes (a plain xfail that fails
    # fails: that only tightens)
    "--runxfail": _strict_xfail_flag,
    # a test module that cannot be imported no longer stops the session: its tests go unrun
    "--continue-on-collection-errors": _always(
        "runs on past test modules that cannot be collected"
    ),
    # every plugin installed for the project (entry points) off, whatever it enforces
    "--disable-plugin-autoload": _always("turns off the plugins installed for the project"),
}


def weakening(
    tokens: Sequence[str], origin: str, project: Project, table: Table = BUILTIN
) -> list[tuple[Given, str]]:
    """The options among ``tokens`` (given at ``origin``, read with the parser's ``table``)
    that weaken the outcome configuration of ``project``, each with why."""
    found = []
    for given in scan(tokens, origin, tuple(OUTCOME_OPTIONS), table):
        option = "-o" if given.option == "--override-ini" else given.option
        why = OUTCOME_OPTIONS[option](given.value, project)
        if why is not None:
            found.append((given, why))
    for token in map(str, tokens):
        if token in OUTCOME_FLAGS and (why := OUTCOME_FLAGS[token]("", project)) is not None:
            found.append((Given(origin, token, ""), why))
    return found


def _as_given(value: object) -> str:
    """A value of the configuration file as ``-o KEY=VALUE`` would give it."""
    if isinstance(value, (list, tuple)):
        return "\n".join(map(str, value))
    return str(value).lower() if isinstance(value, bool) else str(value)


def weakened_in_file(ran: Project, origin: str, project: Project) -> list[tuple[Given, str]]:
    """What the configuration file the session ran with (``ran``: the change's, read from
    ``origin``) sets otherwise than ``project`` (the base's) and weakens, by the rules of
    ``-o`` for its outcome keys and of :func:`weakening` for what its ``addopts`` adds."""
    found = []
    for key, rule in _INI_KEYS.items():
        if key not in ran and key not in project:
            continue
        value = _as_given(ran.get(key, ""))  # removed: pytest's default
        if value == _as_given(project.get(key, "")):
            continue
        if (why := rule(value, project)) is not None:
            found.append((Given(origin, key, ", ".join(_lines(value)) or value), why))
    own = words(project.get("addopts", ()))
    base = {(g.option, g.value) for g in scan(own, origin, tuple(OUTCOME_OPTIONS))}
    base |= {(token, "") for token in own}  # its flags
    for given, why in weakening(words(ran.get("addopts", ())), f"{origin} addopts", project):
        if (given.option, given.value) not in base:
            found.append((given, why))
    return found
