"""The console face: the ``bounded-review`` command and its subcommands."""

from .commands import main

__all__ = ["main"]
