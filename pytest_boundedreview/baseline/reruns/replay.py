"""Which of the session's options a re-run of some of its tests repeats (:func:`replayable`).

A plain walk over the arguments, apart from the re-run machinery (rerun.py): every session
works out its re-runs' options when it looks up the base cache, most never re-run anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

# Options of the original session a re-run must not repeat: they select, stop or repeat tests,
# write the user's outputs, or drive the session. Everything else (conftest options such as
# --runslow, -p, -o, --doctest-modules, --import-mode...) is repeated as given.
_DROP_WITH_VALUE = {
    "-k",
    "-m",
    "-n",
    "--numprocesses",
    "--maxprocesses",
    "--dist",
    "--tx",
    "--maxfail",
    "--basetemp",
    "--rootdir",
    "--config-file",
    "--deselect",
    "--junitxml",
    "--junit-xml",
    "--junit-prefix",
    "--html",
    "--json-report-file",
    "--report-log",
    "--result-log",
    "--durations",
    "--durations-min",
    "--last-failed-no-failures",
    "--lfnf",
    "--cov-report",
    "--cov-config",
    "--cov-fail-under",
    "--pdbcls",
    "--log-file",
    "--max-worker-restart",
}
_DROP_FLAGS = {
    "-x",
    "--exitfirst",
    "--lf",
    "--last-failed",
    "--ff",
    "--failed-first",
    "--nf",
    "--new-first",
    "--sw",
    "--stepwise",
    "--sw-skip",
    "--stepwise-skip",
    "--pdb",
    "--trace",
    "--cache-clear",
    "--co",
    "--collect-only",
    "--collectonly",
    "--looponfail",
    "-f",
    "--cov-append",
    "--no-cov",
    "--cov-branch",
    "--json-report",
}
_OPTIONAL_VALUE = {"--cov"}
_OWN_VALUES = {f"--bounded-review-{k}" for k in ("base", "target", "mode", "risk", "report")}
_OWN_VALUES |= {"--bounded-review-markdown", "--bounded-review-sarif"}


def replayable(
    args: Sequence[str], positional: Sequence[str], invocation_dir: Path | None = None
) -> list[str]:
    """The options of ``args`` a re-run repeats: all but the paths given (``positional``),
    the bounded review's own options and those in the drop lists above. A configuration file
    (``-c``) is made absolute against ``invocation_dir``, as re-runs start elsewhere."""
    kept: list[str] = []
    paths = set(positional)
    tokens = list(args)
    i = 0
    while i < len(tokens):
        arg = tokens[i]
        i += 1
        name = arg.split("=", 1)[0]
        following = tokens[i] if "=" not in arg and i < len(tokens) else None
        if arg in paths:
            continue
        if name in ("-c", "--config-file") and (following is not None or "=" in arg):
            value = arg.split("=", 1)[1] if "=" in arg else tokens[i]
            i += 0 if "=" in arg else 1
            kept.append(f"--config-file={Path(invocation_dir or Path.cwd(), value)}")
            continue
        if not arg.startswith("-"):
            kept.append(arg)  # the value of an option that is kept
        elif name in _DROP_WITH_VALUE or name in _OWN_VALUES:
            i += 1 if following is not None else 0
        elif name in _OPTIONAL_VALUE:
            if following is not None and not following.startswith("-") and following not in paths:
                i += 1
        elif name in _DROP_FLAGS or name.startswith("--bounded-review"):
            continue
        elif arg[1] != "-" and len(arg) > 2 and arg[1] in "kmn":
            continue  # -kEXPR, -mMARK, -n4: a dropped option with its value attached
        elif arg[1] != "-" and arg[1:].isalpha() and arg[1] not in "poW" and len(arg) > 2:
            if flags := arg[1:].replace("x", ""):  # -xvs: keep -vs
                kept.append("-" + flags)
        elif name in ("-p", "-o", "-W") and following is not None:
            if "boundedreview" not in following:
                kept += [arg, following]
            i += 1
        elif "boundedreview" not in arg:
            kept.append(arg)
    return kept
