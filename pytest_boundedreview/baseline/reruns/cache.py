"""Base re-run results cached under the state folder.

The key is the base commit, the Python version, the installed distributions, the environment
the base run is given (the session's as it started), the replayed options, how the checkout was
made ready (``base_setup``, the compiled modules copied in) and
what the answers rest on: with all of those equal, a test's outcome at the base is
already known. A cache file that cannot be read or parsed, or whose digest does not match what
it holds, is ignored (and later replaced), never trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...core import strictjson
from ...core.statefile import write_atomic

FOLDER = "cache"
MAX_BYTES = 64 * 1024 * 1024

# Keys of answers about paths rather than tests: no node id starts with "//".
LISTING, WHOLE = "//listing ", "//whole "


def environment_digest() -> str:
    """A digest of the interpreter and every installed distribution with its version.

    The ``*.dist-info``/``*.egg-info`` folder names on ``sys.path`` carry name and version;
    listing them is much cheaper than parsing every distribution's metadata.
    """
    names: set[str] = set()
    for entry in sys.path:
        with contextlib.suppress(OSError), os.scandir(entry or ".") as listing:
            names.update(
                item.name
                for item in listing
                if item.name.endswith((".dist-info", ".egg-info", ".pth"))
            )
    text = "\n".join([sys.version, sys.executable, *sorted(names)])
    return hashlib.sha256(text.encode()).hexdigest()


# Answers of base runs that imported the base's code only (see basefirst.py), with the
# signatures of signature.py as it scrubs and folds messages and finds the failing frame now,
# and the ids of tests the base did not collect told apart (classify.py): answers cached before
# that are not read.
ANSWERS = "base-code-only; signatures 6; unlisted ids"


# Options that change what pytest prints or writes, never a test's outcome: a run that differs
# from the cached one only in these reads the same answers.
_REPORTING_FLAGS = {
    "--verbose",
    "--quiet",
    "--showlocals",
    "--no-showlocals",
    "--no-header",
    "--no-summary",
    "--full-trace",
    "--no-fold-skipped",
}
_REPORTING_VALUES = {
    "-r",
    "--tb",
    "--color",
    "--code-highlight",
    "--durations",
    "--durations-min",
    "--junitxml",
    "--junit-xml",
    "--junit-prefix",
    "--show-capture",
    "--verbosity",
}
_REPORTING_LETTERS = "vql"  # -v, -q, -l: they combine with others (-vs)
_VALUE_LETTERS = "kmpWocnr"  # short options whose value follows, attached or next


def outcome_args(args: Sequence[str]) -> list[str]:
    """``args`` without the options that only change what is reported (verbosity, ``-r``,
    ``--tb``, ``--color``, ``--durations``, ``--junitxml``...): what the cache is keyed by."""
    kept: list[str] = []
    tokens = list(args)
    i = 0
    while i < len(tokens):
        arg = tokens[i]
        i += 1
        name = arg.split("=", 1)[0]
        if name in _REPORTING_FLAGS:
            continue
        if name in _REPORTING_VALUES:
            i += 0 if "=" in arg or i >= len(tokens) else 1
            continue
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            short, skip_value = _short(arg)
            kept += [short] if short else []
            i += 1 if skip_value and i < len(tokens) else 0
            continue
        kept.append(arg)
    return kept


def _short(arg: str) -> tuple[str, bool]:
    """A cluster of short options (``-vsx``, ``-vrA``, ``-kfoo``) without the reporting ones,
    and whether the next token is a dropped ``-r``'s value."""
    flags = ""
    for pos, letter in enumerate(arg[1:], 1):
        if letter in _VALUE_LETTERS:  # the rest of the cluster is this option's value
            if letter == "r":
                return ("-" + flags if flags else ""), pos == len(arg) - 1
            return "-" + flags + arg[pos:], False
        if letter not in _REPORTING_LETTERS:
            flags += letter
    return ("-" + flags if flags else ""), False


# The shell's note of the last command run and of the folder before this one: they change
# between commands, and no test's outcome rests on them.
_SHELL_NOTES = frozenset({"_", "OLDPWD"})


def variables_digest(environ: Mapping[str, str]) -> str:
    """A digest of the environment variables a base run is given (``environ``, the session's
    as it started; git's own ``GIT_*`` are never passed on)."""
    kept = sorted(
        (k, v)
        for k, v in environ.items()
        if k not in _SHELL_NOTES and (not k.startswith("GIT_") or k.startswith("GIT_CONFIG"))
    )
    return hashlib.sha256(json.dumps(kept).encode()).hexdigest()


def cache_path(
    state: Path,
    base_commit: str,
    args: Sequence[str],
    prepared: str = "",
    environ: Mapping[str, str] | None = None,
) -> Path:
    """The cache file of base answers for ``base_commit`` run with ``args`` (but the options
    that only change what is reported) in a checkout made ready as ``prepared`` says (the
    set-up command and the compiled modules copied in, see artefacts.py), given the
    environment ``environ`` (else the process's)."""
    outcome = outcome_args(args)
    variables = variables_digest(os.environ if environ is None else environ)
    key = json.dumps([base_commit, environment_digest(), variables, outcome, ANSWERS, prepared])
    return state / FOLDER / f"base-{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def _digest(entries: Mapping[str, Mapping[str, str]]) -> str:
    return hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()


def load(path: Path) -> dict[str, dict[str, str]]:
    """The cached verdicts at ``path``; ``{}`` for a file that is missing, unreadable, not of
    this shape or whose digest does not match its entries (a torn or edited file)."""
    try:
        data = strictjson.loads(path.read_bytes(), max_bytes=MAX_BYTES)
    except (OSError, strictjson.StrictJSONError):
        return {}
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, dict) or data.get("digest") != _digest(entries):
        return {}
    if not all(
        isinstance(v, dict) and all(isinstance(x, str) for x in v.values())
        for v in entries.values()
    ):
        return {}
    return entries


def store(path: Path, known: Mapping[str, Mapping[str, str]]) -> None:
    entries = dict(sorted(known.items()))
    document = {"digest": _digest(entries), "entries": entries}
    write_atomic(path, json.dumps(document, indent=1).encode())
