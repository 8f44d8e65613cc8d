"""The lane-result JSON Schema as agents and endpoints receive it: findings spelled out, and in
the strict form OpenAI's structured outputs require (every property required, optional ones
nullable, no other properties, no ``$ref``, no conditionals). Answers are validated by the
tool's own models anyway; the schema is made from those models, so that a constrained decoder
(a grammar built from it, as llama.cpp's server does) cannot produce what they refuse: required
strings are non-empty (``minLength``, which OpenAI and llama.cpp both take) and the rationale is
never null. What JSON Schema in this form cannot say (a ``revise`` carries a finding, a ``pass``
no blocking one) is in the `verdict` description and refused by the model's validator."""

from __future__ import annotations

import copy
import functools
from typing import Any

from ..models.finding import Finding
from ..models.lane import LaneResult

# Keywords left to local validation: ``pattern`` and ``format`` (regular expression dialects
# differ between decoders, and a wrong category rejects one finding, not the answer), and
# ``maxLength`` (a decoder expands a bounded repetition into one grammar rule per character).
_DROPPED = ("default", "maxLength", "pattern", "format", "title")
_TEXT = {"type": "string", "minLength": 1}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if any(option.get("type") == "null" for option in schema.get("anyOf", [])):
        return schema
    if "anyOf" in schema:
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def _strict(schema: Any, defs: dict[str, Any]) -> Any:
    if isinstance(schema, list):
        return [_strict(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        return _strict(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    out = {k: _strict(v, defs) for k, v in schema.items() if k not in (*_DROPPED, "$defs")}
    if "properties" in out:
        required = set(schema.get("required", []))
        # An optional property becomes nullable where its default is null, and simply
        # required where it has another default (an empty list stays a list).
        out["properties"] = {
            name: _nullable(prop)
            if name not in required and schema["properties"][name].get("default", 0) is None
            else prop
            for name, prop in out["properties"].items()
        }
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def _one_of(**shapes: dict[str, Any]) -> dict[str, Any]:
    """Objects with exactly one of ``shapes`` as their only property, or null."""
    options: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {name: shape},
            "required": [name],
            "additionalProperties": False,
        }
        for name, shape in shapes.items()
    ]
    return {"anyOf": [*options, {"type": "null"}]}


@functools.cache
def _lane_result() -> dict[str, Any]:
    schema = LaneResult.model_json_schema(by_alias=True)
    # Strict structured outputs take no conditional (``if``/``then``): the verdict's rules
    # stay in the `verdict` description, and the model's validator refuses an answer that
    # breaks them (an unverified attempt, retried).
    schema.pop("allOf", None)
    finding = Finding.model_json_schema(by_alias=True)
    defs = {**schema.pop("$defs", {}), **finding.pop("$defs", {})}
    schema["properties"]["findings"]["items"] = finding
    result: dict[str, Any] = _strict(schema, defs)
    # The rationale is never null: a verdict without one and without findings is refused.
    why = "what you checked and why it holds or fails, in a few sentences"
    result["properties"]["rationale"] = {**_TEXT, "description": why}
    # Two shapes the models enforce beyond field types: a reproduction is one node id or one
    # command (never both, never neither), and a dismissal needs a reason (a string always,
    # so a null can never be chosen for it).
    properties = result["properties"]["findings"]["items"]["properties"]
    command = {"type": "array", "items": {"type": "string"}, "minItems": 1}
    properties["reproduce"] = _one_of(pytest=_TEXT, command=command)
    reconciled = result["properties"]["reconciliation"]["items"]["properties"]
    reconciled["reason"] = {**_TEXT, "description": "why; required when dismissed"}
    return result


def lane_result_schema() -> dict[str, Any]:
    """A fresh copy of the strict lane-result schema."""
    return copy.deepcopy(_lane_result())
