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
        _Methods(made, frozen).attach()
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


class _Methods:
    """The methods of one record class, bound to its table of fields."""

    def __init__(self, cls: type, frozen: bool) -> None:
        self.cls = cls
        self.frozen = frozen
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

    def attach(self) -> None:
        cls = self.cls
        own = cls.__dict__
        for name, method in (
            ("__init__", self._init()),
            ("__repr__", self._repr()),
            ("__eq__", self._eq()),
        ):
            if name not in own:
                setattr(cls, name, method)
        explicit_hash = own.get("__hash__", dataclasses.MISSING)
        if explicit_hash is dataclasses.MISSING or (explicit_hash is None and "__eq__" in own):
            cls.__hash__ = self._hash() if self.frozen else None  # type: ignore[method-assign,assignment]
        if self.frozen:
            cls.__setattr__, cls.__delattr__ = self._frozen()  # type: ignore[method-assign,assignment]

    def _init(self) -> Callable[..., None]:
        qualname, init, positional = self.cls.__qualname__, self.init, self.positional
        defaults, factories, unset = self.defaults, self.factories, self.unset
        post_init = hasattr(self.cls, "__post_init__")

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if args:
                if len(args) > len(positional):
                    raise TypeError(
                        f"{qualname}.__init__() takes {len(positional) + 1} positional "
                        f"arguments but {len(args) + 1} were given"
                    )
                for name, value in zip(positional, args, strict=False):
                    if name in kwargs:
                        raise TypeError(
                            f"{qualname}.__init__() got multiple values for argument {name!r}"
                        )
                    kwargs[name] = value
            values = self.__dict__
            for name in init:
                if name in kwargs:
                    values[name] = kwargs.pop(name)
                elif name in factories:
                    values[name] = factories[name]()
                elif name in defaults:
                    values[name] = defaults[name]
                else:
                    raise TypeError(f"{qualname}.__init__() missing 1 required argument: {name!r}")
            if kwargs:
                raise TypeError(
                    f"{qualname}.__init__() got an unexpected keyword argument "
                    f"{next(iter(kwargs))!r}"
                )
            for name in unset:
                if name in factories:
                    values[name] = factories[name]()
                elif name in defaults:
                    values[name] = defaults[name]
            if post_init:
                self.__post_init__()

        __init__.__qualname__ = f"{qualname}.__init__"
        return __init__

    def _repr(self) -> Callable[[Any], str]:
        shown = self.shown

        def __repr__(self: Any) -> str:
            body = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
            return f"{type(self).__qualname__}({body})"

        return __repr__

    def _eq(self) -> Callable[[Any, object], bool]:
        key = _key(self.compared)

        def __eq__(self: Any, other: object) -> bool:
            if other.__class__ is self.__class__:
                return key(self) == key(other)
            return NotImplemented

        return __eq__

    def _hash(self) -> Callable[[Any], int]:
        key = _key(self.hashed)

        def __hash__(self: Any) -> int:
            return hash(key(self))

        return __hash__

    def _frozen(self) -> tuple[Callable[[Any, str, Any], None], Callable[[Any, str], None]]:
        cls, names = self.cls, self.names

        def field_of(instance: object, name: str) -> bool:
            """Whether ``name`` is one of the record's own: a subclass may add others."""
            return instance.__class__ is cls or name in names

        def __setattr__(self: Any, name: str, value: Any) -> None:
            if field_of(self, name):
                raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
            object.__setattr__(self, name, value)

        def __delattr__(self: Any, name: str) -> None:
            if field_of(self, name):
                raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
            object.__delattr__(self, name)

        return __setattr__, __delattr__


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of ``names``' values of an instance."""

    def key(instance: Any) -> tuple[Any, ...]:
        values = instance.__dict__
        return tuple([values[name] for name in names])

    return key
