"""Hostile reviewers in real pytest sessions: a daemon (in the group, and one that left it with
setsid), a stderr flood, stdout closed early, a TTY reader, and one writing a git hook into the
live repository. The session ends, the report is written, the user's tree is untouched, and
whatever the reviewer did wrong is said, never trusted."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo, clean_env

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

ANSWER = (
    '{"schema": "bounded-review/lane-result/v1", "verdict": "pass", '
    '"rationale": "read it", "findings": []}'
)
PRELUDE = "import json, os, sys, time\nsys.stdin.buffer.read()\nANSWER = " + repr(ANSWER) + "\n"
REVIEWERS = {
    "daemon in the group": """
if os.fork() == 0:
    time.sleep(3)
    open(sys.argv[1], "w").write("alive")
    os._exit(0)
print(ANSWER)
""",
    "daemon that left the group": """
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3)
        open(sys.argv[1], "w").write("alive")
        os._exit(0)
    os._exit(0)
time.sleep(0.2)
print(ANSWER)
""",
    "stderr flood": """
chunk = b"x" * (1024 * 1024)
for _ in range(50):
    sys.stderr.buffer.write(chunk)
print(ANSWER)
""",
    "answers then closes stdout and works on": """
print(ANSWER, flush=True)
os.close(1)
time.sleep(1)
""",
    "closes stdout without answering": """
os.close(1)
time.sleep(0.5)
""",
    "reads from a TTY": """
with open("/dev/tty") as tty:
    tty.readline()
print(ANSWER)
""",
    "cites every bad path and line": """
base = {"severity": "blocking", "category": "correctness", "failure_mode": "f",
        "evidence": "e", "remediation": "r"}
paths = ["/etc/passwd", "../x.py", "a/../../x.py", "C:\\\\w.py", "c:x.py", "\\\\\\\\srv\\\\s",
         "//srv/s", "app\\u0000.py", ".git/config", "pkg/.GIT/hooks/x", "a" * 5000, "", 5, None,
         ["app.py"], "missing.py"]
lines = [0, -1, 1.5, "1", True, 10**30, 99]
findings = [dict(base, path=p, line=1) for p in paths]
findings += [dict(base, path="app.py", line=n) for n in lines]
findings.append(dict(base, path="app.py", line=1, end_line=0))
answer = json.loads(ANSWER)
answer["verdict"], answer["findings"] = "revise", findings
print(json.dumps(answer))
""",
    "answers NaN": """
print(ANSWER.replace('"findings": []', '"findings": [], "confidence": NaN'))
""",
    "answers with duplicate keys": """
print(ANSWER.replace('"verdict": "pass"', '"verdict": "revise", "verdict": "pass"'))
""",
    "answers 100 MB": """
sys.stdout.write(" " * (100 * 1024 * 1024) + ANSWER)
""",
    "answers a million findings": """
finding = {"path": "app.py", "line": 1, "severity": "blocking", "category": "correctness",
           "failure_mode": "f", "evidence": "e", "remediation": "r"}
answer = json.loads(ANSWER)
answer["findings"] = [finding] * 1_000_000
print(json.dumps(answer))
""",
    "writes a hook into the live repository": """
hook = os.path.join(sys.argv[2], ".git", "hooks", "pre-commit")
with open(hook, "w") as handle:
    handle.write("#!/bin/sh\\necho owned\\n")
os.chmod(hook, 0o755)
print(ANSWER)
""",
}


def _session(tmp_path: Path, case: str) -> tuple[subprocess.CompletedProcess[str], Any, GitRepo]:
    repo = GitRepo.init(tmp_path / "project")
    marker = tmp_path / "marker"
    script = tmp_path / "reviewer.py"
    script.write_text(PRELUDE + REVIEWERS[case])
    command = json.dumps([sys.executable, str(script), str(marker), str(repo.path)])
    repo.commit(
        {
            ".gitignore": "__pycache__/\n.pytest_cache/\n",
            "pyproject.toml": '[tool.bounded-review]\nrisk = "economy"\nmax_retries = 0\n'
            '[[tool.bounded-review.lanes]]\nname = "rev"\nlens = "correctness"\n'
            f"timeout = 60\ncommand = {command}\n",
            "app.py": "x = 1\n",
            "test_app.py": "def test_ok():\n    assert True\n",
        },
        "base",
    )
    repo.git("branch", "base")
    repo.commit({"app.py": "x = 2\n"}, "change")
    env = clean_env()
    with repo.untouched():
        started = time.monotonic()
        ran = warmstart.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "--bounded-review",
                "--bounded-review-base=base",
            ],
            cwd=repo.path,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert time.monotonic() - started < 60  # never waits for what the reviewer left
    written = repo.path / ".bounded-review" / "report.json"
    assert written.exists(), ran.stdout[-3000:] + ran.stderr[-3000:]
    return ran, json.loads(written.read_text()), repo


@pytest.mark.parametrize(
    "case",
    [
        "daemon in the group",
        "daemon that left the group",
        "stderr flood",
        "answers then closes stdout and works on",
    ],
)
def test_misbehaviour_around_a_valid_answer_is_contained(tmp_path: Path, case: str) -> None:
    ran, report, _ = _session(tmp_path, case)
    assert ran.returncode == 0, ran.stdout[-3000:]
    assert [(lane["name"], lane["status"]) for lane in report["lanes"]] == [("rev", "pass")]
    assert report["gate"]["review_clean"] == "yes"
    time.sleep(4)  # past the moment a surviving daemon would write its marker
    assert not (tmp_path / "marker").exists(), "a process the reviewer left kept running"


@pytest.mark.parametrize(
    ("case", "detail"),
    [
        ("closes stdout without answering", "invalid JSON"),
        ("reads from a TTY", "exit 1"),
        ("answers NaN", "NaN is not a JSON number"),
        ("answers with duplicate keys", "duplicate key 'verdict'"),
        ("answers 100 MB", "output over the cap"),
        ("answers a million findings", "output over the cap"),
    ],
)
def test_a_reviewer_that_cannot_answer_keeps_the_gate_open(
    tmp_path: Path, case: str, detail: str
) -> None:
    ran, report, _ = _session(tmp_path, case)
    assert ran.returncode == 1, ran.stdout[-3000:]
    assert report["gate"]["review_clean"] == "indeterminate"
    (lane,) = report["lanes"]
    assert lane["status"] == "unverified"
    assert detail in lane["note"]
    # Nothing else is lost: the tests' result stands and the reason names the lane.
    assert report["tests"]["passed"] == 1
    assert any("rev" in reason for reason in report["gate"]["reasons"])


def test_a_reviewer_writing_a_live_git_hook_is_caught(tmp_path: Path) -> None:
    ran, report, repo = _session(tmp_path, "writes a hook into the live repository")
    assert ran.returncode == 1, ran.stdout[-3000:]
    assert report["gate"]["review_clean"] == "indeterminate"
    assert any(".git/hooks/pre-commit" in reason for reason in report["gate"]["reasons"])
    # The tool reports the write; it does not run, remove or rewrite the user's files.
    assert (repo.path / ".git" / "hooks" / "pre-commit").read_text() == "#!/bin/sh\necho owned\n"


def test_findings_citing_every_bad_path_and_line_are_rejected_each_with_a_reason(
    tmp_path: Path,
) -> None:
    ran, report, _ = _session(tmp_path, "cites every bad path and line")
    assert ran.returncode == 0, ran.stdout[-3000:]
    rejected = report["findings"]["rejected"]
    assert len(rejected) == 24
    assert all(r["reason"] and r["lanes"] == ["rev"] for r in rejected)
    assert report["findings"]["blocking"] == []
    assert report["gate"]["review_clean"] == "yes"
