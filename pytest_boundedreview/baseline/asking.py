"""What a session asks the base besides its failures, and what it makes of the answers: the
tests it skipped (newly skipped, see checks/skipped.py) and, when the change touches test
files, conftest files or the pytest configuration, the base's collection there (see
narrowing.py)."""

from __future__ import annotations

import functools
import glob
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..core.pytestconfig.pytestini import words
from ..models.record import record
from .classification import Classification, Questions
from .reruns.cache import LISTING, WHOLE
from .suite import narrowing

if TYPE_CHECKING:
    from ..change import git
    from ..change.freeze import Target
    from ..core.settings.config import Settings
    from .failures.outcomes import OutcomeCollector
    from .suite.deselection import Deselections
    from .suite.wholeness import Project


@record
class Asking:
    """The base questions of one session (the controller's)."""

    config: pytest.Config
    settings: Settings
    repo: git.Repo
    target: Target
    project: Project  # the project's own pytest configuration (see projectconfig.py)

    @functools.cached_property
    def change(self) -> narrowing.Change | None:
        """The change as the collection comparison reads it; ``None`` without a base, for an
        empty target or a shard."""
        base, target = self.target.base_commit, self.target
        if base is None or target.empty or self.settings.shard:
            return None
        return narrowing.Change(self.repo, base, Path(self.config.rootpath), tuple(target.scope))

    @functools.cached_property
    def skips(self) -> bool:
        """Whether the tests the session skips are asked about at the base."""
        return self.change is not None and self.settings.scans.skip_added != "off"

    @functools.cached_property
    def listing(self) -> tuple[str, ...]:
        """The paths whose base collection is compared with this session's: none unless the
        change touches test files, conftest files or the pytest configuration."""
        change, config = self.change, self.config
        if change is None or config.option.collectonly:
            return ()
        options = self.project.options
        rootdir = Path(config.rootpath).resolve()
        testpaths = False
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            given = [Path(config.invocation_params.dir, a.split("::", 1)[0]) for a in config.args]
            inside = [p.resolve() for p in given if p.resolve().is_relative_to(rootdir)]
            scope = [p.relative_to(rootdir).as_posix() for p in inside]
        else:
            entries = words(options.get("testpaths", ()))
            scope = sorted({hit for e in entries for hit in glob.glob(e, root_dir=rootdir)})
            testpaths = bool(scope)
        own = {"python_files": config.getini("python_files")}
        patterns = narrowing.test_patterns(options, own)
        changed, config_changed = change.paths(), change.config_changed()
        return narrowing.listing(changed, scope, patterns, config_changed, testpaths)

    def listing_keys(self) -> list[str]:
        """The cache keys of what the session asks from its start (see classify.LISTING)."""
        return [LISTING + path for path in self.listing]

    def key_of_skipped(self, report: pytest.TestReport | pytest.CollectReport) -> str | None:
        """The cache key of a skipped test or a file skipped whole, when skips are asked."""
        if not (report.skipped and report.nodeid and self.skips):
            return None
        if isinstance(report, pytest.CollectReport):
            return WHOLE + report.nodeid if "::" not in report.nodeid else None
        return report.nodeid

    def questions(self, collector: OutcomeCollector) -> Questions:
        """What the session asks the base besides its failures."""
        skips, change = self.skips, self.change
        if not skips or change is None:
            return Questions(listing=self.listing)
        skipped = sorted(collector.skipped.difference(collector.failing))
        if len(skipped) > self.settings.max_base_reruns:  # new tests are no question
            skipped = change.at_base(skipped)
        was = {new: old for old, new in change.renamed().items()}  # asked where the base has it
        files = sorted(was.get(path, path) for path in collector.skipped_modules)
        return Questions(skipped=skipped, skipped_files=files, listing=self.listing)

    def narrowed(
        self, tests: Classification, collector: OutcomeCollector, deselections: Deselections
    ) -> tuple[str | None, list[str]]:
        """Why the run is partial because the change narrowed its collection, and what to
        note about the base's tests the change removed."""
        change = self.change
        if not self.listing or change is None:
            return None, []
        if tests.listed is None:
            why = "whether the change narrowed its collection could not be established"
            return f"{why} (the base's collection of {', '.join(self.listing)} is unknown)", []
        present = {*collector.collected, *collector.seen, *deselections.ids}
        broken = {n for n in collector.failing if "::" not in n} | collector.skipped_modules
        return narrowing.verdict(change.compare(tests.listed, present, broken))
