"""Typed dispositions end to end: real pytest sessions over real commits, a real reviewer
script, the committed waivers file read from the snapshot, and ``bounded-review waive``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

# Blocking findings for lines saying BUG (correctness) or LEAK (security); LOW gives a
# confidence of 0.3, NOCONF none.
REVIEWER = """
import json, sys
findings = []
for n, text in enumerate(open("app.py").read().splitlines(), 1):
    for word, category in (("BUG", "correctness"), ("LEAK", "security")):
        if word in text:
            finding = {"path": "app.py", "line": n, "severity": "blocking",
                       "category": category, "failure_mode": word.lower() + " on this line",
                       "evidence": "the line says so", "quote": text, "remediation": "fix it"}
            if "NOCONF" not in text:
                finding["confidence"] = 0.3 if "LOW" in text else 0.9
            findings.append(finding)
print(json.dumps({"schema": "bounded-review/lane-result/v1",
                  "verdict": "revise" if findings else "pass",
                  "rationale": "looked at app.py", "findings": findings}))
"""


class Project:
    def __init__(self, pytester: pytest.Pytester, repo: GitRepo, tmp_path: Path, extra: str):
        self.pytester, self.repo = pytester, repo
        script = tmp_path / "reviewer.py"
        script.write_text(REVIEWER)
        command = json.dumps([sys.executable, str(script)])
        config = (
            "[tool.bounded-review]\n" + extra + '[[tool.bounded-review.lanes]]\nname = "rev"\n'
            f'lens = "correctness"\ncommand = {command}\n'
        )
        repo.commit(
            {
                "pyproject.toml": config,
                "app.py": "x = 1\n",
                "test_app.py": "def test_a():\n    pass\n",
            },
            "base",
        )
        repo.git("checkout", "--quiet", "-b", "feature")

    def review(self, files: dict[str, str] | None = None, *args: str) -> dict[str, Any]:
        if files:
            self.repo.commit(files, "edit")
        result = self.pytester.runpytest_subprocess(
            "--bounded-review", "--bounded-review-base=main", *args
        )
        report: dict[str, Any] = json.loads(
            (self.pytester.path / ".bounded-review" / "report.json").read_text()
        )
        gate = report["gate"]["review_clean"]
        assert result.ret == (0 if gate == "yes" else 1), result.stdout.str()
        return report

    def cli(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return warmstart.run(
            [sys.executable, "-m", "pytest_boundedreview", *argv],
            cwd=self.pytester.path,
            capture_output=True,
            text=True,
        )


@pytest.fixture
def app(pytester: pytest.Pytester, project: GitRepo, tmp_path: Path) -> Project:
    return Project(pytester, project, tmp_path, "")


def test_a_waived_blocker_leaves_the_gate_stays_listed_and_follows_the_code(
    app: Project,
) -> None:
    first = app.review({"app.py": "x = 2  # BUG here\n"})
    assert first["gate"]["review_clean"] == "no"
    (blocker,) = first["findings"]["blocking"]
    waivers = app.pytester.path / "bounded-review-waivers.toml"
    kept = '# reviewed in PRs\n[[waiver]]\nfingerprint = "gone"\ndisposition = "user"\n'
    kept += 'reason = "an old one"\nby = "a@example.com"\n'
    waivers.write_text(kept)
    done = app.cli(
        "waive", blocker["fingerprint"], "--reason", "x = 2 is intended", "--by", "me@example.com"
    )
    assert done.returncode == 0, done.stderr
    text = waivers.read_text()
    assert text.startswith(kept)  # every other byte kept
    assert f'fingerprint = "{blocker["fingerprint"]}"' in text

    report = app.review({"bounded-review-waivers.toml": text})
    assert report["gate"]["review_clean"] == "yes"
    (waived,) = report["findings"]["waived"]
    assert (waived["fingerprint"], waived["waiver"]["by"]) == (
        blocker["fingerprint"],
        "me@example.com",
    )
    assert report["findings"]["blocking"] == []
    (stale,) = report["waivers"]
    assert (stale["state"], stale["fingerprint"]) == ("stale", "gone")

    moved = "\n".join(f"y{n} = {n}" for n in range(20)) + "\nx = 2  # BUG here\n"
    report = app.review({"app.py": moved})  # the code moved 20 lines down
    assert report["findings"]["waived"][0]["line"] == 21
    assert report["gate"]["review_clean"] == "yes"


def test_a_user_never_waives_a_security_finding(app: Project) -> None:
    first = app.review({"app.py": "x = 2  # LEAK\n"})
    (leak,) = first["findings"]["blocking"]
    refused = app.cli("waive", leak["fingerprint"], "--reason", "fine", "--by", "me@x.org")
    assert refused.returncode == 4
    assert "refused: a user waiver never waives a protected finding (security)" in refused.stderr
    assert not (app.pytester.path / "bounded-review-waivers.toml").exists()
    handmade = (
        f'[[waiver]]\nfingerprint = "{leak["fingerprint"]}"\ndisposition = "user"\n'
        'reason = "fine"\nby = "me@x.org"\n'
    )
    report = app.review({"bounded-review-waivers.toml": handmade})
    assert report["gate"]["review_clean"] == "no"  # still blocking
    (note,) = report["waivers"]
    assert note["state"] == "refused"


def test_a_security_reviewer_waives_for_the_exact_revision_only(app: Project) -> None:
    first = app.review({"app.py": "x = 2  # LEAK\n"})
    (leak,) = first["findings"]["blocking"]
    done = app.cli(
        "waive",
        leak["fingerprint"],
        "--reason",
        "checked by hand",
        "--by",
        "sec@x.org",
        "--disposition",
        "security-reviewer",
        "--evidence",
        "SEC-42",
    )
    assert done.returncode == 0, done.stderr
    text = (app.pytester.path / "bounded-review-waivers.toml").read_text()
    report = app.review({"bounded-review-waivers.toml": text})
    assert report["gate"]["review_clean"] == "yes"  # same code: its evidence holds
    assert report["findings"]["waived"][0]["waiver"]["evidence"]["reference"] == "SEC-42"

    report = app.review({"other.py": "z = 1\n"})  # the same line, another revision
    assert report["gate"]["review_clean"] == "no"  # another revision: it does not apply
    assert any("its evidence (SEC-42) is for tree:" in n["why"] for n in report["waivers"])


def test_an_expired_waiver_is_void(app: Project) -> None:
    first = app.review({"app.py": "x = 2  # BUG\n"})
    fingerprint = first["findings"]["blocking"][0]["fingerprint"]
    expired = (
        f'[[waiver]]\nfingerprint = "{fingerprint}"\ndisposition = "user"\nreason = "r"\n'
        'by = "me@x.org"\nexpires = 2020-01-01\n'
    )
    report = app.review({"bounded-review-waivers.toml": expired})
    assert report["gate"]["review_clean"] == "no"
    (note,) = report["waivers"]
    assert (note["state"], note["why"]) == ("void", "expired on 2020-01-01")


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[[waiver]]\nfingerprint = 'x'\n", "[[waiver]] entry 1 (x): disposition"),
        ("[[waiver]]\nfingerprint = 'x'\ndisposition = 'user'\nreason = ''\nby = 'b'\n", "reason"),
        ("waiver = 3\n", "`waiver` must be an array of tables"),
        ("[[waiver\n", "not valid TOML"),
        ("[[waivers]]\n", "unknown key 'waivers'"),
    ],
)
def test_a_malformed_waivers_file_is_a_config_error(app: Project, text: str, named: str) -> None:
    app.repo.commit({"bounded-review-waivers.toml": text}, "waivers")
    result = app.pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    assert result.ret == 4
    err = result.stderr.str()
    assert "bounded-review-waivers.toml" in err
    assert named in err


def test_a_low_confidence_blocker_is_advisory_with_a_note(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    floor = Project(pytester, project, tmp_path, "min_confidence = 0.5\n")
    report = floor.review({"app.py": "x = 2  # BUG LOW\ny = 3  # BUG\n"})
    (blocking,) = report["findings"]["blocking"]
    (advisory,) = report["findings"]["advisory"]
    assert blocking["line"] == 2
    assert advisory["line"] == 1
    assert advisory["note"] == "confidence 0.3 is below the floor of 0.5: advisory"


def test_required_confidence_demotes_a_blocker_without_one(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    floor = Project(pytester, project, tmp_path, "require_confidence = true\n")
    report = floor.review({"app.py": "x = 2  # BUG NOCONF\n"})
    (advisory,) = report["findings"]["advisory"]
    assert advisory["note"] == "no confidence given (require_confidence): advisory"
    # Nothing blocks: the lane's revise, backed by no verified blocker, is a disagreement.
    assert report["gate"] == {"review_clean": "yes", "reasons": []}
    (row,) = report["lanes"]
    assert row["status"] == "revise"
    assert "revise not backed by a verified blocker" in row["note"]


def test_waive_refuses_a_blank_reason_and_a_past_expiry(app: Project) -> None:
    first = app.review({"app.py": "x = 2  # BUG\n"})
    fingerprint = first["findings"]["blocking"][0]["fingerprint"]
    blank = app.cli("waive", fingerprint, "--reason", "   ", "--by", "me@x.org")
    assert blank.returncode == 4
    assert "`reason` must say something" in blank.stderr
    past = app.cli(
        "waive", fingerprint, "--reason", "r", "--by", "me@x.org", "--expires", "2020-01-01"
    )
    assert past.returncode == 4
    assert "--expires 2020-01-01 is past" in past.stderr
    assert not (app.pytester.path / "bounded-review-waivers.toml").exists()


def test_security_reviewer_evidence_binds_every_finding_to_its_revision(app: Project) -> None:
    first = app.review({"app.py": "x = 2  # BUG\n"})
    fingerprint = first["findings"]["blocking"][0]["fingerprint"]
    other = "tree:" + "0" * 40
    waiver = (
        f'[[waiver]]\nfingerprint = "{fingerprint}"\ndisposition = "security-reviewer"\n'
        f'reason = "r"\nby = "sec@x.org"\n'
        f'evidence = {{ reference = "SEC-1", revision = "{other}" }}\n'
    )
    report = app.review({"bounded-review-waivers.toml": waiver})
    assert report["gate"]["review_clean"] == "no"
    (note,) = report["waivers"]
    assert note["state"] == "refused"
    assert note["why"].startswith(f"its evidence (SEC-1) is for {other}, not tree:")
