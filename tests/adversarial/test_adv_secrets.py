"""Secrets never leave through failures: a failing test's message, its failing statement, its
parametrize id and a check's output reach the reviewer packet, the JSON report, SARIF, Markdown,
the step summary, the annotations and the terminal summary with the session's secret variables
and the well-known token formats replaced by what they were, and the failures are still
classified as before: target-related where the change broke them, pre-existing where the base
failed the same way. Ordinary text is left as it was."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo

SECRET = "hunter2-Correct-Horse-Battery"  # the value of a secret variable of the session
GHP = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
# Made of pieces, so that no line here is what the built-in secrets scan flags.
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
KEY_BODY = "MIIEowIBAAKCAQEAsecretbodyZ9y8x7w6v5u4t3s2r1q0"
PRIVATE = "PRIVATE" + " KEY-----"
KEY = f"-----BEGIN RSA {PRIVATE}\\n{KEY_BODY}\\n-----END RSA {PRIVATE}"
# What must not appear anywhere the review writes: each secret, and pieces of each that
# survive the digits and hex runs a signature folds.
LEAKS = (SECRET, "hunter2", "Horse-Battery", GHP, "ghp_a1B2", "c3D4e5", AWS, "IOSFODNN", KEY_BODY)
LEAKS += ("MIIEow", "secretbody", "hunt", "Battery")

ENV = {
    "MY_SERVICE_PASSWORD": SECRET,
    # Harmless: secret-looking names whose values are short or a path are never scrubbed.
    "USE_TOKEN": "true",
    "SECRET_MODE": "1",
    "API_KEY_FILE": "/etc/app/key.pem",
}

# The change's diff holds no secret: the token it stops returning lives in an unchanged file.
APP_BASE = """\
from tokens import GHP


def login(*credentials):
    return "ok"


def token():
    return GHP


def legacy(secret):
    return "broken " + secret
"""

APP_HEAD = APP_BASE.replace('return "ok"', 'return "refused"').replace("return GHP", 'return "no"')

TESTS = f"""\
import os

import pytest

import app

GHP = "{GHP}"
AWS = "{AWS}"
KEY = "{KEY}"
SECRET = os.environ.get("MY_SERVICE_PASSWORD", "")


def test_client():
    said = f"login refused for {{SECRET}} with {{GHP}} {{AWS}} {{KEY}}"
    assert app.login(SECRET, GHP) == "ok", said


def test_literal():
    assert app.token() == "{GHP}"


@pytest.mark.parametrize("password", [SECRET])
def test_param(password):
    assert app.login(password) == "ok"


def test_old():
    assert app.legacy(SECRET) == "fine"  # pytest shortens the value: 'broken hunte...ttery'



def test_harmless_old():
    flag, path, mode = (os.environ.get(n) for n in ("USE_TOKEN", "API_KEY_FILE", "SECRET_MODE"))
    assert flag == "false", f"flag {{flag}} key file {{path}} mode {{mode}}"


def test_sub(subtests):
    with subtests.test(msg="as", password=SECRET):
        assert app.login(SECRET) == "ok"


def test_fine():
    pass
"""

# A file that fails to import, the same at base and head.
BROKEN = f"""\
import os

raise RuntimeError("cannot connect with " + os.environ["MY_SERVICE_PASSWORD"] + " {AWS}")
"""

LANE = """\
import json, sys
data = sys.stdin.read()
with open(sys.argv[1], "a") as dump:
    dump.write(data + "\\n")
print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "pass",
                  "rationale": "read the packet", "findings": []}))
"""

# A GNU check and an exit-code check whose output holds the secret, the same at base and head.
LINT = f"import os; print('app.py:1: leaked ' + os.environ['MY_SERVICE_PASSWORD'] + ' {GHP}')"
AUDIT = "import os, sys; sys.exit('audit saw ' + os.environ['MY_SERVICE_PASSWORD'] + ' AWS')"
AUDIT = AUDIT.replace("AWS", AWS)


def setup(project: GitRepo, tmp_path: Path) -> Path:
    """The base with the tests, the lane and the checks; the change breaks ``login`` and
    ``token``. Returns the file the lane dumps every packet it receives to."""
    lane = tmp_path / "lane.py"
    lane.write_text(LANE)
    packets = tmp_path / "packets.jsonl"
    config = (
        "[tool.bounded-review]\n"
        "[[tool.bounded-review.lanes]]\n"
        f'name = "dump"\nlens = "correctness"\n'
        f"command = {json.dumps([sys.executable, str(lane), str(packets)])}\n"
        "[[tool.bounded-review.checks]]\n"
        f'name = "lint"\nformat = "gnu"\ncommand = {json.dumps([sys.executable, "-c", LINT])}\n'
        "[[tool.bounded-review.checks]]\n"
        f'name = "audit"\ncommand = {json.dumps([sys.executable, "-c", AUDIT])}\n'
    )
    files = {"pyproject.toml": config, "app.py": APP_BASE, "test_client.py": TESTS}
    files |= {"tokens.py": f"GHP = {GHP!r}\n", "test_broken.py": BROKEN}
    project.commit(files, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": APP_HEAD}, "change")
    return packets


def review(
    pytester: pytest.Pytester, tmp_path: Path, *args: str, env: dict[str, str]
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """One review inside GitHub Actions; the report, and every text it wrote by name."""
    summary = tmp_path / "summary.md"
    summary.write_text("")
    state = pytester.path / ".bounded-review"  # outputs stay inside the repository
    sarif, markdown = state / "out.sarif", state / "out.md"
    actions = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    with pytest.MonkeyPatch.context() as patch:
        for key, value in {**env, **actions}.items():
            patch.setenv(key, value)
        result = pytester.runpytest_subprocess(
            "--bounded-review",
            "--bounded-review-base=main",
            f"--bounded-review-sarif={sarif}",
            f"--bounded-review-markdown={markdown}",
            *args,
        )
    path = pytester.path / ".bounded-review" / "report.json"
    stdout = result.stdout.str()
    # The tool's own section of the terminal (pytest's own traceback is pytest's, as without
    # the plugin): the summary and, inside Actions, the annotations.
    ours = re.split(r"=+ bounded review =+\n", stdout)[-1]
    ours = re.split(r"^=+ .* =+$", ours, flags=re.MULTILINE)[0]
    outputs = {
        "report": path.read_text(),
        "sarif": sarif.read_text(),
        "markdown": markdown.read_text(),
        "step summary": summary.read_text(),
        "terminal": ours,
        "annotations": "\n".join(line for line in ours.splitlines() if line.startswith("::")),
    }
    return result.ret, json.loads(outputs["report"]), outputs


def leaks(outputs: dict[str, str]) -> list[str]:
    return [
        f"{where}: {piece}" for where, text in outputs.items() for piece in LEAKS if piece in text
    ]


def by_id(failures: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {f["nodeid"]: f for f in failures}


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_secrets_in_failures_reach_no_output_and_failures_classify_as_before(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path, workers: list[str]
) -> None:
    packets = setup(project, tmp_path)
    with project.untouched():
        code, report, outputs = review(pytester, tmp_path, *workers, env=ENV)
    outputs["packet"] = packets.read_text()
    assert outputs["packet"], "the lane received no packet"
    assert not leaks(outputs)
    assert code == 1
    assert report["gate"]["review_clean"] == "no"
    new = by_id(report["tests"]["target_related"])
    old = by_id(report["tests"]["pre_existing"])
    assert sorted(new) == [
        "test_client.py::test_client",
        "test_client.py::test_literal",
        "test_client.py::test_param[[secret: MY_SERVICE_PASSWORD]]",
        "test_client.py::test_sub",
    ]
    assert sorted(old) == [
        "test_broken.py",
        "test_client.py::test_harmless_old",
        "test_client.py::test_old",
    ]
    client = new["test_client.py::test_client"]["signature"]
    for replaced in ("MY_SERVICE_PASSWORD", "github-token", "aws-access-key-id", "private-key"):
        assert f"[secret: {replaced}]" in client, client
    assert "[secret: github-token]" in new["test_client.py::test_literal"]["signature"]
    assert new["test_client.py::test_literal"]["reason"] == "passes at base"
    sub = new["test_client.py::test_sub"]["signature"]
    assert sub.startswith("[as password=[secret: MY_SERVICE_PASSWORD]]: AssertionError"), sub
    broken = old["test_broken.py"]["signature"]
    assert "[secret: MY_SERVICE_PASSWORD] [secret: aws-access-key-id]" in broken, broken
    # Ordinary text stays: short values and paths of secret-looking variables.
    harmless = old["test_client.py::test_harmless_old"]["signature"]
    assert "flag true key file /etc/app/key.pem mode N" in harmless, harmless
    # The checks' output, scrubbed the same at base and head: still pre-existing.
    checks = {c["name"]: c for c in report["checks"]}
    (lint,) = checks["lint"]["pre_existing"]
    assert lint["message"] == "leaked [secret: MY_SERVICE_PASSWORD] [secret: github-token]"
    (audit,) = checks["audit"]["pre_existing"]
    assert (
        audit["message"]
        == "exit 1: audit saw [secret: MY_SERVICE_PASSWORD] [secret: aws-access-key-id]"
    )
    # A second review reads the base's answers from the cache: the same signatures.
    again_code, again, again_outputs = review(pytester, tmp_path, *workers, env=ENV)
    assert not leaks(again_outputs)
    assert again_code == 1
    for bucket in ("target_related", "pre_existing"):
        assert by_id(again["tests"][bucket]) == by_id(report["tests"][bucket])


STRICT = ("--bounded-review-no-lanes", "-W", "error", "--strict-config", "--strict-markers")
STRICT += ("-p", "no:cacheprovider")


@pytest.mark.slow
def test_ordinary_failures_and_passing_runs_are_unchanged_by_secret_variables(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    """Harmless: with no secret in any failure, the session's secret variables change nothing
    (the report with them is the report without them), and a pre-existing failure alone is
    still clean, under a strict configuration."""
    project.commit(
        {
            "pyproject.toml": "[tool.bounded-review]\n",
            "app.py": "x = 1\n",
            "test_a.py": (
                "import os\n\n\ndef test_old():\n"
                "    flag = os.environ.get('USE_TOKEN')\n"
                "    assert flag == 'no', f'flag {flag} at /etc/app/key.pem'\n\n\n"
                "def test_fine():\n    pass\n"
            ),
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "x = 2  # harmless\n"}, "change")
    runs = []
    for env in ({**ENV, "GITHUB_TOKEN": GHP}, {"USE_TOKEN": "true"}):
        with project.untouched():
            code, report, outputs = review(pytester, tmp_path, *STRICT, env=env)
        assert not leaks(outputs)
        assert code == 0
        assert report["gate"] == {"review_clean": "yes", "reasons": []}
        (old,) = report["tests"]["pre_existing"]
        assert old["signature"].startswith("AssertionError: flag true at /etc/app/key.pem")
        del report["generated_at"]
        runs.append(report)
    assert runs[0] == runs[1]
