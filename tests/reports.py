"""Sample reports for the renderer tests: every field set, untrusted text where it can be."""

from __future__ import annotations

import datetime

from pytest_boundedreview.models.finding import CheckFinding, RejectedFinding, ReportFinding
from pytest_boundedreview.models.report import (
    Budget,
    CheckResult,
    Findings,
    Gate,
    Invocation,
    LaneReport,
    LoopInfo,
    Reduction,
    Report,
    RiskInfo,
    RiskReason,
    ShardInfo,
    Statuses,
    SuiteInfo,
    TargetInfo,
    Usage,
)
from pytest_boundedreview.models.report import (
    TestFailure as Failure,
)
from pytest_boundedreview.models.report import (
    Tests as SessionTests,
)
from pytest_boundedreview.models.waiver import (
    WaivedCheckFinding,
    WaivedFinding,
    Waiver,
    WaiverNote,
)

EVIL = [
    "x\n::error file=a::pwned",
    "\x1b]52;c;cGF5bG9hZA==\x07 and \x1b[31mred\x1b[0m",
    "@org/team please look",
    "![](http://x/p.png) <img src=x onerror=alert(1)> [click](javascript:alert(1))",
    "| a | b | `code` **bold** \u202egnp.exe \u200b",
    "100% done\r\n::warning::fake",
    "tags \U000e0067\U000e0069 \u061c \u2028 soft\xadhyphen\ttab",
    "mail admin@evil.example, code `a` and ``b``",
]


def finding(n: int, severity: str = "blocking", text: str = "off by one") -> ReportFinding:
    return ReportFinding(
        path=f"src/m{n % 7}.py",
        line=n % 400 + 1,
        end_line=n % 400 + 2,
        severity=severity,  # type: ignore[arg-type]
        category="correctness" if severity == "blocking" else "style",
        failure_mode=text,
        evidence=f"evidence {n}",
        remediation="fix",
        fingerprint=f"{n:020d}",
        lanes=["rev"] if n % 3 else [],
        verification="quoted",
        note="pre-existing, not a blocker of this target" if n % 5 == 0 else None,
    )


def report(findings: int = 3, text: str = "off by one", shard: bool = False) -> Report:
    failure = Failure(nodeid="tests/test_a.py::test_x", signature="AssertionError", reason=text)
    check_finding = CheckFinding(
        rule="F401", path="src/a.py", line=3, message=text, fingerprint="c1"
    )

    def waiver(reason: str) -> Waiver:
        return Waiver(
            fingerprint="w" * 16,
            disposition="user",
            reason=reason,
            by="dev@example.com",
            expires=datetime.date(2027, 1, 31),
        )

    return Report(
        **{
            "schema": "bounded-review/report/v1",
            "tool_version": "0.1.0",
            "generated_at": "2026-12-01T00:00:00+00:00",
            "target": TargetInfo(
                kind="pr",
                base="main",
                head="abc",
                revision="tree:1",
                files=["src/a.py"],
                empty=False,
                base_commit="def",
                reason="no uncommitted changes: reviewing the commits since "
                "merge-base(main, HEAD) = def",
            ),
            "authorization": "review-and-fix",
            "risk": RiskInfo(tier="strict", reasons=[RiskReason(path="src/a.py", rule=text)]),
            "budget": Budget(max_lanes=3, max_concurrent=2, max_repair_loops=3),
            "loop": LoopInfo(
                loop_id="pr-main-f", round=2, repair_loops_used=1, status="open", flags=["stuck"]
            ),
            "checks": [
                CheckResult(
                    name="ruff",
                    required=True,
                    status="fail",
                    target_related=[check_finding],
                    pre_existing=[check_finding],
                    waived=[
                        WaivedCheckFinding(
                            **check_finding.model_dump(), check="ruff", waiver=waiver(text)
                        )
                    ],
                )
            ],
            "tests": SessionTests(
                passed=5,
                failed=3,
                target_related=[failure],
                pre_existing=[failure],
                flaky=[failure],
                unknown=[failure],
            ),
            "lanes": [
                LaneReport(
                    name="rev",
                    lens="correctness",
                    role="verdict",
                    status="revise",
                    attempts=1,
                    rationale=text,
                    note=text,
                    model="m1",
                    tool="claude",
                    tool_version=f"2.1.332 {text}",
                    usage=Usage(input_tokens=1200, output_tokens=80, cost_usd=0.0123, turns=3),
                )
            ],
            "findings": Findings(
                blocking=[finding(n, text=text) for n in range(findings)],
                advisory=[finding(n, "advisory", text) for n in range(findings)],
                rejected=[RejectedFinding(reason=text, lanes=["rev"], path="../x", line=0)],
                waived=[WaivedFinding(**finding(7, text=text).model_dump(), waiver=waiver(text))],
            ),
            "waivers": [
                WaiverNote(
                    state="stale", fingerprint="s" * 16, disposition="user", by=text, why=text
                )
            ],
            "blockers_fixed": ["f" * 20],
            "gate": Gate(review_clean="no", reasons=[text]),
            "statuses": Statuses(local_verification="failed", review_clean="no", committed="yes"),
            "limitations": [text],
            "next_action": text,
            "usage": Usage(input_tokens=1200, output_tokens=80, cost_usd=0.0123, turns=3),
            "suite": SuiteInfo(defined_by=[text], left_out=[text], left_out_total=3),
            "invocation": Invocation(
                state_dir=".bounded-review",
                reduced=[
                    Reduction(
                        key="no_lanes",
                        option="--bounded-review-no-lanes",
                        configured="false",
                        used="true",
                        why=text,
                    )
                ],
            ),
            "shard": ShardInfo(
                rootdir=".",
                args=["-q"],
                deselected=2,
                complete=False,
                nodeids=["t.py::a"],
                deselected_ids=["t.py::b"],
                files=["t.py"],
                suite_files=["t.py"],
                narrowed=text,
                project_deselected=["t.py::c"],
            )
            if shard
            else None,
        }
    )
