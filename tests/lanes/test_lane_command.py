"""Command lanes with real reviewer processes."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from pytest_boundedreview.core import subproc
from pytest_boundedreview.core.settings.tables import LaneConfig
from pytest_boundedreview.lanes.command import run_once, run_with_retries
from pytest_boundedreview.lanes.environment import lane_env
from pytest_boundedreview.models.plain import validate_data

PACKET = json.dumps({"schema": "bounded-review/packet/v1", "diff": "x"}).encode()
RESULT = {"schema": "bounded-review/lane-result/v1", "verdict": "pass", "rationale": "looks fine"}


def lane(tmp_path: Path, script: str, timeout: float = 20, **extra: object) -> LaneConfig:
    path = tmp_path / "reviewer.py"
    path.write_text(script)
    return validate_data(
        LaneConfig,
        {
            "name": "r",
            "lens": "correctness",
            "command": [sys.executable, str(path)],
            "timeout": timeout,
            **extra,
        },
    )


def test_a_valid_result_and_the_packet_on_stdin_and_in_a_file(tmp_path: Path) -> None:
    script = (
        "import json, os, sys\n"
        "stdin = sys.stdin.buffer.read()\n"
        "assert stdin == open(os.environ['BOUNDED_REVIEW_PACKET'], 'rb').read()\n"
        f"print(json.dumps({RESULT!r} | {{'rationale': json.loads(stdin)['diff']}}))\n"
    )
    attempt = run_once(lane(tmp_path, script), PACKET, tmp_path)
    assert attempt.ok, attempt.detail
    assert attempt.result is not None
    assert (attempt.result.verdict, attempt.result.rationale) == ("pass", "x")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("script", "failure", "detail"),
    [
        (
            'print(\'{"schema": "bounded-review/lane-result/v1", "verdict": "pass"}\')',
            "error",
            "bare verdict",
        ),
        ("print('not json')", "error", "invalid JSON"),
        ('print(\'{"schema": 1, "schema": 2}\')', "error", "duplicate key 'schema'"),
        ("print('{\"verdict\": NaN}')", "error", "NaN is not a JSON number"),
        ("import sys; sys.stdout.write('x' * 10_000_000)", "limit", "output over the cap"),
        ("import sys; sys.stderr.write('boom\\n'); sys.exit(127)", "error", "exit 127: boom"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "died", "killed by signal 9"),
        ("import time; time.sleep(30)", "limit", "timed out after 1s"),
    ],
    ids=["bare", "invalid", "duplicate", "nan", "10MB", "exit127", "signal", "timeout"],
)
def test_failures_are_classified(tmp_path: Path, script: str, failure: str, detail: str) -> None:
    attempt = run_once(
        lane(tmp_path, script, timeout=1 if "sleep" in script else 20), PACKET, tmp_path
    )
    assert not attempt.ok
    assert attempt.failure == failure
    assert detail in attempt.detail


def _group_alive(pgid: int) -> bool:
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


@pytest.mark.slow
def test_a_reviewer_ignoring_sigterm_and_its_grandchild_are_killed(tmp_path: Path) -> None:
    pgid_file = tmp_path / "pgid"
    script = (
        "import os, signal, subprocess\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"open({str(pgid_file)!r}, 'w').write(str(os.getpgid(0)))\n"
        "subprocess.run(['sh', '-c', 'trap \"\" TERM; sleep 999 & wait'])\n"
    )
    started = time.monotonic()
    attempt = run_once(lane(tmp_path, script, timeout=1), PACKET, tmp_path)
    assert attempt.failure == "limit"
    assert time.monotonic() - started < 20
    pgid = int(pgid_file.read_text())
    for _ in range(50):
        if not _group_alive(pgid):
            break
        time.sleep(0.1)
    assert not _group_alive(pgid)


def test_secrets_not_named_never_reach_the_reviewer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "MY_REVIEW_KEY",
        "GIT_DIR",
        "ACTIONS_RUNTIME_TOKEN",
        "GITHUB_ENV",
    ):
        monkeypatch.setenv(name, "secret-value")
    script = "import json, os\nprint(json.dumps(dict(os.environ)))\n"
    reviewer = lane(tmp_path, script, env=["MY_REVIEW_KEY", "GIT_DIR", "GITHUB_ENV"])
    out = subproc.run(reviewer.command or [], cwd=tmp_path, env=lane_env(reviewer.env), timeout=20)
    seen = json.loads(out.stdout)
    assert seen["MY_REVIEW_KEY"] == "secret-value"
    for name in (
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "GIT_DIR",
        "ACTIONS_RUNTIME_TOKEN",
        "GITHUB_ENV",
    ):
        assert name not in seen
    assert "PATH" in seen


def test_retries_are_bounded_and_each_is_recorded(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    script = (
        "import json, pathlib, sys\n"
        f"p = pathlib.Path({str(counter)!r})\n"
        "n = int(p.read_text()) if p.exists() else 0\n"
        "p.write_text(str(n + 1))\n"
        f"print(json.dumps({RESULT!r}) if n == 2 else 'garbage')\n"
    )
    attempts = run_with_retries(lane(tmp_path, script), PACKET, tmp_path, retries=3)
    assert [a.ok for a in attempts] == [False, False, True]
    counter.unlink()
    capped = run_with_retries(lane(tmp_path, script), PACKET, tmp_path, retries=1)
    assert [a.failure for a in capped] == ["error", "error"]
    assert os.environ.get("BOUNDED_REVIEW_PACKET") is None
