"""The pydantic models of every document the tool reads or writes, by schema name."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .finding import (
    ADVISORY_CATEGORIES,
    BLOCKING_CATEGORIES,
    Finding,
    RejectedFinding,
    ReportFinding,
    Reproduce,
)
from .lane import LANE_RESULT_SCHEMA, PACKET_SCHEMA, Assurances, LaneResult, Packet
from .loop import LOOP_STATE_SCHEMA, LoopState
from .report import REPORT_SCHEMA, Report, TestFailure

# `bounded-review schema NAME` and `validate` use these names; ids are the `schema` values.
SCHEMAS: dict[str, type[BaseModel]] = {
    "finding": Finding,
    "lane-result": LaneResult,
    "packet": Packet,
    "report": Report,
    "loop-state": LoopState,
}
SCHEMA_IDS: dict[str, str] = {
    LANE_RESULT_SCHEMA: "lane-result",
    PACKET_SCHEMA: "packet",
    REPORT_SCHEMA: "report",
    LOOP_STATE_SCHEMA: "loop-state",
}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the document kind ``name`` (a key of :data:`SCHEMAS`)."""
    schema = SCHEMAS[name].model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


__all__ = [
    "ADVISORY_CATEGORIES",
    "BLOCKING_CATEGORIES",
    "LANE_RESULT_SCHEMA",
    "LOOP_STATE_SCHEMA",
    "PACKET_SCHEMA",
    "REPORT_SCHEMA",
    "SCHEMAS",
    "SCHEMA_IDS",
    "Assurances",
    "Finding",
    "LaneResult",
    "LoopState",
    "Packet",
    "RejectedFinding",
    "Report",
    "ReportFinding",
    "Reproduce",
    "TestFailure",
    "json_schema",
]
