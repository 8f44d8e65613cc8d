"""The suite's warm starts (``warmstart.py``) give each run what a process of its own gets:
its environment, folder, streams, exit status, ``sys.path`` and bytecode setting, and its end;
what a forked child cannot be given starts cold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart

# A test file: what the pytest process running it saw, as JSON after "SEEN "; its failure
# when PROBE_FAIL is set; a thread still running and an atexit handler at its end.
PROBE = """\
import atexit, json, os, sys, threading, time


def test_probe():
    seen = {
        "cwd": os.getcwd(), "path": sys.path[:2], "orig_argv": sys.orig_argv,
        "env": os.environ.get("PROBE"), "bytecode_off": sys.dont_write_bytecode,
        "stdin": sys.stdin.read(), "main": sys.modules["__main__"].__spec__.name,
        "warm": "warmstart_server" in sys.modules,
        "hash": hash("abc"),
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
    """A folder holding :data:`PROBE`."""
    (tmp_path / "test_probe.py").write_text(PROBE)
    monkeypatch.setenv("PROBE", "given")
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
    ("name", "value"), [("PYTHONHASHSEED", "7"), ("LC_ALL", "C"), ("TZ", "EST+5")]
)
def test_a_start_up_variable_takes_effect_as_in_a_cold_start(
    folder: Path, name: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = dict(os.environ, **{name: value})
    warm = warmstart.run(ARGV, cwd=folder, env=env, capture_output=True, text=True)
    monkeypatch.setenv("BOUNDED_REVIEW_TESTS_COLD", "1")
    cold = warmstart.run(ARGV, cwd=folder, env=env, capture_output=True, text=True)
    assert _seen(cold)["warm"] is False
    assert _seen(warm)["startup"] == _seen(cold)["startup"]
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
        server.sock.close()  # the server ends when its socket does
        server.proc.wait(timeout=30)


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
    warm = pytester.runpytest_subprocess("-p", "no:randomly")
    monkeypatch.setenv("BOUNDED_REVIEW_TESTS_COLD", "1")
    cold = pytester.runpytest_subprocess("-p", "no:randomly")
    for result, forked in ((warm, True), (cold, False)):
        result.assert_outcomes(failed=1, passed=1)
        assert result.ret == 1
        result.stdout.fnmatch_lines([f"E       AssertionError: ('{pytester.path}', {forked})"])
