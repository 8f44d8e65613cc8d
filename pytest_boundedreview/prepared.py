"""What a review session reads before its tests run: the repository, the settings, the change
frozen, the base's rules and the waivers."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .core.config import Settings, load_settings, option_overrides
from .core.errors import FatalError
from .core.pytestini import Collection, from_session
from .models.record import record
from .target import baseconfig, git, kept, worktree
from .target.freeze import Target, freeze
from .target.statedir import approver
from .triage.waivers import blob_names as waiver_blobs
from .triage.waivers import load as load_waivers

if TYPE_CHECKING:
    from .models.waiver import Waiver


@record(frozen=True)
class Prepared:
    """What :func:`prepare` read: a session's state before its tests run."""

    settings: Settings
    repo: git.Repo
    target: Target
    waivers: Sequence[Waiver]
    rules: baseconfig.Ruled


def collection(config: pytest.Config) -> Collection:
    """Where this session's pytest recurses: its own ``testpaths`` and ``norecursedirs``."""
    source = str(config.inipath) if config.inipath else "pytest's defaults"
    ini = config.getini
    return from_session(config.rootpath, ini("testpaths"), ini("norecursedirs"), source)


def prepare(
    config: pytest.Config, option_keys: list[str], environ: Mapping[str, str] | None = None
) -> Prepared:
    """The session's repository, settings and frozen change (its base named by the CI
    variables of ``environ``, the environment the session started with); a
    ``pytest.UsageError`` naming what is wrong when they cannot be read."""
    rootdir = Path(config.rootpath)
    try:
        repo, at_head = git.open_at_head(rootdir)
        worktree.sweep(repo)  # what a killed run left, whether or not this run needs a base
        overrides = option_overrides(
            {key: config.getoption(f"bounded_review_{key}") for key in option_keys},
            config.invocation_params.dir,
        )
        settings, path = load_settings(
            rootdir, repo.root, overrides, approver(repo, collection(config))
        )
        kept.sweep(repo, keep=settings.reuse_base_checkout)

        def blobs(base_commit: str, tree: str) -> list[str]:
            """The base's configuration and both waivers files, read at once."""
            names = baseconfig.blob_names(repo, base_commit, rootdir)
            return [*names, *waiver_blobs(tree, settings, base_commit)]

        def frozen(use: baseconfig.Chosen) -> tuple[Target, baseconfig.Ruled]:
            # read beside the diff, remembered for the reads of the rules and the waivers
            target = freeze(repo, use.target, use.base, environ, at_head=at_head, blobs=blobs)
            return target, baseconfig.rule(
                repo, target.base_commit, settings, path, rootdir, overrides
            )

        def governed(rules: baseconfig.Ruled) -> baseconfig.Chosen:
            return baseconfig.Chosen(rules.settings.base, rules.settings.target)

        head = at_head[0] if at_head else None
        ahead = baseconfig.chosen(
            repo, settings, overrides, rootdir, head, os.environ if environ is None else environ
        )
        use = ahead or baseconfig.Chosen(settings.base, settings.target)
        target, rules = frozen(use)
        if ahead is None and governed(rules) != use:  # the base names another base or target
            use = governed(rules)
            target, rules = frozen(use)
        if governed(rules) != use:  # the base and target the freeze used hold
            held = dataclasses.replace(rules.settings, base=use.base, target=use.target)
            rules = dataclasses.replace(rules, settings=held)
        if rules.settings.state_dir != settings.state_dir:  # the base's, checked as the change's
            approver(repo, collection(config))(rules.settings)
        waivers = load_waivers(repo, target.tree, rules.settings, target.base_commit)
    except FatalError as exc:
        raise pytest.UsageError(f"bounded-review: {exc}") from None
    return Prepared(rules.settings, repo, target, waivers, rules)
