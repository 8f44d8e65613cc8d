"""Writes, once, the bytecode the suite's Python processes read instead of compiling again.

The tests start Python processes thousands of times. Where ``PYTHONDONTWRITEBYTECODE`` is set
(CI images often set it) no process writes bytecode, so each one compiles from source what it
imports and nothing compiled it before. Two kinds of module are compiled by no installer:

- this package's modules, installed from this folder (``compileall``);
- the modules pytest rewrites for its assertions in every session: those of each installed
  pytest plugin (hypothesis, anyio, xdist, ...) and the suite's test modules. pytest keeps them
  as ``__pycache__/<module>.<tag>-pytest-<version>.pyc`` next to the source, and reads them even
  where it may not write them. Without them every pytest process rewrites hypothesis alone from
  source, some 0.7 CPU-seconds. A collection of the suite with bytecode writing on writes them.

Run from the project's root with the project's interpreter: ``.venv/bin/python
tests/precompile.py``. Prints nothing unless something fails, then exits non-zero."""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    if not compileall.compile_dir(ROOT / "pytest_boundedreview", quiet=1):
        return 1
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stdout.write(done.stdout + done.stderr)
        print(f"tests/precompile.py: {' '.join(argv[1:])} exited {done.returncode}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
