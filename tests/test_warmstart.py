"""The suite's warm starts (``warmstart.py``) give each run what a process of its own gets:
its environment, folder, streams, exit status, ``sys.path`` and bytecode setting, and its end;
what a forked child cannot be given starts cold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo

# A test file: what the pytest process running it saw, as JSON after "SEEN "; its failure
# when PROBE_FAIL is set; a thread still running and an atexit handler at its end.
PROBE = """\
import atexit, json, os, sys, threading, time


def test_probe():
    seen = {
        "cwd": os.getcwd(), "path": sys.path[:2], "orig_argv": sys.orig_argv,
        "all_paths": sys.path,
        "env": os.environ.get("PROBE"), "bytecode_off": sys.dont_write_bytecode,
        "stdin": sys.stdin.read(), "main": sys.modules["__main__"].__spec__.name,
        "warm": "warmstart_server" in sys.modules,
        "hash": hash("abc"), "umask": os.umask(0o22),
        "startup": [time.tzname, sys.flags.utf8_mode, sys.getfilesystemencoding()],
    }
    print("SEEN " + json.dumps(seen))
    print("to stderr", file=sys.stderr)
    atexit.register(lambda: print("atexit ran", flush=True))

    def late():
        time.sleep(0.2)
        print("thread joined", flush=True)

    threading.Thread(target=late).start()
    assert not os.environ.get("PROBE_FAIL")
"""
ARGV = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_probe.py"]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding :data:`PROBE`; warm starts on, whatever the developer set."""
    (tmp_path / "test_probe.py").write_text(PROBE)
    monkeypatch.setenv("PROBE", "given")
    monkeypatch.delenv("BOUNDED_REVIEW_TESTS_COLD", raising=False)
    return tmp_path


def _seen(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    line = next(x for x in done.stdout.splitlines() if x.startswith("SEEN "))
    return dict(json.loads(line[5:]))


@pytest.mark.slow
@pytest.mark.parametrize("cold", [False, True], ids=["warm", "cold"])
def test_a_run_gets_what_a_process_of_its_own_gets(
    folder: Path, cold: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if cold:
        monkeypatch.setenv("BOUNDED_REVIEW_TESTS_COLD", "1")
    env = dict(os.environ, PROBE_FAIL="1", PYTHONDONTWRITEBYTECODE="1", PYTHONPATH="extra")
    done = warmstart.run(ARGV, cwd=folder, env=env, input="in", capture_output=True, text=True)
    seen = _seen(done)
    assert seen["warm"] is not cold
    assert done.returncode == 1
    assert seen["cwd"] == str(folder)
    assert seen["path"] == [str(folder), str(folder / "extra")]
    assert seen["orig_argv"][1:] == ARGV[1:]
    assert (seen["env"], seen["bytecode_off"], seen["stdin"], seen["main"]) == (
        "given",
        True,
        "in",
        "pytest.__main__",
    )
    assert done.stdout.splitlines()[-2:] == ["thread joined", "atexit ran"]
    assert "to stderr" in done.stdout  # pytest's -s: the test's stderr is the process's
    env.pop("PYTHONDONTWRITEBYTECODE")
    env.pop("PROBE_FAIL")
    again = warmstart.run(ARGV, cwd=folder, env=env, capture_output=True, text=True)
    assert (again.returncode, _seen(again)["bytecode_off"]) == (0, False)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "value"),
    [("PYTHONHASHSEED", "7"), ("LC_ALL", "C"), ("TZ", "EST+5"), ("PYTHONSAFEPATH", "1")],
)
def test_a_start_up_variable_takes_effect_as_in_a_cold_start(
    folder: Path, name: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warmstart, "_servers", {})  # no other server of this worker in the way
    env = dict(os.environ, **{name: value})
    warm = warmstart.run(ARGV, cwd=folder, env=env, capture_output=True, text=True)
    for server in warmstart._servers.values():
        server.close()
    assert _seen(warm)["warm"]
    monkeypatch.setenv("BOUNDED_REVIEW_TESTS_COLD", "1")
    cold = warmstart.run(ARGV, cwd=folder, env=env, capture_output=True, text=True)
    assert _seen(cold)["warm"] is False
    assert _seen(warm)["startup"] == _seen(cold)["startup"]
    assert _seen(warm)["all_paths"] == _seen(cold)["all_paths"]
    if name == "PYTHONHASHSEED":  # else each cold start draws its own; each warm one its server's
        assert _seen(warm)["hash"] == _seen(cold)["hash"]


@pytest.mark.slow
def test_a_few_servers_per_module_then_cold_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warmstart, "_servers", {})
    envs = [dict(os.environ, TZ=f"X+{n}") for n in range(warmstart._PER_MODULE + 1)]
    servers = [warmstart._server("pytest", env) for env in envs]
    assert None not in servers[:-1]
    assert servers[-1] is None
    assert warmstart._server("pytest", envs[0]) is servers[0]  # kept, not started again
    for server in servers[:-1]:
        assert server is not None
        server.close()


@pytest.mark.parametrize(
    "argv",
    [
        [sys.executable, "-X", "dev", "-m", "pytest"],  # an interpreter option
        ["python3", "-m", "pytest"],  # another interpreter
        [sys.executable, "-m", "json.tool", "--help"],  # a module no server is kept for
    ],
)
def test_other_commands_are_not_started_warm(argv: list[str]) -> None:
    assert warmstart.module_of(argv) is None


@pytest.mark.slow
def test_a_run_past_its_timeout_is_killed_and_the_next_run_is_served(folder: Path) -> None:
    (folder / "test_slow.py").write_text("import time\n\ndef test_slow():\n    time.sleep(60)\n")
    with pytest.raises(subprocess.TimeoutExpired):
        warmstart.run([*ARGV[:-1], "test_slow.py"], cwd=folder, capture_output=True, timeout=1)
    (folder / "test_gone.py").write_text("import os\n\ndef test_gone():\n    os._exit(5)\n")
    assert (
        warmstart.run([*ARGV[:-1], "test_gone.py"], cwd=folder, capture_output=True).returncode == 5
    )
    assert _seen(warmstart.run(ARGV, cwd=folder, capture_output=True, text=True))["warm"]


@pytest.mark.slow
def test_pytester_runs_are_warm_and_give_the_same_result_as_cold_ones(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        "import sys\n\n\ndef test_a():\n"
        "    assert 0, (sys.path[0], 'warmstart_server' in sys.modules)\n\n\n"
        "def test_b():\n    pass\n"
    )
    monkeypatch.delenv("BOUNDED_REVIEW_TESTS_COLD", raising=False)
    warm = pytester.runpytest_subprocess("-p", "no:randomly")
    monkeypatch.setenv("BOUNDED_REVIEW_TESTS_COLD", "1")
    cold = pytester.runpytest_subprocess("-p", "no:randomly")
    for result, forked in ((warm, True), (cold, False)):
        result.assert_outcomes(failed=1, passed=1)
        assert result.ret == 1
        result.stdout.fnmatch_lines([f"E       AssertionError: ('{pytester.path}', {forked})"])


# A conftest that keeps a file open, unflushed, to the end, and ends the session as PROBE_END
# says: what the interpreter does at its end must happen in a warm child as in a cold one.
ENDS = """\
import os

kept = open(os.environ["PROBE_FILE"], "w")


def pytest_unconfigure(config):
    kept.write("unflushed")
    how = os.environ["PROBE_END"]
    if how == "message":
        raise SystemExit("ended with a message")
    if how == "interrupt":
        raise KeyboardInterrupt
    if how == "error":
        raise RuntimeError("boom")
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["message", "interrupt", "error", "returns"])
def test_a_run_ends_as_a_cold_one_does(
    folder: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "conftest.py").write_text(ENDS)
    ends = []
    for cold in (False, True):
        if cold:
            monkeypatch.setenv("BOUNDED_REVIEW_TESTS_COLD", "1")
        kept = folder / f"kept-{cold}"
        env = dict(os.environ, PROBE_END=how, PROBE_FILE=str(kept))
        done = warmstart.run(ARGV, cwd=folder, env=env, capture_output=True, text=True)
        assert _seen(done)["warm"] is not cold
        ends.append((done.returncode, done.stderr.strip().splitlines()[-1:], kept.read_text()))
    assert ends[0] == ends[1]
    assert ends[0][0] == {"message": 1, "interrupt": -2, "error": 1, "returns": 0}[how]
    assert ends[0][2] == "unflushed"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("where", "name"),
    [
        ("folder", "sitecustomize.py"),
        ("folder", "_pytest"),
        ("pythonpath", "_pytest"),
        ("pythonpath", "pluggy"),
    ],
)
def test_a_module_that_would_shadow_one_the_server_imported_starts_cold(
    folder: Path, where: str, name: str
) -> None:
    extra = folder / "extra"
    extra.mkdir()
    into = folder if where == "folder" else extra
    env = dict(os.environ, PYTHONPATH="extra")
    assert _seen(warmstart.run(ARGV, cwd=folder, env=env, capture_output=True, text=True))["warm"]
    (into / name).mkdir() if "." not in name else (into / name).write_text("")
    again = warmstart.run(ARGV, cwd=folder, env=env, capture_output=True, text=True)
    assert _seen(again)["warm"] is False


@pytest.mark.slow
def test_the_console_command_s_own_modules_on_pythonpath_start_it_cold(folder: Path) -> None:
    """A copy of this package first on ``PYTHONPATH`` (the base's, as the base re-run of a
    self-review puts it) is the one a run imports, not the server's."""
    copy = folder / "copy" / "pytest_boundedreview"
    copy.mkdir(parents=True)
    (copy / "__init__.py").write_text("")
    (copy / "__main__.py").write_text("print('the copy ran')\n")
    argv = [sys.executable, "-m", "pytest_boundedreview", "--version"]
    plain = warmstart.run(argv, cwd=folder, capture_output=True, text=True)
    env = dict(os.environ, PYTHONPATH=str(folder / "copy"))
    copied = warmstart.run(argv, cwd=folder, env=env, capture_output=True, text=True)
    assert plain.stdout.startswith("bounded-review ") or plain.stdout[:1].isdigit(), plain.stdout
    assert copied.stdout == "the copy ran\n"


@pytest.mark.slow
def test_runs_at_once_from_two_threads_are_each_served(folder: Path) -> None:
    """One is forked while the other runs cold: neither waits on nor reads the other's."""
    results: list[subprocess.CompletedProcess[str]] = []

    def one(n: int) -> None:
        env = dict(os.environ, PROBE=f"run {n}")
        results.append(warmstart.run(ARGV, cwd=folder, env=env, capture_output=True, text=True))

    threads = [threading.Thread(target=one, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(_seen(done)["env"] for done in results) == ["run 0", "run 1"]
    assert all(done.returncode == 0 for done in results)
    assert _seen(warmstart.run(ARGV, cwd=folder, capture_output=True, text=True))["warm"]


@pytest.mark.slow
def test_output_is_read_until_a_process_it_left_behind_closes_it(folder: Path) -> None:
    (folder / "test_left.py").write_text(
        "import subprocess\n\n\ndef test_left():\n"
        "    subprocess.Popen(['sh', '-c', 'sleep 1; echo late'])\n"
    )
    argv = [*ARGV[:-1], "test_left.py"]
    done = warmstart.run(argv, cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0
    assert done.stdout.rstrip().endswith("late")


@pytest.mark.slow
def test_a_umask_set_after_the_server_started_is_the_child_s(folder: Path) -> None:
    assert _seen(warmstart.run(ARGV, cwd=folder, capture_output=True, text=True))["warm"]
    before = os.umask(0o077)
    try:
        done = warmstart.run(ARGV, cwd=folder, capture_output=True, text=True)
    finally:
        os.umask(before)
    assert _seen(done)["umask"] == 0o077


@pytest.mark.slow
def test_a_server_whose_imports_fail_sends_its_runs_cold(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As when this package is found only through ``PYTHONPATH``, which no server is given."""
    monkeypatch.setattr(warmstart, "_servers", {})
    broken = warmstart._Server("not-served", os.environ)  # the server knows no such module
    assert (broken.ok, broken.proc.returncode) == (False, 1)
    key = ("pytest", frozenset(warmstart._startup(os.environ).items()), warmstart._inherited())
    warmstart._servers[key] = broken
    done = warmstart.run(ARGV, cwd=folder, capture_output=True, text=True)
    assert (done.returncode, _seen(done)["warm"]) == (0, False)
    assert warmstart._servers[key] is broken  # not started again for every run


@pytest.mark.slow
def test_a_warm_review_session_warns_of_no_module_it_cannot_rewrite(
    pytester: pytest.Pytester, project: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server imports this package's session modules: pytest must not find it imported
    before it could mark it for rewriting, as it would another plugin (xdist)."""
    monkeypatch.delenv("BOUNDED_REVIEW_TESTS_COLD", raising=False)
    project.commit({"test_a.py": "def test_a():\n    pass\n"}, "base")
    project.commit({"test_a.py": "import sys\n\n\ndef test_a():\n    print(sys.modules)\n"})
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "-s", "-W", "error", "--bounded-review", "--bounded-review-base=HEAD~1"
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    assert "'warmstart_server'" in result.stdout.str()  # forked
    assert "'pytest_boundedreview.session'" in result.stdout.str()
    assert "Warning" not in result.stdout.str() + result.stderr.str()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("files", "warm"),
    [
        ({"pytest.ini": "[pytest]\n", "py.typed": ""}, True),  # not modules: no shadow
        ({"tox.ini": "[pytest]\npythonpath = src\n", "src/unidiff/__init__.py": ""}, False),
        ({"deep/er/pytest_boundedreview/__init__.py": ""}, False),
    ],
    ids=["configuration files", "ini pythonpath", "a copy of this package"],
)
def test_a_module_the_configuration_could_put_first_on_sys_path_starts_it_cold(
    folder: Path, files: dict[str, str], warm: bool
) -> None:
    """Past the working folder and ``PYTHONPATH``: a module this package imports (``unidiff``)
    in a folder the project's ``pythonpath`` adds at configuration, after the server had it."""
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    done = warmstart.run(ARGV, cwd=folder, capture_output=True, text=True)
    assert _seen(done)["warm"] is warm


@pytest.mark.slow
def test_a_zip_archive_on_pythonpath_and_a_relative_folder(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "lib.zip").write_bytes(b"")
    env = dict(os.environ, PYTHONPATH="lib.zip")
    assert not _seen(warmstart.run(ARGV, cwd=folder, env=env, capture_output=True, text=True))[
        "warm"
    ]
    monkeypatch.chdir(folder.parent)
    done = warmstart.run(ARGV, cwd=folder.name, capture_output=True, text=True)
    assert (_seen(done)["warm"], _seen(done)["cwd"]) == (True, str(folder))


def test_a_bytes_argument_runs_as_subprocess_runs_it_and_leaves_the_server_free(
    folder: Path,
) -> None:
    argv = [*ARGV[:-1], os.fsencode(ARGV[-1])]
    done = warmstart.run(argv, cwd=folder, capture_output=True, text=True)
    assert (done.returncode, _seen(done)["warm"]) == (0, True)
    again = warmstart.run(ARGV, cwd=folder, capture_output=True, text=True)
    assert _seen(again)["warm"]  # its server was given back
