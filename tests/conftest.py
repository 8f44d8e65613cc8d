from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pydantic  # noqa: F401  (see below)
import pytest
import warmstart
from gitrepo import CHILD_OPTIONS, PYTESTER_IGNORES, GitRepo

from pytest_boundedreview.change.base import CI_BASE_VARIABLES

# pytester's in-process runs forget the modules first imported inside them: pydantic, which a
# session imports to validate a new configuration, is imported here so that the whole suite
# validates with one pydantic (a second import makes its models unknown to the first one's).

# Real projects' configurations, copied into the repositories the tests make: never this
# suite's own (a conftest there would hook into every test here).
collect_ignore = ["data"]


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's own, with the plugins of CHILD_OPTIONS kept out of its sessions (it clears
    the variable), and its ``runpytest_subprocess`` runs started warm (``warmstart.py``)."""
    monkeypatch.setenv("PYTEST_ADDOPTS", CHILD_OPTIONS)
    cold = pytester.popen

    def popen(
        cmdargs: Sequence[str],
        stdout: Any = subprocess.PIPE,
        stderr: Any = subprocess.PIPE,
        stdin: Any = pytester.CLOSE_STDIN,
        **kw: Any,
    ) -> Any:
        if kw or not hasattr(stdout, "fileno") or not hasattr(stderr, "fileno"):
            return cold(cmdargs, stdout=stdout, stderr=stderr, stdin=stdin, **kw)
        env = dict(os.environ)  # as pytester's own popen: the folder on PYTHONPATH
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), env.get("PYTHONPATH")]))
        with contextlib.ExitStack() as stack:
            if stdin is pytester.CLOSE_STDIN:
                given = stack.enter_context(open(os.devnull, "rb"))
            elif isinstance(stdin, bytes):
                given = stack.enter_context(tempfile.TemporaryFile())
                given.write(stdin)
                given.seek(0)
            else:
                return cold(cmdargs, stdout=stdout, stderr=stderr, stdin=stdin)
            stdout.flush()
            stderr.flush()
            stdio = [given.fileno(), stdout.fileno(), stderr.fileno()]
            warm = warmstart.start([os.fspath(a) for a in cmdargs], os.getcwd(), env, stdio)
        return warm or cold(cmdargs, stdout=stdout, stderr=stderr, stdin=stdin)

    monkeypatch.setattr(pytester, "popen", popen)
    return pytester


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep every test away from the developer's git config, CI variables and state."""
    for name in list(os.environ):
        if name.startswith("GIT_"):
            monkeypatch.delenv(name)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name in (*CI_BASE_VARIABLES, "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTEST_ADDOPTS", CHILD_OPTIONS)


@pytest.fixture(scope="session", autouse=True)
def _every_emitted_report_is_valid(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Sessions write their reports without pydantic (plain dataclasses, ``json``): every
    report any test's session wrote must validate against the Report model all the same."""
    yield
    from pytest_boundedreview.models.plain import validate
    from pytest_boundedreview.models.report import REPORT_SCHEMA, Report

    invalid = []
    for top, _, files in os.walk(tmp_path_factory.getbasetemp()):  # symlinks not followed
        for path in [Path(top, name) for name in files if name.endswith(".json")]:
            try:
                data = b"" if path.is_symlink() else path.read_bytes()
            except OSError:  # gone, or unreadable on purpose
                continue
            marker = f'"schema": "{REPORT_SCHEMA}"'.encode()
            if marker not in data[:100] or b"  " not in data[:10]:
                continue  # not a report the tool wrote (it writes them indented)
            try:
                validate(Report, data)
            except ValueError as exc:
                invalid.append(f"{path}: {exc}")
    assert not invalid, "\n".join(invalid)


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """A repository on ``main`` with one commit."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit({"README.md": "hello\n", "app.py": "x = 1\ny = 2\n"}, "initial")
    return repo


@pytest.fixture
def project(pytester: pytest.Pytester) -> GitRepo:
    """A git repository in pytester's folder, ignoring what pytester writes."""
    repo = GitRepo.init(pytester.path)
    repo.write(".gitignore", PYTESTER_IGNORES)
    return repo


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker more than the CPUs this process may use. The tests wait on the
    processes they start (git, pytest sessions, agent CLIs, a model server) part of the time:
    on two CPUs, two workers kept them 80% busy over the whole suite, three 96% (CPU time over
    wall time, one run each). ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else None


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Under ``-n``, xdist's ``worksteal`` unless ``--dist`` names a mode: a worker that ran
    out takes half of another's queue, where ``load`` hands out fixed chunks and a worker can
    end alone with a queue of slow tests (whole review sessions of up to a minute each)."""
    if getattr(config.option, "numprocesses", None) and config.option.dist == "no":
        config.option.dist = "worksteal"
