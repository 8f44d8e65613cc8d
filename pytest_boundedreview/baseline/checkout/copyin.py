"""Copy files of the working tree into a checkout of the repository, each to the same place,
only where the checkout has the folder and not the file, and never through a link out of it.

Run as ``python -I -S copyin.py LIVE CHECKOUT NAME...`` by the base re-run's child once the
checkout is made (see ``artefacts.py``), it imports the standard library only: nothing of the
repository, whichever copy of it the environment points to. Copies, never links: a build or a
test that rewrites the file in the checkout must not rewrite the working tree's.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence


def copy_in(live: str, checkout: str, names: Sequence[str]) -> list[str]:
    """Copy each of ``names`` (relative paths) from ``live`` into ``checkout``; return those
    copied. A name whose folder the checkout lacks, whose place it already fills, or whose
    folder leads out of it (a link) is left out."""
    top = os.path.realpath(checkout)
    copied = []
    for name in names:
        if os.path.isabs(name) or ".." in name.split("/"):
            continue
        there = os.path.join(checkout, name)
        folder = os.path.dirname(there)
        if not os.path.isdir(folder) or os.path.lexists(there):
            continue
        if os.path.commonpath([os.path.realpath(folder), top]) != top:
            continue
        shutil.copyfile(os.path.join(live, name), there, follow_symlinks=True)
        shutil.copymode(os.path.join(live, name), there)
        copied.append(name)
    return copied


if __name__ == "__main__":
    copy_in(sys.argv[1], sys.argv[2], sys.argv[3:])
