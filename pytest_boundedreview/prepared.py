"""What a review session reads before its tests run: the repository, the settings, the change
frozen, the base's rules and the waivers."""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .change import baseconfig, git
from .change.checkouts import kept, tested, worktree
from .change.freeze import Target, freeze
from .change.statedir import approver
from .core.errors import FatalError
from .core.pytestconfig.pytestini import Collection, from_session
from .core.settings.config import Settings, load_settings, option_overrides
from .models.record import record
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
    # The user's repository, when the session runs in a checkout of the snapshot made for it
    # (``bounded-review run``, see tested.py): the state folder and the outputs are there.
    checkout: tested.Checkout | None = None

    @property
    def home(self) -> Path:
        """The working tree whose state folder the session keeps and writes its outputs in."""
        return self.repo.root if self.checkout is None else self.checkout.live


def collection(config: pytest.Config) -> Collection:
    """Where this session's pytest recurses: its own ``testpaths`` and ``norecursedirs``."""
    source = str(config.inipath) if config.inipath else "pytest's defaults"
    ini = config.getini
    return from_session(config.rootpath, ini("testpaths"), ini("norecursedirs"), source)


def _flag(key: str) -> str:
    return "--bounded-review-" + key.replace("_", "-")


def _from_ini(config: pytest.Config, keys: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """The options among ``keys`` that were not given at invocation (the command line,
    ``PYTEST_ADDOPTS``): set by the pytest configuration's ``addopts``."""
    try:
        given = [
            *map(str, config.invocation_params.args),
            *shlex.split(env.get("PYTEST_ADDOPTS", "")),
        ]
    except ValueError:  # pytest read the variable itself: an unclosed quote failed there
        given = list(map(str, config.invocation_params.args))
    flags = {key: _flag(key) for key in keys}
    return [
        key
        for key, flag in flags.items()
        if not any(word == flag or word.startswith(flag + "=") for word in given)
    ]


def _own_options(
    config: pytest.Config,
    repo: git.Repo,
    overrides: dict[str, object],
    env: Mapping[str, str],
    head: str | None,
) -> dict[str, object]:
    """The options (taken out of ``overrides``) that the pytest configuration's ``addopts``
    gives otherwise than at a commit the change cannot move: the change's own configuration,
    held to the base's rules like its table. An option its ``addopts`` gives alike is the
    base's."""
    in_ini = _from_ini(config, list(overrides), env)
    inipath = Path(config.inipath) if config.inipath else None
    if not in_ini or inipath is None:
        return {}
    at = baseconfig.addopts_at(repo, baseconfig.reference(repo, env, head), inipath)
    now = tuple(map(str, config.getini("addopts")))
    if at == now:
        return {}
    from .core.pytestconfig.argv import read, table_of

    flags = {key: _flag(key) for key in in_ini}
    table = table_of(config)

    def values(tokens: Sequence[str]) -> dict[str, str]:
        return dict(read(tokens, list(flags.values()), table))  # the last one given holds

    before, after = values(at or ()), values(now)
    return {
        key: overrides.pop(key)
        for key, flag in flags.items()
        if before.get(flag) != after.get(flag)
    }


def prepare(
    config: pytest.Config,
    option_keys: list[str],
    environ: Mapping[str, str] | None = None,
    given: Mapping[str, object] | None = None,
) -> Prepared:
    """The session's repository, settings and frozen change (its base named by the CI
    variables of ``environ``, the environment the session started with; the options as
    ``given`` before the session's code ran); a ``pytest.UsageError`` naming what is wrong
    when they cannot be read."""
    rootdir = Path(config.rootpath)
    try:
        repo, at_head = git.open_at_head(rootdir)
        worktree.sweep(repo)  # what a killed run left, whether or not this run needs a base
        overrides = option_overrides(
            {
                key: (given or vars(config.option)).get(f"bounded_review_{key}")
                for key in option_keys
            },
            config.invocation_params.dir,
        )
        env = os.environ if environ is None else environ
        head = at_head[0] if at_head else None
        own = _own_options(config, repo, overrides, env, head)
        checkout = tested.checkout_of(repo, env)
        # the state folder and the outputs are checked where they are: in the user's tree
        home = repo if checkout is None else git.open_repo(checkout.live)

        def approve(settings: Settings) -> Path:
            moved = tested.outputs_home(settings, checkout)
            return approver(home, collection(config))(moved)

        settings, path = load_settings(rootdir, repo.root, {**overrides, **own}, approve)
        kept.sweep(repo, keep=settings.reuse_base_checkout)

        def blobs(base_commit: str, tree: str) -> list[str]:
            """The base's configuration and both waivers files, read at once."""
            names = baseconfig.blob_names(repo, base_commit, rootdir)
            return [*names, *waiver_blobs(tree, settings, base_commit)]

        def frozen(use: baseconfig.Chosen) -> tuple[Target, baseconfig.Ruled]:
            # read beside the diff, remembered for the reads of the rules and the waivers
            target = freeze(repo, use.target, use.base, environ, at_head=at_head, blobs=blobs)
            return target, baseconfig.rule(
                repo, target.base_commit, settings, path, rootdir, overrides, own
            )

        def governed(rules: baseconfig.Ruled) -> baseconfig.Chosen:
            return baseconfig.Chosen(rules.settings.base, rules.settings.target)

        ahead = baseconfig.chosen(repo, settings, overrides, rootdir, head, env)
        use = ahead or baseconfig.Chosen(settings.base, settings.target)
        target, rules = frozen(use)
        if ahead is None and governed(rules) != use:  # the base names another base or target
            use = governed(rules)
            target, rules = frozen(use)
        if governed(rules) != use:  # the base and target the freeze used hold
            held = dataclasses.replace(rules.settings, base=use.base, target=use.target)
            rules = dataclasses.replace(rules, settings=held)
        if rules.settings.state_dir != settings.state_dir:  # the base's, checked as the change's
            approve(rules.settings)
        waivers = load_waivers(repo, target.tree, rules.settings, target.base_commit)
    except FatalError as exc:
        raise pytest.UsageError(f"bounded-review: {exc}") from None
    return Prepared(
        tested.outputs_home(rules.settings, checkout), repo, target, waivers, rules, checkout
    )
