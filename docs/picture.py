#!/usr/bin/env python3
"""Draw what a run looks like: ``bounded-review demo`` run for real, in colour, as an image.

Writes ``docs/images/demo.ansi`` (the run's output as the terminal received it) and
``docs/images/demo.svg`` (that output drawn), which the README shows:

    .venv/bin/python docs/picture.py          # run the demo, rewrite both files
    .venv/bin/python docs/picture.py --check  # exit 1 when the picture is not the demo's output

The only edit to the output is the demo's temporary folder, written as a fixed path, so that
the transcript is comparable. ``--check`` also ignores durations, versions and commit ids,
which differ from run to run.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

IMAGES = Path(__file__).resolve().parent / "images"
TRANSCRIPT = IMAGES / "demo.ansi"
PICTURE = IMAGES / "demo.svg"
WIDTH = 100
TEMP_FOLDER = re.compile(r"/[^\s]*?/bounded-review-demo-[^/\s]+")
# What differs between two runs of the same demo: times, installed versions, commit ids.
VOLATILE = re.compile(r"\d+(\.\d+)+|\b[0-9a-f]{7,40}\b")


def run_demo() -> str:
    """The demo's output, coloured as on a terminal, with its temporary folder made fixed."""
    env = dict(os.environ, FORCE_COLOR="1", COLUMNS=str(WIDTH))
    env.pop("NO_COLOR", None)
    # Test order stays the file's order, as a user without pytest-randomly sees it.
    env["PYTEST_ADDOPTS"] = "-p no:randomly"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_boundedreview", "demo"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"docs/picture.py: the demo exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return TEMP_FOLDER.sub("/tmp/bounded-review-demo", proc.stdout)


def draw(transcript: str) -> str:
    """The transcript drawn as an SVG terminal window."""
    console = Console(record=True, width=WIDTH, file=io.StringIO(), force_terminal=True)
    console.print(Text.from_ansi(transcript.rstrip("\n")), soft_wrap=False, crop=False)
    return console.export_svg(title="bounded-review demo")


def plain(transcript: str) -> str:
    """The transcript without colour or what differs from run to run."""
    lines = Text.from_ansi(transcript).plain.splitlines(keepends=True)
    # The installed plugins are listed in the order the environment's metadata gives them.
    kept = "".join(line for line in lines if not line.startswith("plugins: "))
    return VOLATILE.sub("N", kept)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    transcript = run_demo()
    if args.check:
        stale = [
            name
            for name, ok in (
                (
                    TRANSCRIPT,
                    TRANSCRIPT.exists() and plain(TRANSCRIPT.read_text()) == plain(transcript),
                ),
                (
                    PICTURE,
                    PICTURE.exists()
                    and TRANSCRIPT.exists()
                    and PICTURE.read_text() == draw(TRANSCRIPT.read_text()),
                ),
            )
            if not ok
        ]
        for name in stale:
            print(f"{name} is not the demo's output: run python docs/picture.py", file=sys.stderr)
        return 1 if stale else 0
    IMAGES.mkdir(exist_ok=True)
    TRANSCRIPT.write_text(transcript)
    PICTURE.write_text(draw(transcript))
    return 0


if __name__ == "__main__":
    sys.exit(main())
