"""The session's random seed, given to its re-runs so they draw what the session drew.

pytest-randomly seeds ``random`` (and numpy, Faker, factory_boy, model_bakery) before each
test's setup, call and teardown from its session seed plus the test's node id, and orders the
tests by that seed. Unless ``--randomly-seed=N`` is given, the seed is new in every process, so
a re-run would draw other numbers than the failing session did, and a failure that depends on
them would look changed. The plugin leaves ``PYTHONHASHSEED`` alone: the re-runs inherit the
session's environment, and with it the hash seed when one is set.
"""

from __future__ import annotations

from collections.abc import Sequence

OPTION = "--randomly-seed"


def with_seed(args: Sequence[str], seed: object) -> list[str]:
    """``args`` of a re-run with ``OPTION`` set to ``seed``, the session's
    ``randomly_seed`` option (an integer once pytest-randomly configured the session; ``None``
    or a word when the plugin is absent or off, and then ``args`` stay as they are)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        return list(args)
    kept: list[str] = []
    tokens = iter(args)
    for arg in tokens:
        if arg == OPTION:
            next(tokens, None)  # its value: the session's own, or "last"
        elif not arg.startswith(OPTION + "="):
            kept.append(arg)
    return [*kept, f"{OPTION}={seed}"]
