"""``record``: the package's dataclasses, made without compiling code for each class.

The standard ``dataclasses.dataclass`` writes ``__init__``, ``__repr__``, ``__eq__``,
``__hash__`` and, when frozen, ``__setattr__`` and ``__delattr__`` as source text for each
class and compiles it: about 0.8 ms a class on CPython 3.11, most of a session's start-up
when the engine defines some fifty of them. ``record`` lets ``dataclasses`` collect the fields
(so ``dataclasses.fields``, ``replace``, ``asdict`` and pydantic see a dataclass) and gives the
class methods shared by every record instead, which read the fields from a table made once.

The same meaning as ``dataclass(frozen=..., kw_only=...)`` with ``init``, ``repr`` and ``eq``
on: positional or keyword-only arguments, defaults and ``default_factory``, ``__post_init__``,
equality and hashing on the fields that compare, frozen instances, and methods a class writes
itself kept. What the standard one refuses, a record refuses too (a frozen class on unfrozen
bases only, a frozen class with its own ``__setattr__``, a required argument after a
default); ``InitVar`` is not supported. ``tests/test_record.py`` holds it to the standard
dataclass.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any, TypeVar, overload

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - exercised on Python 3.10 only
    from typing_extensions import dataclass_transform

T = TypeVar("T")


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(*, frozen: bool = False, kw_only: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(
    cls: type[T] | None = None, /, *, frozen: bool = False, kw_only: bool = False
) -> type[T] | Callable[[type[T]], type[T]]:
    """A dataclass (``@record`` or ``@record(frozen=True, kw_only=True)``)."""

    def make(cls: type[T]) -> type[T]:
        # Frozen as the standard dataclass is only where it must be (under a frozen base, whose
        # subclasses it checks): that costs two compiled methods.
        bases = [params for base in cls.__mro__[1:] if (params := _params(base))]
        under_frozen = any(params.frozen for params in bases)
        if frozen and bases and not under_frozen:
            raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
        own = [name for name in ("__setattr__", "__delattr__") if name in cls.__dict__]
        if frozen and own:
            raise TypeError(f"Cannot overwrite attribute {own[0]} in class {cls.__name__}")
        if (
            not cls.__dict__.get("__doc__")
            and cls.__init__ is object.__init__
            and cls.__new__ is object.__new__
        ):
            # What the standard one writes for a class whose __init__ is not made yet, without
            # its inspect.signature (about 0.5 ms a class): it takes no arguments.
            cls.__doc__ = f"{cls.__name__}()"
        made = dataclasses.dataclass(
            init=False, repr=False, eq=False, kw_only=kw_only, frozen=frozen and under_frozen
        )(cls)
        _refuse_what_the_standard_init_refuses(made)
        _attach(made, frozen)
        # What the class is, for whatever reads the parameters (a standard dataclass made a
        # subclass of it checks that both are frozen, or neither).
        params = _params(made)
        params.init = params.repr = params.eq = True
        params.frozen = frozen
        return made

    return make if cls is None else make(cls)


def _refuse_what_the_standard_init_refuses(cls: type) -> None:
    """A required positional argument after one with a default, or an ``InitVar`` (which
    the shared ``__init__`` does not take): a ``TypeError``, as the standard class raises."""
    initvar = getattr(dataclasses, "_FIELD_INITVAR", None)
    for name, field in cls.__dict__["__dataclass_fields__"].items():
        if getattr(field, "_field_type", None) is initvar:
            raise TypeError(f"{cls.__qualname__}.{name}: a record takes no InitVar")
    defaulted = None
    for field in dataclasses.fields(cls):
        if not field.init or field.kw_only:
            continue
        has_default = (
            field.default is not dataclasses.MISSING
            or field.default_factory is not dataclasses.MISSING
        )
        if has_default:
            defaulted = field.name
        elif defaulted is not None:
            raise TypeError(
                f"non-default argument {field.name!r} follows default argument {defaulted!r}"
            )


def _params(cls: type) -> Any:
    """The class's ``__dataclass_params__`` (None for a class that is not a dataclass)."""
    return cls.__dict__.get("__dataclass_params__")


class _Table:
    """What one record class's methods read: its fields, sorted by what each method needs.

    Every method of a class closes over this one table, so a class costs its few functions
    and one shared cell, not a cell for each value each method reads: the records' methods
    are a lasting part of the heap that every full garbage collection of the session walks.
    """

    __slots__ = (
        "cls",
        "compared",
        "defaults",
        "factories",
        "hashed",
        "init",
        "names",
        "positional",
        "post_init",
        "qualname",
        "shown",
        "unset",
    )

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.qualname = cls.__qualname__
        fields = dataclasses.fields(cls)
        self.names = frozenset(f.name for f in fields)
        self.init = tuple(f.name for f in fields if f.init)
        self.positional = tuple(f.name for f in fields if f.init and not f.kw_only)
        self.defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
        self.factories = {
            f.name: f.default_factory
            for f in fields
            if f.default_factory is not dataclasses.MISSING
        }
        self.unset = tuple(f.name for f in fields if not f.init)  # set from their defaults
        self.shown = tuple(f.name for f in fields if f.repr)
        self.compared = tuple(f.name for f in fields if f.compare)
        self.hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        self.post_init = hasattr(cls, "__post_init__")


def _attach(cls: type, frozen: bool) -> None:
    """Give ``cls`` the methods it does not write itself."""
    made = _methods(_Table(cls))
    own = cls.__dict__
    for name in ("__init__", "__repr__", "__eq__"):
        if name not in own:
            setattr(cls, name, made[name])
    explicit_hash = own.get("__hash__", dataclasses.MISSING)
    if explicit_hash is dataclasses.MISSING or (explicit_hash is None and "__eq__" in own):
        cls.__hash__ = made["__hash__"] if frozen else None  # type: ignore[method-assign,assignment]
    if frozen:
        cls.__setattr__ = made["__setattr__"]  # type: ignore[method-assign]
        cls.__delattr__ = made["__delattr__"]  # type: ignore[method-assign]


def _methods(t: _Table) -> dict[str, Callable[..., Any]]:
    """The methods of the class ``t`` describes, by name."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if args:
            positional = t.positional
            if len(args) > len(positional):
                raise TypeError(
                    f"{t.qualname}.__init__() takes {len(positional) + 1} positional "
                    f"arguments but {len(args) + 1} were given"
                )
            for name, value in zip(positional, args, strict=False):
                if name in kwargs:
                    raise TypeError(
                        f"{t.qualname}.__init__() got multiple values for argument {name!r}"
                    )
                kwargs[name] = value
        values = self.__dict__
        factories, defaults = t.factories, t.defaults
        for name in t.init:
            if name in kwargs:
                values[name] = kwargs.pop(name)
            elif name in factories:
                values[name] = factories[name]()
            elif name in defaults:
                values[name] = defaults[name]
            else:
                raise TypeError(f"{t.qualname}.__init__() missing 1 required argument: {name!r}")
        if kwargs:
            raise TypeError(
                f"{t.qualname}.__init__() got an unexpected keyword argument {next(iter(kwargs))!r}"
            )
        for name in t.unset:
            if name in factories:
                values[name] = factories[name]()
            elif name in defaults:
                values[name] = defaults[name]
        if t.post_init:
            self.__post_init__()

    def __repr__(self: Any) -> str:
        body = ", ".join(f"{name}={getattr(self, name)!r}" for name in t.shown)
        return f"{type(self).__qualname__}({body})"

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            mine, theirs = self.__dict__, other.__dict__
            return tuple([mine[n] for n in t.compared]) == tuple([theirs[n] for n in t.compared])
        return NotImplemented

    def __hash__(self: Any) -> int:
        values = self.__dict__
        return hash(tuple([values[name] for name in t.hashed]))

    # (a field of the record's own: a subclass may add others)
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if self.__class__ is t.cls or name in t.names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self: Any, name: str) -> None:
        if self.__class__ is t.cls or name in t.names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)

    made: dict[str, Callable[..., Any]] = {
        "__init__": __init__,
        "__repr__": __repr__,
        "__eq__": __eq__,
        "__hash__": __hash__,
        "__setattr__": __setattr__,
        "__delattr__": __delattr__,
    }
    for name, method in made.items():
        method.__qualname__ = f"{t.qualname}.{name}"
    return made
