"""Run what findings offer as proof: a pytest node id, or a command, at the snapshot first and,
when it fails there, at the base.

A test runs in a checkout of the snapshot with the Baseline machinery (the checkout's sources
first on ``sys.path``); a command runs in a throwaway copy with a reviewer lane's environment
and limits. Each distinct reproduction runs once however many findings offer it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Literal

from ..baseline.atbase.baserun import BaseUnavailable, base_verdicts, rerun_in
from ..baseline.reruns.runspec import BaselineRun
from ..baseline.reruns.waits import told
from ..core import subproc
from ..lanes.environment import lane_env
from ..lanes.snapshot import snapshot_copy
from ..models.finding import Reproduce
from ..models.record import record

MAX_COMMANDS = 20
Status = Literal["reproduced", "pre-existing", "did-not-reproduce", "not-run"]


@record(frozen=True)
class Reproduced:
    status: Status
    detail: str


def key(spec: Reproduce) -> str:
    return json.dumps(spec.model_dump(exclude_none=True), sort_keys=True)


@record(frozen=True)
class Reproducer:
    """Runs reproductions against ``tree`` (the snapshot) and the base of ``run``."""

    run: BaselineRun
    tree: str
    progress: Callable[[str], None] = lambda message: None

    def __call__(self, specs: Sequence[Reproduce]) -> dict[str, Reproduced]:
        unique = {key(spec): spec for spec in specs}
        nodeids = sorted({s.pytest for s in unique.values() if s.pytest is not None})
        commands = [(k, s.command) for k, s in unique.items() if s.command is not None]
        results: dict[str, Reproduced] = {}
        if nodeids:
            with told(self.progress):  # a wait on a re-run child says what it waits for
                results.update(self._tests(nodeids))
        for index, (name, argv) in enumerate(commands):
            if index >= MAX_COMMANDS:
                why = f"not run: more than {MAX_COMMANDS} distinct reproduction commands"
                results[name] = Reproduced("not-run", why)
            else:
                results[name] = self._command(argv)
        return results

    def _tests(self, nodeids: list[str]) -> dict[str, Reproduced]:
        def named(nodeid: str) -> str:
            return key(Reproduce(pytest=nodeid))

        cap = self.run.max_base_reruns
        if len(nodeids) > cap:
            why = f"not run: more than {cap} reproduction tests (max_base_reruns)"
            return {named(n): Reproduced("not-run", why) for n in nodeids}
        self.progress(f"reproducing {len(nodeids)} finding test(s) at the snapshot")
        out: dict[str, Reproduced] = {}
        try:
            with snapshot_copy(self.run.repo, self.tree) as copy:
                ran, _ = rerun_in(copy, nodeids, self.run, at_base=False)
        except BaseUnavailable as exc:
            return {named(n): Reproduced("not-run", str(exc)) for n in nodeids}
        if ran.status != "ok" or ran.live:
            why = ran.detail or f"it loaded {', '.join(ran.live[:3])} from the working tree"
            return {named(n): Reproduced("not-run", f"at the snapshot: {why}") for n in nodeids}
        failing = []
        for nodeid in nodeids:
            if nodeid in ran.failed:
                failing.append(nodeid)
            elif nodeid in ran.passed:
                out[named(nodeid)] = Reproduced("did-not-reproduce", "the test passes at head")
            else:
                why = "the test was not found (or was skipped) at head"
                out[named(nodeid)] = Reproduced("did-not-reproduce", why)
        if failing:
            self.progress(f"running {len(failing)} reproducing test(s) at the base")
            try:
                verdicts = base_verdicts(self.run, failing)
            except BaseUnavailable as exc:
                verdicts = {n: {"kind": "unknown", "detail": str(exc)} for n in failing}
            for nodeid in failing:
                out[named(nodeid)] = _judged(verdicts[nodeid])
        return out

    def _command(self, argv: Sequence[str]) -> Reproduced:
        def fails(tree: str) -> tuple[bool | None, str]:
            with snapshot_copy(self.run.repo, tree) as copy:
                ran = subproc.run(argv, cwd=copy, env=lane_env(()), timeout=self.run.timeout)
            if ran.start_error:
                return None, f"could not start: {ran.start_error}"
            if ran.timed_out:
                return None, f"timed out after {self.run.timeout:g}s"
            return ran.returncode != 0, f"exit {ran.returncode}"

        self.progress(f"reproducing with {' '.join(argv)[:80]}")
        at_head, detail = fails(self.tree)
        if at_head is None:
            return Reproduced("not-run", f"at head: {detail}")
        if not at_head:
            return Reproduced("did-not-reproduce", "the command succeeds at head")
        if self.run.base_commit is None:
            return Reproduced("reproduced", f"fails at head ({detail}); no base existed")
        at_base, base_detail = fails(self.run.repo.tree_of(self.run.base_commit))
        if at_base is None:
            return Reproduced("reproduced", f"fails at head ({detail}); base: {base_detail}")
        if at_base:
            return Reproduced("pre-existing", f"fails at head and at base ({base_detail})")
        return Reproduced("reproduced", f"fails at head ({detail}), succeeds at base")


def _judged(verdict: dict[str, str]) -> Reproduced:
    kind = verdict["kind"]
    if kind in ("failed", "collect-error"):
        return Reproduced("pre-existing", "the test fails at base too")
    if kind == "passed":
        return Reproduced("reproduced", "fails at head, passes at base")
    if kind == "missing":
        return Reproduced("reproduced", "fails at head; the test is new (not at base)")
    if kind == "unlisted":
        return Reproduced("reproduced", "fails at head; its id is not at base, its function is")
    why = verdict.get("detail") or "the base could not tell (skipped there)"
    return Reproduced("reproduced", f"fails at head; {why}")
