"""A report as the commit and push gate, the agent's stop hook and the MCP tools accept it: read
strictly (the report model), and a clean one only when it is the whole review its rules ask."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import EXIT_INDETERMINATE
from ..core.readfile import read_bounded

if TYPE_CHECKING:
    from ..models.report import Report

MAX_REPORT_BYTES = 64 * 1024 * 1024
AGAIN = "run pytest --bounded-review again"
Verdict = tuple[int, str]


def read(path: Path) -> Report | Verdict:
    """The report at ``path`` read strictly (the report model), or why there is none to use."""
    from pydantic import ValidationError

    from ..core.errors import UsageError
    from ..core.validation import describe_all
    from ..models.plain import validate
    from ..models.report import Report

    if not path.exists():
        return EXIT_INDETERMINATE, f"no report at {path}: run pytest --bounded-review first"
    try:
        return validate(Report, read_bounded(path, MAX_REPORT_BYTES, "report"))
    except UsageError as exc:
        return EXIT_INDETERMINATE, f"{exc}: {AGAIN}"
    except ValidationError as exc:  # not JSON, or not a report of this schema
        problems = "; ".join(describe_all(exc)[:3])
        why = f"{path} is not a valid bounded-review report ({problems}): {AGAIN}"
        return EXIT_INDETERMINATE, why


def claimed_less(path: Path, report: Report, what: str, state_dir: str | None) -> str | None:
    """Why a clean report of ``what`` is less than the review its rules ask, or ``None``: it
    does not say what it ran under (an earlier version), an option of its invocation reduced
    it where lanes are configured, or its loop was kept in another state folder than
    ``state_dir`` (the one this repository's configuration names)."""
    ran = report.invocation
    if ran is None:
        return (
            f"the report {path} does not record what its review ran under (written by an "
            f"earlier version), so it cannot be shown to be the whole review of {what}"
        )
    if ran.reduced:
        options = "; ".join(reduction.described() for reduction in ran.reduced)
        return (
            f"the review {path} of {what} ran with {options}: less than the rules of this "
            "repository ask, so it does not count (leave out "
            f"{', '.join(reduction.option for reduction in ran.reduced)})"
        )
    if state_dir is not None and Path(ran.state_dir) != Path(state_dir):
        return (
            f"the review {path} of {what} kept its loop in the state folder {ran.state_dir!r}, "
            f"not {state_dir!r} (this repository's `state_dir`): its rounds and repair loops "
            "are not this repository's"
        )
    return None
