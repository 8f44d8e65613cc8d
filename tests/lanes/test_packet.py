from __future__ import annotations

import json

from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.freeze import freeze
from pytest_boundedreview.core.settings.tables import LaneConfig
from pytest_boundedreview.lanes.packet import build_packet, requirements
from pytest_boundedreview.models import Packet, ReportFinding
from pytest_boundedreview.models import TestFailure as Failure

SCOUT = ReportFinding(
    path="app.py",
    line=1,
    severity="advisory",
    category="style",
    failure_mode="f",
    evidence="e",
    remediation="r",
    fingerprint="abc",
    verification="evidence",
)


def test_the_packet_is_minimal_task_local_and_read_only(repo: GitRepo) -> None:
    repo.commit({"AGENTS.md": "Be strict.\n"}, "instructions")
    repo.write("app.py", "x = 1\ny = 3\n")
    repo.write("AGENTS.md", "Be strict about tests.\n")  # the snapshot's text is what counts
    handle = git.open_repo(repo.path)
    target = freeze(handle, "local-diff")
    found = requirements(handle, target, ["AGENTS.md", "CONTRIBUTING.md"])
    assert [(r.path, r.text) for r in found] == [("AGENTS.md", "Be strict about tests.\n")]
    verdict = LaneConfig(name="v", lens="security", command=["x"], model="m1", reasoning="high")
    failure = Failure(nodeid="t.py::t", signature="s", reason="passes at base")
    packet = build_packet(verdict, target, found, target_related=[failure], scout_findings=[SCOUT])
    data = json.loads(packet.model_dump_json())
    assert data["schema"] == "bounded-review/packet/v1"
    assert data["read_only"] is True
    assert data["lane"] == {"name": "v", "lens": "security", "role": "verdict"}
    assert data["target"] == {"kind": "local-diff", "base": "HEAD", "revision": target.revision}
    assert {f["path"]: f["added_lines"] for f in data["scope"]} == {"AGENTS.md": [1], "app.py": [2]}
    assert "+y = 3" in data["diff"]
    assert data["baseline"]["target_related"][0]["nodeid"] == "t.py::t"
    assert [f["fingerprint"] for f in data["scout_findings"]] == ["abc"]
    assert set(data["finding_schema"]["required"]) >= {"path", "line", "evidence"}
    assert (data["model"], data["reasoning"]) == ("m1", "high")
    assert Packet.model_validate(data) == packet

    scout = LaneConfig(name="s", lens="correctness", role="scout", command=["x"])
    assert build_packet(scout, target, found, scout_findings=[SCOUT]).scout_findings == []


def test_scout_findings_that_git_cannot_look_up_are_left_out(repo: GitRepo) -> None:
    from pytest_boundedreview.change.trees.treefiles import TreeFiles
    from pytest_boundedreview.lanes.result import read_result
    from pytest_boundedreview.review.lanes import scout_findings

    document = {
        "schema": "bounded-review/lane-result/v1",
        "findings": [
            {
                **SCOUT.model_dump(exclude={"fingerprint", "lanes", "verification", "note"}),
                "path": "bad\x00path",
            },
            SCOUT.model_dump(exclude={"fingerprint", "lanes", "verification", "note"}),
        ],
    }
    attempt = read_result(json.dumps(document).encode())
    handle = git.open_repo(repo.path)
    files = TreeFiles(handle, freeze(handle, "local-diff").tree)
    handed = scout_findings([attempt], files)
    assert [f.path for f in handed] == ["app.py"]
    assert handed[0].note == "scout finding, not yet triaged"
