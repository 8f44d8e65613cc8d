"""Rules come from the base, on real sessions: a change that relaxes ``[tool.bounded-review]``
is reviewed under the base's value and the report lists what it proposes; a change that
tightens it applies at once; a first configuration is held to the defaults; a harmless edit of
the configuration changes nothing."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.core.fingerprint import finding_fingerprint

PY = json.dumps(sys.executable)
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"
# A check that fails when app.OK is false: target-related when the change makes it so.
CHECK = (
    '[[tool.bounded-review.checks]]\nname = "ok"\n'
    f'command = [{PY}, "-c", "import app, sys; sys.exit(0 if app.OK else 1)"]\n'
)
# A reviewer that files a blocking correctness finding for each line of app.py saying BUG
# (LOW: confidence 0.3, NOCONF: none).
REVIEWER = """
import json
findings = []
for n, text in enumerate(open("app.py").read().splitlines(), 1):
    if "BUG" in text:
        finding = {"path": "app.py", "line": n, "severity": "blocking",
                   "category": "correctness", "failure_mode": "a bug on this line",
                   "evidence": "the line says so", "quote": text, "remediation": "fix it"}
        if "NOCONF" not in text:
            finding["confidence"] = 0.3 if "LOW" in text else 0.9
        findings.append(finding)
print(json.dumps({"schema": "bounded-review/lane-result/v1",
                  "verdict": "revise" if findings else "pass",
                  "rationale": "looked at app.py", "findings": findings}))
"""
DEBUGGER_LINE = "    breakpoint()"


def lane(tmp_path: Path) -> str:
    script = tmp_path / "reviewer.py"
    script.write_text(REVIEWER)
    command = json.dumps([sys.executable, str(script)])
    return (
        f'[[tool.bounded-review.lanes]]\nname = "rev"\nlens = "correctness"\ncommand = {command}\n'
    )


def setup(project: GitRepo, config: str | None, **files: str) -> None:
    """The base: a passing test, and ``config`` as its ``[tool.bounded-review]`` table (none
    at all when ``None``)."""
    table = '[project]\nname = "app"\n' if config is None else "[tool.bounded-review]\n" + config
    project.commit(
        {
            "pyproject.toml": table,
            "app.py": "OK = True\n\n\ndef f():\n    return 1\n",
            "test_app.py": "def test_a():\n    pass\n",
            **files,
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")


def change(project: GitRepo, config: str | None = None, **files: str) -> None:
    if config is not None:
        files["pyproject.toml"] = "[tool.bounded-review]\n" + config
    project.commit(files, "change")


def review(pytester: pytest.Pytester, *args: str) -> dict[str, Any]:
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "--bounded-review", "--bounded-review-base=main", *args
    )
    report: dict[str, Any] = json.loads(
        (pytester.path / ".bounded-review" / "report.json").read_text()
    )
    gate = report["gate"]["review_clean"]
    assert result.ret == (0 if gate == "yes" else 1), result.stdout.str()
    return report


def proposed(report: dict[str, Any]) -> list[str]:
    """The keys the change proposes, from its advisory "applies after merge" findings."""
    found = report["findings"]["advisory"] + report["findings"]["blocking"]
    keys = []
    for finding in found:
        if finding["note"] == "config: applies after merge":
            assert finding["severity"] == "advisory"
            assert finding["verification"] == "deterministic"
            assert finding["path"] == "pyproject.toml"
            keys.append(re.findall(r"`([^`]+)` is", finding["evidence"])[0])
    return sorted(keys)


def notes(report: dict[str, Any], severity: str) -> list[str]:
    return sorted(f["note"] for f in report["findings"][severity])


@pytest.mark.slow
def test_a_private_key_with_the_secrets_scan_turned_off_still_blocks(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, "")
    change(project, '[tool.bounded-review.scans]\nsecrets = "off"\n', **{"key.pem": PRIVATE_KEY})
    report = review(pytester)
    assert report["gate"]["review_clean"] == "no"
    assert notes(report, "blocking") == ["scan: secrets"]
    assert proposed(report) == ["scans.secrets"]
    (finding,) = [f for f in report["findings"]["advisory"] if f["note"].startswith("config")]
    assert finding["line"] == 3  # secrets = "off"
    assert "lowers the `secrets` scan from blocking to off" in finding["failure_mode"]


@pytest.mark.slow
def test_a_failing_required_check_made_optional_still_blocks(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, "no_lanes = true\n" + CHECK)
    relaxed = CHECK.replace('name = "ok"\n', 'name = "ok"\nrequired = false\n')
    change(project, "no_lanes = true\n" + relaxed, **{"app.py": "OK = False\n"})
    report = review(pytester)
    assert report["gate"]["review_clean"] == "no"
    (check,) = report["checks"]
    assert (check["name"], check["required"], check["status"]) == ("ok", True, "fail")
    assert proposed(report) == ["checks.ok"]


@pytest.mark.slow
def test_a_removed_check_still_runs(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project, "no_lanes = true\n" + CHECK)
    change(project, "no_lanes = true\n", **{"app.py": "OK = False\n"})
    report = review(pytester)
    assert report["gate"]["review_clean"] == "no"
    assert [c["name"] for c in report["checks"]] == ["ok"]
    assert proposed(report) == ["checks.ok"]


@pytest.mark.slow
def test_tightening_applies_at_once(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project, "no_lanes = true\n")
    tighter = '[tool.bounded-review.scans]\ndebugger = "blocking"\n'
    change(
        project,
        "no_lanes = true\n" + CHECK + tighter,
        **{"app.py": f"OK = False\n\n\ndef f():\n{DEBUGGER_LINE}\n"},
    )
    report = review(pytester)
    assert report["gate"]["review_clean"] == "no"
    assert notes(report, "blocking") == ["scan: debugger"]  # blocking at once
    assert [(c["name"], c["status"]) for c in report["checks"]] == [("ok", "fail")]
    assert proposed(report) == []


@pytest.mark.slow
def test_a_first_configuration_is_held_to_the_defaults(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, None)
    change(
        project,
        'no_lanes = true\n[tool.bounded-review.scans]\nsecrets = "off"\n',
        **{"key.pem": PRIVATE_KEY},
    )
    report = review(pytester)
    assert report["gate"]["review_clean"] == "no"
    assert notes(report, "blocking") == ["scan: secrets"]
    assert proposed(report) == ["no_lanes", "scans.secrets"]


@pytest.mark.slow
def test_a_first_configuration_that_only_adds_applies_at_once(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, None)
    change(project, CHECK + '[tool.bounded-review.scans]\ndebugger = "blocking"\n')
    report = review(pytester, "--bounded-review-no-lanes")
    assert report["gate"]["review_clean"] == "yes"
    assert [(c["name"], c["status"]) for c in report["checks"]] == [("ok", "pass")]
    assert report["findings"]["blocking"] == report["findings"]["advisory"] == []


@pytest.mark.slow
def test_a_harmless_edit_of_the_configuration_is_clean(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, "no_lanes = true\n" + CHECK)
    change(
        project,
        "# reviewed by the team\nno_lanes = true\nbase_timeout = 600\n" + CHECK,
        **{"app.py": "OK = True\n"},
    )
    report = review(pytester)
    assert report["gate"]["review_clean"] == "yes"
    assert report["findings"]["blocking"] == report["findings"]["advisory"] == []
    assert [(c["name"], c["status"]) for c in report["checks"]] == [("ok", "pass")]


@pytest.mark.slow
def test_a_base_configuration_this_version_rejects_gives_way(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, "no_lanes = true\nfuture_key = 1\n")
    change(project, 'no_lanes = true\n[tool.bounded-review.scans]\nsecrets = "off"\n')
    report = review(pytester)
    assert report["gate"]["review_clean"] == "yes"
    assert any(
        "does not validate under this version" in line and "future_key" in line
        for line in report["limitations"]
    )


@pytest.mark.slow
def test_accepting_a_partial_run_waits_for_the_merge(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, "no_lanes = true\n", **{"test_other.py": "def test_b():\n    pass\n"})
    change(project, "no_lanes = true\nallow_partial = true\n", **{"app.py": "OK = 1\n"})
    report = review(pytester, "test_app.py")
    assert report["gate"]["review_clean"] == "indeterminate"
    assert any("a partial run" in reason for reason in report["gate"]["reasons"])
    assert proposed(report) == ["allow_partial"]


@pytest.mark.slow
def test_a_suite_the_change_declares_is_not_the_suite_yet(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, "no_lanes = true\n")
    failing = "import pytest\n\n\n@pytest.mark.slow\ndef test_b():\n    assert False\n"
    change(
        project,
        'no_lanes = true\nsuite = ["-m", "not slow"]\n',
        **{"test_other.py": failing},
    )
    project.commit({"pytest.ini": "[pytest]\nmarkers = slow\n"}, "marker")
    report = review(pytester, "-m", "not slow")
    assert report["gate"]["review_clean"] == "indeterminate"
    assert proposed(report) == ["suite"]


def waiver(fingerprint: str) -> str:
    return (
        f'[[waiver]]\nfingerprint = "{fingerprint}"\ndisposition = "user"\n'
        'reason = "a debugging aid"\nby = "me@example.com"\n'
    )


DEBUGGER_APP = f"OK = True\n\n\ndef f():\n{DEBUGGER_LINE}\n"
DEBUGGER_PRINT = finding_fingerprint("app.py", "correctness", f"debugger:{DEBUGGER_LINE}")


@pytest.mark.slow
def test_waivers_from_another_file_wait_for_the_merge(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, 'no_lanes = true\n[tool.bounded-review.scans]\ndebugger = "blocking"\n')
    config = 'no_lanes = true\nwaivers_file = "mine.toml"\n'
    config += '[tool.bounded-review.scans]\ndebugger = "blocking"\n'
    change(project, config, **{"app.py": DEBUGGER_APP, "mine.toml": waiver(DEBUGGER_PRINT)})
    report = review(pytester)
    assert report["gate"]["review_clean"] == "no"
    assert notes(report, "blocking") == ["scan: debugger"]
    assert proposed(report) == ["waivers_file"]


@pytest.mark.slow
def test_a_protected_category_the_change_drops_stays_protected(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    scans = '[tool.bounded-review.scans]\ndebugger = "blocking"\n'
    setup(project, 'no_lanes = true\nprotected_categories = ["correctness"]\n' + scans)
    change(
        project,
        "no_lanes = true\n" + scans,
        **{"app.py": DEBUGGER_APP, "bounded-review-waivers.toml": waiver(DEBUGGER_PRINT)},
    )
    report = review(pytester)
    assert report["gate"]["review_clean"] == "no"
    assert [w["state"] for w in report["waivers"]] == ["refused"]
    assert proposed(report) == ["protected_categories"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("relaxed", "line"),
    [
        ("", "    return 2  # BUG"),  # the lane itself removed
        ("no_lanes = true\n", "    return 2  # BUG"),
        ("max_lanes = 0\n", "    return 2  # BUG"),
        ("min_confidence = 0.5\n", "    return 2  # BUG LOW"),
        ("require_confidence = true\n", "    return 2  # BUG NOCONF"),
        ("require_reproduction = true\n", "    return 2  # BUG"),
    ],
)
def test_a_relaxed_reviewer_setting_keeps_the_base_reviewers(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path, relaxed: str, line: str
) -> None:
    reviewer = lane(tmp_path)
    setup(project, reviewer)
    keep = "" if relaxed == "" else reviewer
    change(project, relaxed + keep, **{"app.py": f"OK = True\n\n\ndef f():\n{line}\n"})
    report = review(pytester)
    assert report["gate"]["review_clean"] == "no"
    (blocker,) = report["findings"]["blocking"]
    assert blocker["lanes"] == ["rev"]
    key = relaxed.partition(" ")[0] or "lanes.rev"
    assert proposed(report) == [key]


SCANS = '[tool.bounded-review.scans]\ndebugger = "blocking"\n'


@pytest.mark.slow
def test_a_waiver_the_change_adds_is_marked_in_every_output(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, "no_lanes = true\n" + SCANS)
    change(
        project, **{"app.py": DEBUGGER_APP, "bounded-review-waivers.toml": waiver(DEBUGGER_PRINT)}
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:randomly",
        "--bounded-review",
        "--bounded-review-base=main",
        "--bounded-review-markdown=review.md",
    )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    assert report["gate"]["review_clean"] == "yes"  # waivers_from = "head": it applies
    (waived,) = report["findings"]["waived"]
    assert waived["added_by_change"] is True
    result.stdout.fnmatch_lines(["waived, a waiver the change itself adds: app.py:5 *"])
    markdown = (pytester.path / "review.md").read_text()
    assert "user waiver by me@" in markdown
    assert ", a waiver the change itself adds: a debugging aid" in markdown


@pytest.mark.slow
def test_waivers_from_the_base_leave_out_the_change_s_own(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, 'no_lanes = true\nwaivers_from = "base"\n' + SCANS)
    change(
        project, **{"app.py": DEBUGGER_APP, "bounded-review-waivers.toml": waiver(DEBUGGER_PRINT)}
    )
    report = review(pytester)
    assert report["gate"]["review_clean"] == "no"
    assert notes(report, "blocking") == ["scan: debugger"]
    assert report["findings"]["waived"] == []


@pytest.mark.slow
def test_a_waiver_at_the_base_applies_unmarked(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(
        project,
        'no_lanes = true\nwaivers_from = "base"\n' + SCANS,
        **{"bounded-review-waivers.toml": waiver(DEBUGGER_PRINT)},
    )
    change(project, **{"app.py": DEBUGGER_APP})
    report = review(pytester)
    assert report["gate"]["review_clean"] == "yes"
    (waived,) = report["findings"]["waived"]
    assert waived["added_by_change"] is False


@pytest.mark.slow
def test_moving_waivers_from_to_the_head_waits_for_the_merge(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, 'no_lanes = true\nwaivers_from = "base"\n' + SCANS)
    change(
        project,
        'no_lanes = true\nwaivers_from = "head"\n' + SCANS,
        **{"app.py": DEBUGGER_APP, "bounded-review-waivers.toml": waiver(DEBUGGER_PRINT)},
    )
    report = review(pytester)
    assert report["gate"]["review_clean"] == "no"
    assert proposed(report) == ["waivers_from"]
