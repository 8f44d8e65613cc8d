"""A sample reviewer lane for ``bounded-review demo``.

Run as ``python -m pytest_boundedreview.samplelane``.

It reads the packet on stdin, looks at the added lines of the diff, and reports an arithmetic
constant added to a return value as a finding, quoting the line — and, like many reviewers,
files a naming nit as "blocking" (triage demotes it). Real reviewers (a model CLI, an endpoint)
answer with the same lane-result JSON.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

_SUSPECT = re.compile(r"^\s*return .*[+-] 1\s*$")
_TERSE = re.compile(r"^def ([a-z]{1,3})\(")


def review(packet: dict[str, Any]) -> dict[str, Any]:
    findings = []
    path, line = None, 0
    for text in packet["diff"].splitlines():
        if text.startswith("+++ b/"):
            path = text[6:]
        elif text.startswith("@@"):
            line = int(re.findall(r"\+(\d+)", text)[0]) - 1
        elif text.startswith("+") and path:
            line += 1
            if _SUSPECT.match(text[1:]):
                findings.append(
                    {
                        "path": path,
                        "line": line,
                        "severity": "blocking",
                        "category": "correctness",
                        "failure_mode": "an off-by-one constant is added to a returned value",
                        "evidence": "the change adds `+ 1` to a return expression",
                        "quote": text[1:].strip(),
                        "remediation": "return the value without the constant",
                        "confidence": 0.8,
                    }
                )
            if terse := _TERSE.match(text[1:]):
                findings.append(
                    {
                        "path": path,
                        "line": line,
                        "severity": "blocking",
                        "category": "naming",
                        "failure_mode": f"the name `{terse[1]}` says nothing about what it does",
                        "evidence": "a new function with a name of three letters or fewer",
                        "quote": text[1:].strip(),
                        "remediation": "name it after what it computes",
                    }
                )
        elif not text.startswith("-"):
            line += 1
    return {
        "schema": "bounded-review/lane-result/v1",
        "verdict": "revise" if findings else "pass",
        "rationale": f"looked at {len(packet['scope'])} changed file(s)",
        "findings": findings,
    }


def main() -> int:
    print(json.dumps(review(json.load(sys.stdin))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
