"""``python -m pytest_boundedreview`` is the ``bounded-review`` command."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
