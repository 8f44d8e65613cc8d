"""Where a finished report goes: its JSON file, the Markdown and SARIF files asked for, and,
inside GitHub Actions, the step summary and the annotations."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from ..core.errors import FatalError
from ..core.statefile import write_atomic
from ..models.report import Report


def progress(message: str) -> None:
    """Progress of a command that is not a pytest session, on stderr (escaped: a runner reads
    workflow commands there too)."""
    from ..render.escape import terminal

    print(f"bounded-review: {terminal(message)}", file=sys.stderr, flush=True)


def publish(
    report: Report,
    path: Path,
    markdown: str | None,
    sarif: str | None,
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """Write ``report`` to ``path`` and the extra outputs, each atomically; return the lines
    the caller prints on stdout (workflow commands, inside GitHub Actions only)."""
    from ..render.formats import render

    env = os.environ if env is None else env
    outputs = [
        (path, "json"),
        *((Path(p), f) for p, f in ((markdown, "markdown"), (sarif, "sarif")) if p),
    ]
    for target, fmt in outputs:
        try:
            # a name git holds as bytes that are not UTF-8 is written as its escape
            write_atomic(target, render(report, fmt).encode("utf-8", "backslashreplace"))
        except OSError as exc:
            raise FatalError(f"cannot write the {fmt} report {target}: {exc}") from exc
    if env.get("GITHUB_ACTIONS") != "true" or report.shard is not None:
        return []
    lines = render(report, "github").splitlines()
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(render(report, "markdown"))
        except OSError as exc:  # the report stands; the summary is a copy of it
            from ..render.escape import workflow_data

            why = workflow_data(f"cannot append the summary to {summary}: {exc.strerror}")
            lines.append(f"::warning title=bounded review::{why}")
    return lines
