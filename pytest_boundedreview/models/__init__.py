"""The pydantic models of every document the tool reads or writes, by schema name.

Attributes load on first use: building pydantic models costs time, and a pytest session only
needs the report and configuration models.
"""

from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING, Any

from . import plain

if TYPE_CHECKING:
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

_HOMES = {
    "ADVISORY_CATEGORIES": "finding",
    "BLOCKING_CATEGORIES": "finding",
    "Finding": "finding",
    "RejectedFinding": "finding",
    "ReportFinding": "finding",
    "Reproduce": "finding",
    "LANE_RESULT_SCHEMA": "lane",
    "PACKET_SCHEMA": "lane",
    "Assurances": "lane",
    "LaneResult": "lane",
    "Packet": "lane",
    "LOOP_STATE_SCHEMA": "loop",
    "LoopState": "loop",
    "REPORT_SCHEMA": "report",
    "Report": "report",
    "TestFailure": "report",
}
# `bounded-review schema NAME` and `validate` use these names; ids are the `schema` values.
SCHEMA_NAMES = {
    "finding": "finding.Finding",
    "lane-result": "lane.LaneResult",
    "packet": "lane.Packet",
    "report": "report.Report",
    "loop-state": "loop.LoopState",
}
SCHEMA_IDS: dict[str, str] = {
    "bounded-review/lane-result/v1": "lane-result",
    "bounded-review/packet/v1": "packet",
    "bounded-review/report/v1": "report",
    "bounded-review/loop-state/v1": "loop-state",
}


def model(name: str) -> type[BaseModel] | type:
    """The class of the document kind ``name`` (a key of :data:`SCHEMA_NAMES`): a pydantic
    model, or a plain dataclass (see ``plain.py``)."""
    module, _, cls = SCHEMA_NAMES[name].partition(".")
    found: type = getattr(importlib.import_module(f"{__name__}.{module}"), cls)
    return found


def validate(name: str, document: object) -> Any:
    """The document kind ``name`` from JSON data, validated as JSON (a date is its ISO text);
    pydantic's ``ValidationError`` if it is not one."""
    from pydantic import BaseModel

    found = model(name)
    text = json.dumps(document)
    if issubclass(found, BaseModel):
        return found.model_validate_json(text)
    return plain.validate(found, text)


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the document kind ``name``."""
    from pydantic import BaseModel

    found = model(name)
    if issubclass(found, BaseModel):
        schema = found.model_json_schema(by_alias=True)
    else:
        schema = plain.adapter(found).json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ADVISORY_CATEGORIES",
    "BLOCKING_CATEGORIES",
    "LANE_RESULT_SCHEMA",
    "LOOP_STATE_SCHEMA",
    "PACKET_SCHEMA",
    "REPORT_SCHEMA",
    "SCHEMA_IDS",
    "SCHEMA_NAMES",
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
    "model",
    "validate",
]
