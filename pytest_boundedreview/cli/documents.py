"""The commands that read documents: ``schema`` prints a JSON Schema, ``validate`` checks
files against theirs, ``report`` prints the last report in a format."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import NoReportError, UsageError

if TYPE_CHECKING:
    from ..models.report import Report

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024


def cmd_schema(args: argparse.Namespace) -> int:
    from ..models import json_schema

    print(json.dumps(json_schema(args.name), indent=2, sort_keys=True))
    return 0


def _validate_one(path: Path, forced: str | None) -> list[str]:
    from pydantic import ValidationError

    from ..core import strictjson
    from ..core.validation import describe_all
    from ..models import SCHEMA_IDS, Finding, validate

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from exc
    try:
        document = strictjson.loads(data, max_bytes=MAX_DOCUMENT_BYTES)
    except strictjson.StrictJSONError as exc:
        return [str(exc)]
    name = forced
    if name is None:
        declared = document.get("schema") if isinstance(document, dict) else None
        name = SCHEMA_IDS.get(declared) if isinstance(declared, str) else None
        if name is None:
            known = ", ".join(sorted(SCHEMA_IDS))
            return [
                f"schema: unknown or missing {declared!r}; expected one of {known} "
                "(or pass --schema NAME)"
            ]
    try:
        validated = validate(name, document)
    except ValidationError as exc:
        return describe_all(exc)
    if name == "loop-state":  # the structural rules every load of the ledger checks
        from ..loop.structure import violations

        found = [f"{where}: {why}" for where, why in violations(validated)]
        folder = path.absolute().parent
        loop_id = getattr(validated, "loop_id", None)
        in_place = path.name == "state.json" and folder.parent.name == "loops"
        if in_place and loop_id != folder.name:
            found.append(f"loop_id: {loop_id!r} is not its folder's {folder.name!r}")
        return found
    problems: list[str] = []
    if name == "lane-result":  # findings are checked one by one (as triage does)
        for index, finding in enumerate(document.get("findings", [])):
            try:
                Finding.model_validate(finding)
            except ValidationError as exc:
                problems += describe_all(exc, f"findings[{index}]")
    return problems


def cmd_validate(args: argparse.Namespace) -> int:
    failed = 0
    for path in args.files:
        problems = _validate_one(Path(path), args.schema)
        if problems:
            failed += 1
            print(f"{path}: invalid")
            for problem in problems:
                print(f"  {problem}")
        else:
            print(f"{path}: valid")
    return 1 if failed else 0


def last_report(given: str | None) -> Report:
    """The report at ``given``, else the last one in the state folder."""
    from pydantic import ValidationError

    from ..core.validation import describe_all
    from ..models.plain import validate
    from ..models.report import Report
    from .paths import default_state_folder

    path = Path(given) if given else default_state_folder() / "report.json"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise NoReportError(
            f"no report at {path} ({exc.strerror}): run pytest --bounded-review"
        ) from None
    try:
        return validate(Report, data)
    except ValidationError as exc:
        raise NoReportError(f"{path} is not a report: {'; '.join(describe_all(exc)[:3])}") from None


def cmd_report(args: argparse.Namespace) -> int:
    """Print the last report in a format; exit by its gate (0 yes, 1 no, 2 indeterminate)."""

    from ..render.formats import render
    from ..render.markdown import markdown_report

    report = last_report(args.report)
    if args.max_bytes is not None and args.format == "markdown":
        if args.max_bytes < 200:
            raise UsageError("--max-bytes: at least 200, to hold the verdict line")
        sys.stdout.write(markdown_report(report, cap=args.max_bytes))
    elif args.format == "text":  # the terminal's: the verdict last, with this exit status
        from .run import show

        return show(report, [], args)
    else:
        sys.stdout.write(render(report, args.format))
    return {"yes": 0, "no": 1}.get(report.gate.review_clean, 2)
