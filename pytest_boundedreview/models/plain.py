"""Plain dataclasses for what a pytest session builds and writes: its settings and its report.

A session makes these from its own data and writes them with :mod:`json`, so it never imports
pydantic. They are frozen, keyword-only dataclasses (made by ``record``); pydantic validates
them only where a document comes from outside (a configuration of more than plain values, a
report read back, a schema asked for), through :func:`adapter`. Their constraints are
:class:`Limits` and :class:`Check` in ``Annotated`` metadata: inert objects until pydantic
asks them for their schema.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .record import record

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - exercised on Python 3.10 only
    from typing_extensions import dataclass_transform

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema

T = TypeVar("T")

# What the pydantic models of the package say (models/base.py): unknown keys are errors,
# ints are not floats and bools are not ints.
CONFIG = {"extra": "forbid", "strict": True}


@dataclass_transform(kw_only_default=True, frozen_default=True)
def plain(cls: type[T]) -> type[T]:
    """A frozen, keyword-only dataclass pydantic validates as strictly as the models."""
    cls.__pydantic_config__ = CONFIG  # type: ignore[attr-defined]
    cls.__get_pydantic_core_schema__ = classmethod(_from_objects)  # type: ignore[attr-defined]
    return record(frozen=True, kw_only=True)(cls)


def _from_objects(cls: type, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
    """Strict as the models are: a mapping (a JSON object, a TOML table) is accepted where
    the dataclass is expected, as it is for a model; its values stay strict."""
    schema = cast("dict[str, Any]", handler(source))
    if schema["type"] == "dataclass":
        schema["strict"] = False
    return cast("CoreSchema", schema)


@record(frozen=True)
class Limits:
    """Bounds of a number, a string or a list, as pydantic's ``Field`` gives them."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    min_length: int | None = None
    pattern: str | None = None

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema = cast("dict[str, Any]", handler(source))
        schema.update({k: v for k, v in dataclasses.asdict(self).items() if v is not None})
        return cast("CoreSchema", schema)


@record(frozen=True)
class Check:
    """A check of one value after its type is validated; a ``ValueError`` it raises is a
    validation error at that value's place."""

    function: Callable[[Any], Any]

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(self.function, handler(source))


_ADAPTERS: dict[type, Any] = {}


def adapter(cls: type[T]) -> TypeAdapter[T]:
    """The pydantic validator (and schema) of the dataclass ``cls``."""
    if cls not in _ADAPTERS:
        from pydantic import TypeAdapter

        # A module whose dataclasses hold pydantic models names them for the type checker
        # only, and gives pydantic those names with its ``provide_names``.
        provide = getattr(sys.modules[cls.__module__], "provide_names", None)
        if provide is not None:
            provide()
        _ADAPTERS[cls] = TypeAdapter(cls)
    found: TypeAdapter[T] = _ADAPTERS[cls]
    return found


def validate(cls: type[T], data: str | bytes) -> T:
    """``cls`` from JSON text; pydantic's ``ValidationError`` when it is not one."""
    return adapter(cls).validate_json(data)


def validate_data(cls: type[T], data: object) -> T:
    """``cls`` from data (dicts, lists, strings, numbers) as JSON or TOML gives it."""
    return adapter(cls).validate_python(data)


def checked_plainly(cls: type[T], data: Mapping[str, object]) -> T | None:
    """``cls`` from ``data`` without pydantic, when strict validation of each value given
    would only test its type: text, a flag, one of some words (each maybe ``None``), as the
    field says with no constraint; the other fields take their defaults. ``None`` (validate
    it) for anything else: an unknown key, a field of another kind, a value of the wrong
    type, a cross-field check of ``__post_init__`` that refuses it. What it accepts, pydantic
    accepts as is (``tests/core/test_config_plainly.py`` holds it to that, field by field)."""
    if cls not in _KINDS:
        hints = typing.get_type_hints(cls, include_extras=True)
        fields = dataclasses.fields(cast("Any", cls))
        _KINDS[cls] = {f.name: _accepted(hints[f.name]) for f in fields}
    kinds = _KINDS[cls]
    for key, value in data.items():
        accepted = kinds.get(key)
        if accepted is None or not any(_is(value, one) for one in accepted):
            return None
    try:
        return cls(**data)
    except (ValueError, TypeError):
        return None  # pydantic says why, in its words


# Per class, per field: the values its strict validation takes as they are, by type alone
# (``str``, ``bool``, ``None``, or a tuple of words); ``None`` for a field of another kind.
_KINDS: dict[type, dict[str, tuple[object, ...] | None]] = {}


def _accepted(hint: Any) -> tuple[object, ...] | None:
    if hint is str or hint is bool:
        return (hint,)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal and all(type(a) is str for a in args):
        return (args,)
    if origin is typing.Union or type(hint).__name__ == "UnionType":
        kinds = [a for a in args if a is not type(None)]
        one = _accepted(kinds[0]) if len(kinds) == 1 and len(args) == 2 else None
        return None if one is None else (*one, None)
    return None


def _is(value: object, kind: object) -> bool:
    if kind is None:
        return value is None
    if isinstance(kind, tuple):
        return type(value) is str and value in kind
    return type(value) is kind  # exactly: no subclass (a bool is no int, and no str)


def jsonable(value: Any) -> Any:
    """``value`` as JSON data: dataclasses as objects in field order, pydantic models (the
    findings) as their own JSON gives them; an infinite or NaN number is ``null``, as pydantic
    writes it."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    dump = getattr(value, "model_dump_json", None)
    if dump is not None:
        return json.loads(dump(by_alias=True))
    return value


def dumps(value: Any, indent: int | None = None) -> str:
    """``value`` as JSON text (see :func:`jsonable`), non-ASCII kept as is."""
    separators = (",", ": ") if indent is not None else (",", ":")
    return json.dumps(jsonable(value), indent=indent, ensure_ascii=False, separators=separators)


def build(cls: type[T], data: Any) -> T:
    """``cls`` from JSON data that already passed :func:`validate`: nested dataclasses built
    the same way, numbers for float fields made floats, as validation makes them. Text and
    nulls are taken as they are, whatever the field: data of nothing else (a configuration
    naming only its base, say) needs no field's type (about 1 ms a class to work out)."""
    if all(item is None or isinstance(item, str) for item in data.values()):
        return cls(**data)
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, include_extras=False)
    hints = _HINTS[cls]
    return cls(**{name: _value(hints[name], item) for name, item in data.items()})


_HINTS: dict[type, dict[str, Any]] = {}


def _value(hint: Any, item: Any) -> Any:
    if item is None:
        return None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or type(hint).__name__ == "UnionType":
        kinds = [a for a in args if a is not type(None)]
        return _value(kinds[0], item) if len(kinds) == 1 else item
    if origin is list:
        return [_value(args[0], one) for one in item]
    if origin is dict:
        return {key: _value(args[1], one) for key, one in item.items()}
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return build(hint, item)
    if hint is float and isinstance(item, int):
        return float(item)
    return item
