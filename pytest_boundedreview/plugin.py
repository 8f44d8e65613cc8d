"""The pytest face: options, and the session object registered when ``--bounded-review`` is on."""

from __future__ import annotations

import os
import weakref
from argparse import SUPPRESS
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .session import BoundedReview

# Options that are also config keys: (key, metavar or choices, help). Flags have no values.
_VALUE_OPTIONS: tuple[tuple[str, str | tuple[str, ...], str], ...] = (
    ("base", "REF", "base revision of the review (default: CI base branch, upstream, origin/HEAD)"),
    ("target", ("auto", "pr", "local-diff", "staged"), "what is reviewed (default: auto)"),
    ("mode", ("review-only", "review-and-fix"), "authorization (default: review-only)"),
    ("risk", ("auto", "economy", "standard", "strict"), "risk tier (default: auto)"),
    ("report", "PATH", "JSON report path (default: .bounded-review/report.json)"),
    ("markdown", "PATH", "also write a Markdown report"),
    ("sarif", "PATH", "also write a SARIF 2.1.0 log"),
)
_FLAG_OPTIONS: tuple[tuple[str, str], ...] = (
    ("no_lanes", "deterministic gate only: run no reviewer lanes"),
    ("full", "force a full re-review round"),
    ("reset", "close the open loop for this target and start a new one"),
    ("shard", "record this shard's outcomes only; the `bounded-review merge` step gates"),
)
RUN_EXIT_FLAG = "--bounded-review-exit-as-run"
SESSION_KEY: pytest.StashKey[BoundedReview] = pytest.StashKey()

# The environment each session started with, taken as this plugin is registered: before
# conftest files, the project's modules and the tests run, any of which may set variables (the
# change's among them). What the review starts (re-runs at the base and at head, check
# commands) and how it resolves the base are given this, never what the change's code left.
_STARTED: weakref.WeakKeyDictionary[pytest.PytestPluginManager, dict[str, str]] = (
    weakref.WeakKeyDictionary()
)


# The review's options as pytest parsed them (the command line, PYTEST_ADDOPTS and the
# configuration's addopts), read before any conftest file runs: code of the change that sets
# ``config.option`` later steers nothing.
_GIVEN: weakref.WeakKeyDictionary[pytest.PytestPluginManager, dict[str, object]] = (
    weakref.WeakKeyDictionary()
)


def _flag(key: str) -> str:
    return "--bounded-review-" + key.replace("_", "-")


def _engine_not_rewritten(pluginmanager: pytest.PytestPluginManager) -> None:
    """Let Python import the engine as it imports any library.

    pytest marks every package of a distribution that registers a plugin for assertion
    rewriting. The engine holds no test whose assertions pytest should explain, and a rewritten
    module cannot use the bytecode the installer compiled: where pytest cannot cache its own
    (``PYTHONDONTWRITEBYTECODE``, read-only site-packages) every run would parse and compile
    the whole engine again. pytest has no public way to unmark a package; without the hook's
    attributes the engine is rewritten as before, only slower.
    """
    hook = getattr(pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set) and __package__ in marked:
        marked.discard(__package__)
        cache = getattr(hook, "_marked_for_rewrite_cache", None)
        if isinstance(cache, dict):
            cache.clear()


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    # Called as the plugin is registered (from its entry point, -p or PYTEST_PLUGINS): the
    # earliest point of each session, before pytest loads the initial conftest files.
    _STARTED[pluginmanager] = os.environ.copy()
    _engine_not_rewritten(pluginmanager)
    group = parser.getgroup("bounded-review", "bounded review (a finite evidence gate)")
    group.addoption(
        "--bounded-review",
        action="store_true",
        default=False,
        help="gate the session on what the change under review caused",
    )
    for key, kind, text in _VALUE_OPTIONS:
        dest = f"bounded_review_{key}"
        if isinstance(kind, tuple):
            group.addoption(_flag(key), dest=dest, choices=kind, default=None, help=text)
        else:
            group.addoption(_flag(key), dest=dest, metavar=kind, default=None, help=text)
    for key, text in _FLAG_OPTIONS:
        group.addoption(
            _flag(key), dest=f"bounded_review_{key}", action="store_true", default=None, help=text
        )
    # Given by `bounded-review run` alone: the verdict names the exit status of that command,
    # which exits by the gate, not pytest's (no configuration key: a session's own exit is
    # pytest's).
    group.addoption(
        RUN_EXIT_FLAG, dest="bounded_review_exit_as_run", action="store_true", help=SUPPRESS
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # Called once the options are parsed a first time, before the initial conftest files load
    # (a conftest cannot implement this hook).
    known = vars(early_config.known_args_namespace)
    given = {name: value for name, value in known.items() if name.startswith("bounded_review")}
    _GIVEN[early_config.pluginmanager] = given


def _given(config: pytest.Config) -> Mapping[str, object]:
    """The review's options as given, not as the session's code may have set them since."""
    given = _GIVEN.get(config.pluginmanager)
    return vars(config.option) if given is None else given


def pytest_configure(config: pytest.Config) -> None:
    given = _given(config)
    if not given.get("bounded_review"):
        return
    if config.pluginmanager.has_plugin("pytest_boundedreview.baseline.reruns.recorder"):
        return  # a re-run started by a review: record, never review again
    # Imported here: plain pytest runs without the flag never pay for the engine's imports.
    from .baseline.athead.witness import Witness
    from .baseline.failures.outcomes import SignatureStamp
    from .baseline.failures.signature import checkout_root
    from .core.redaction import Redactor

    # Signatures are taken, and calls witnessed, where tests run: here, or on each xdist worker;
    # signatures scrubbed of the secrets of the environment the session started with (a
    # worker's, as it started).
    root = checkout_root(Path(config.rootpath))
    environ = _STARTED.get(config.pluginmanager)
    environ = os.environ.copy() if environ is None else environ
    redactor = Redactor(environ)
    config.pluginmanager.register(SignatureStamp(root, redactor), "bounded-review-stamp")
    witness = Witness(root)
    config.pluginmanager.register(witness, "bounded-review-witness")
    if hasattr(config, "workerinput"):  # workers only run tests; the controller reviews
        from .baseline.athead.onworkers import asked
        from .baseline.suite.deselection import Deselections
        from .change.imported import WorkerModules

        config.pluginmanager.register(WorkerModules(root), "bounded-review-modules")
        config.pluginmanager.register(Deselections(root), "bounded-review-deselected")
        reruns = asked(getattr(config, "workerinput", {}))  # the flaky check's, at head
        if reruns is not None:
            config.pluginmanager.register(reruns, "bounded-review-worker-reruns")
        from .baseline.checkout import basefirst, redirect

        if os.environ.get(redirect.ENV):  # a session run in a copy (see change/checkouts/tested.py)
            config.pluginmanager.register(basefirst.ReportAtEnd(), "bounded-review-provenance")
        return
    # A file that fails to import is a failure to classify, not a reason to stop the session.
    config.option.continue_on_collection_errors = True
    from .prepared import prepare
    from .session import BoundedReview

    keys = [key for key, _, _ in _VALUE_OPTIONS] + [key for key, _ in _FLAG_OPTIONS]
    prepared = prepare(config, keys, environ, given)
    exit_as_run = bool(given.get("bounded_review_exit_as_run"))
    session = BoundedReview(config, prepared, witness, environ, redactor, exit_as_run)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session.collector, "bounded-review-outcomes")
    config.pluginmanager.register(session.witnessed, "bounded-review-witnessed")
    config.pluginmanager.register(session.deselections, "bounded-review-deselected")
    config.pluginmanager.register(session.reruns, "bounded-review-reruns")
    config.pluginmanager.register(session.reruns.workers, "bounded-review-worker-answers")
    config.pluginmanager.register(session, "bounded-review-session")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    # Last: pytest prints its count of failures after every terminal summary, so the verdict
    # that closes the output is printed here, after that count and other plugins' last words.
    session = config.stash.get(SESSION_KEY, None)
    if session is None:
        return
    try:
        session.closing()
    finally:
        session.reruns.close()
        config.pluginmanager.unregister(session.collector)
        config.pluginmanager.unregister(session.witnessed)
        config.pluginmanager.unregister(session.deselections)
        config.pluginmanager.unregister(session.reruns)
        config.pluginmanager.unregister(session.reruns.workers)
        config.pluginmanager.unregister(session)
        del config.stash[SESSION_KEY]
