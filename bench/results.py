"""Each benchmark owns one section of ``docs/performance.md`` and rewrites only that section."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path


def update_section(path: Path, name: str, title: str, body: str, level: int = 2) -> None:
    """Replace (or append) the section ``name`` of the Markdown file at ``path``."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    section = f"{start}\n{'#' * level} {title}\n\n{body.strip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def record(
    out: Path | None,
    name: str,
    title: str,
    intro: str,
    header: tuple[str, str, str],
    rows: Sequence[tuple[str, str, str]],
) -> None:
    """Print a benchmark's table (what | median | ratio, as ``bench/run_all`` reads it) under
    ``intro``, and write it as section ``name`` of ``out`` when given."""
    table = [f"| {' | '.join(header)} |", "| --- | ---: | ---: |"]
    table += [f"| {what} | {value} | {ratio} |" for what, value, ratio in rows]
    text = f"{intro}\n\n" + "\n".join(table) + "\n"
    print(text)
    if out:
        update_section(out, name, title, text)
