"""Plugin lanes: from entry points and conftest-like objects, blockable, driven by the core."""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_boundedreview import hookimpl
from pytest_boundedreview.core.settings.config import Settings
from pytest_boundedreview.lanes.plugin import manager, plugin_lanes, run_once
from pytest_boundedreview.review.possible import OFFERED, phase_needed

RESULT = {"schema": "bounded-review/lane-result/v1", "verdict": "pass", "rationale": "fine"}


class Lane:
    def __init__(self, name: str, answer: Any = None, delay: float = 0.0, role: str = "verdict"):
        self.name, self.lens, self.role, self.model = name, "correctness", role, "local-rules"
        self.timeout = 1
        self.answer, self.delay = answer if answer is not None else RESULT, delay

    def review(self, packet: dict[str, Any], workdir: Path) -> dict[str, Any]:
        time.sleep(self.delay)
        if isinstance(self.answer, Exception):
            raise self.answer
        return (
            {**self.answer, "rationale": f"saw {packet['diff']}"}
            if "rationale" in self.answer
            else self.answer
        )


class ConftestLike:
    __name__ = "conftest_lanes"

    @hookimpl
    def boundedreview_lanes(self, settings: Settings) -> list[Lane]:
        return [Lane("from-conftest")]


ENTRY_POINT_PLUGIN = """
from pytest_boundedreview import hookimpl


class _Lane:
    name, lens, role = "from-entry-point", "security", "scout"

    def review(self, packet, workdir):
        return {"schema": "bounded-review/lane-result/v1", "findings": []}


@hookimpl
def boundedreview_lanes(settings):
    return [_Lane()]
"""


@pytest.fixture
def installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A real distribution on sys.path with an entry point in group ``boundedreview``."""
    (tmp_path / "br_sample_plugin.py").write_text(ENTRY_POINT_PLUGIN)
    info = tmp_path / "br_sample_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: br-sample-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[boundedreview]\nsample = br_sample_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "sample"
    sys.modules.pop("br_sample_plugin", None)


def test_lanes_come_from_entry_points_and_conftest_objects(installed_plugin: str) -> None:
    pm = manager(extra=[ConftestLike(), object()])
    found = {config.name: config for config, _ in plugin_lanes(pm, Settings())}
    assert set(found) == {"from-entry-point", "from-conftest"}
    assert (found["from-entry-point"].role, found["from-entry-point"].kind) == ("scout", "plugin")
    assert found["from-conftest"].model == "local-rules"


def test_the_installed_entry_points_are_noted_and_a_change_to_them_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading every distribution's metadata each run costs about 10 ms: the names are noted
    in the state folder, with the distributions' entry point files they came from."""
    state, site = tmp_path / "state", tmp_path / "site"
    state.mkdir()
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    assert not phase_needed(Settings(), [], state)
    assert json.loads((state / OFFERED).read_text())["names"] == []

    # A plugin installed after: a new distribution folder on the path.
    info = site / "br_later-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: br-later\nVersion: 1.0\n")
    entry_points = info / "entry_points.txt"
    entry_points.write_text("[other]\nx = y\n")
    assert not phase_needed(Settings(), [], state)
    # Its entry points rewritten in place to offer a lane.
    entry_points.write_text("[boundedreview]\nlater = br_later\n")
    assert phase_needed(Settings(), [], state)
    assert json.loads((state / OFFERED).read_text())["names"] == ["later"]
    assert not phase_needed(Settings(blocked_plugins=["later"]), [], state)
    # Noted answers are used as they are: a forged note for the same files is believed, which
    # shows the metadata was not read again.
    noted = json.loads((state / OFFERED).read_text())
    (state / OFFERED).write_text(json.dumps({**noted, "names": []}))
    assert not phase_needed(Settings(), [], state)
    # Uninstalled: the folder is gone.
    shutil.rmtree(info)
    assert not phase_needed(Settings(), [], state)


def test_a_state_folder_that_cannot_be_written_still_answers(
    installed_plugin: str, tmp_path: Path
) -> None:
    state = tmp_path / "read-only"
    state.mkdir()
    (state / OFFERED).mkdir(parents=True)  # nothing can be written in its place, nor read
    assert phase_needed(Settings(), [], state)


def test_plugins_can_be_blocked_by_name(installed_plugin: str) -> None:
    pm = manager(blocked=[installed_plugin, "conftest_lanes"], extra=[ConftestLike()])
    assert plugin_lanes(pm, Settings()) == []


@pytest.mark.parametrize(
    ("lane", "failure", "detail"),
    [
        (Lane("ok"), None, ""),
        (Lane("slow", delay=3), "limit", "timed out after 1s"),
        (Lane("raises", answer=RuntimeError("no model")), "error", "RuntimeError: no model"),
        (
            Lane("bare", answer={"schema": "bounded-review/lane-result/v1", "verdict": "pass"}),
            "error",
            "bare verdict",
        ),
        (Lane("nan", answer={"verdict": float("nan")}), "error", "not JSON"),
    ],
    ids=lambda value: getattr(value, "name", value),
)
def test_the_core_drives_plugin_lanes(
    tmp_path: Path, lane: Lane, failure: str | None, detail: str
) -> None:
    pm = manager(extra=[])
    assert plugin_lanes(pm, Settings()) == []  # nothing registered but what we pass below
    config = plugin_lanes_of(lane)
    attempt = run_once(config, lane, json.dumps({"diff": "d"}).encode(), tmp_path)
    assert attempt.failure == failure
    assert detail in attempt.detail
    if failure is None:
        assert attempt.result is not None
        assert attempt.result.rationale == "saw d"


def plugin_lanes_of(lane: Lane) -> Any:
    class One:
        __name__ = "one"

        @hookimpl
        def boundedreview_lanes(self, settings: Settings) -> list[Lane]:
            return [lane]

    ((config, _),) = plugin_lanes(manager(extra=[One()]), Settings())
    return config


def test_a_broken_plugin_does_not_take_the_others_down() -> None:
    class NotAList:
        __name__ = "not_a_list"

        @hookimpl
        def boundedreview_lanes(self, settings: Settings) -> Any:
            return Lane("single")

    class Raises:
        __name__ = "raises"

        @hookimpl
        def boundedreview_lanes(self, settings: Settings) -> Any:
            raise RuntimeError("broken plugin")

    problems: list[str] = []
    pm = manager(extra=[NotAList(), Raises(), ConftestLike()])
    found = plugin_lanes(pm, Settings(), problems)
    assert [config.name for config, _ in found] == ["from-conftest"]
    assert sorted(p.split(":")[0] for p in problems) == [
        "plugin 'not_a_list' offered no lanes",
        "plugin 'raises' offered no lanes",
    ]
