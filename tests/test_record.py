"""``record`` means what ``dataclasses.dataclass`` means: each case builds the same class both
ways and holds the record to the standard one."""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from pytest_boundedreview.models.plain import adapter, plain
from pytest_boundedreview.models.record import record

Maker = Callable[..., Any]


def _both(frozen: bool, kw_only: bool) -> list[Maker]:
    return [
        dataclasses.dataclass(frozen=frozen, kw_only=kw_only),
        record(frozen=frozen, kw_only=kw_only),
    ]


def _point(make: Maker) -> Any:
    class Point:
        x: int
        y: int = 0
        tags: list[str] = dataclasses.field(default_factory=list)
        note: str = dataclasses.field(default="", compare=False, repr=False)
        seen: list[int] = dataclasses.field(default_factory=list, init=False)

    Point.__module__ = __name__
    return make(Point)


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        value = call()
    except Exception as exc:
        return type(exc).__name__, None
    return "ok", value


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("kw_only", [False, True])
def test_construction_equality_repr_and_hash_match_the_standard_dataclass(
    frozen: bool, kw_only: bool
) -> None:
    std, rec = (_point(make) for make in _both(frozen, kw_only))
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {"x": 1}),
        ((), {"x": 1, "y": 2, "tags": ["a"], "note": "n"}),
        ((1,), {}),
        ((1, 2), {"tags": ["b"]}),
        ((1,), {"x": 2}),  # twice
        ((), {}),  # missing
        ((), {"x": 1, "z": 3}),  # unknown
        ((), {"x": 1, "seen": [1]}),  # not an init field
        ((1, 2, [], "", 5), {}),  # too many
    ]
    for args, kwargs in calls:
        a = _outcome(functools.partial(std, *args, **kwargs))
        b = _outcome(functools.partial(rec, *args, **kwargs))
        assert a[0] == b[0], (args, kwargs, a, b)
        if a[0] != "ok":
            continue
        made_std, made_rec = a[1], b[1]
        assert repr(made_rec).replace(rec.__qualname__, "X") == repr(made_std).replace(
            std.__qualname__, "X"
        )
        assert vars(made_rec) == vars(made_std)
        assert made_rec == rec(*args, **kwargs)
        assert made_rec != made_std  # another class
        changed = dataclasses.replace(made_rec, x=-1)
        assert changed != made_rec
        assert changed.x == -1
        assert changed.tags == made_rec.tags
        assert dataclasses.replace(made_rec, note="other") == made_rec  # compare=False
        assert dataclasses.asdict(made_rec) == dataclasses.asdict(made_std)
        assert (
            _outcome(functools.partial(hash, made_rec))[0]
            == (_outcome(functools.partial(hash, made_std))[0])
        )
    assert rec.__match_args__ == std.__match_args__
    assert [f.name for f in dataclasses.fields(rec)] == [f.name for f in dataclasses.fields(std)]


def test_each_instance_gets_its_own_default_factory_value() -> None:
    rec = _point(record)
    first, second = rec(x=1), rec(x=1)
    first.tags.append("a")
    first.seen.append(1)
    assert second.tags == []
    assert second.seen == []


def test_a_frozen_record_refuses_changes_as_the_standard_one_does() -> None:
    for make in _both(frozen=True, kw_only=False):
        made = _point(make)(1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.x = 2
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.other = 2
        with pytest.raises(dataclasses.FrozenInstanceError):
            del made.x


def test_a_hashable_frozen_record_hashes_by_its_compared_fields() -> None:
    @record(frozen=True)
    class Key:
        a: str
        b: int = 0
        why: str = dataclasses.field(default="", compare=False)

    assert hash(Key("x", 1, "one")) == hash(Key("x", 1, "two"))
    assert len({Key("x", 1), Key("x", 1, "why"), Key("x", 2)}) == 2
    assert {Key("x"): 1}[Key("x", why="else")] == 1


def test_a_record_class_s_methods_share_one_cell() -> None:
    # every full garbage collection walks them: a cell per value each method reads was
    # about a thousand objects over the package's records
    made = _point(record(frozen=True))
    methods = [made.__dict__[n] for n in ("__init__", "__repr__", "__eq__", "__hash__")]
    methods += [made.__dict__["__setattr__"], made.__dict__["__delattr__"]]
    cells = {id(cell) for method in methods for cell in method.__closure__}
    assert len(cells) == 1
    assert [m.__qualname__.rsplit(".", 1)[-1] for m in methods] == [
        "__init__",
        "__repr__",
        "__eq__",
        "__hash__",
        "__setattr__",
        "__delattr__",
    ]


def test_an_unfrozen_record_with_equality_is_not_hashable() -> None:
    @record
    class Box:
        value: int

    with pytest.raises(TypeError):
        hash(Box(1))


def test_methods_a_class_writes_itself_are_kept_and_post_init_runs() -> None:
    @record(frozen=True)
    class Own:
        value: int
        double: int = dataclasses.field(default=0, init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "double", 2 * self.value)

        def __repr__(self) -> str:
            return f"Own<{self.value}>"

        def __hash__(self) -> int:
            return 7

    own = Own(3)
    assert own.double == 6
    assert repr(own) == "Own<3>"
    assert hash(own) == 7


def test_a_record_subclass_adds_fields_after_its_base() -> None:
    @record(frozen=True)
    class Base:
        a: int

    @record(frozen=True)
    class Child(Base):
        b: int = 1

    child = Child(1, 2)
    assert (child.a, child.b) == (1, 2)
    assert child != Base(1)
    assert Base(1) == Base(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.a = 5


def test_a_record_keeps_its_docstring_and_names_itself_without_one() -> None:
    @record
    class Documented:
        """What it holds."""

        a: int

    @record(frozen=True)
    class Bare:
        a: int

    @record
    class Sub(Documented):
        b: int = 0

    assert Documented.__doc__ == "What it holds."
    assert Bare.__doc__ == "Bare()"
    # as the standard dataclass names it: by the signature of the __init__ it inherits
    assert Sub.__doc__ == "Sub" + str(inspect.signature(Sub)).replace(" -> None", "")
    assert "*args" in Sub.__doc__


def test_records_copy_and_pickle() -> None:
    made = _point(record(frozen=True))(1, 2, ["t"])
    assert copy.deepcopy(made) == made
    assert copy.copy(made) == made
    global PickledPoint  # pickle finds classes by their module-level name
    PickledPoint = type(made)
    PickledPoint.__qualname__ = "PickledPoint"
    assert pickle.loads(pickle.dumps(made)) == made


PickledPoint: Any = None


def test_pydantic_validates_a_plain_record_strictly() -> None:
    @plain
    class Limited:
        name: str
        count: int = 0

    validator = adapter(Limited)
    assert validator.validate_python({"name": "a", "count": 2}) == Limited(name="a", count=2)
    with pytest.raises(ValueError, match="count"):
        validator.validate_python({"name": "a", "count": "2"})
    with pytest.raises(ValueError, match="other"):
        validator.validate_python({"name": "a", "other": 1})


@pytest.mark.parametrize(("frozen", "kw_only"), [(False, False), (True, False), (True, True)])
def test_its_dataclass_parameters_say_what_it_is(frozen: bool, kw_only: bool) -> None:
    std, rec = (_point(make) for make in _both(frozen, kw_only))
    for name in ("init", "repr", "eq", "order", "unsafe_hash", "frozen"):
        assert getattr(rec.__dataclass_params__, name) == getattr(std.__dataclass_params__, name)


def test_standard_dataclasses_and_records_subclass_each_other() -> None:
    frozen_record = _point(record(frozen=True))
    # A standard frozen dataclass checks that its bases are frozen too (a project extending
    # the settings, or a test adding a key, makes one).
    extended = dataclasses.make_dataclass(
        "Extended",
        [("extra", int, dataclasses.field(default=0))],
        bases=(frozen_record,),
        frozen=True,
    )
    made = extended(1, extra=2)
    assert (made.x, made.extra) == (1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.extra = 3
    with pytest.raises(TypeError, match="non-frozen"):
        dataclasses.make_dataclass("Loose", [("extra", int)], bases=(frozen_record,))

    @record(frozen=True)
    class OnStandard(_point(dataclasses.dataclass(frozen=True))):  # type: ignore[misc]
        extra: int = 0

    on = OnStandard(1, extra=2)
    assert (on.x, on.extra, on) == (1, 2, OnStandard(1, extra=2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        on.x = 5


def _refusal(make: Maker, define: Callable[[Maker], Any]) -> str:
    """The error the standard dataclass, or the record, raises for a class ``define`` makes."""
    try:
        define(make)
    except TypeError as exc:
        return type(exc).__name__
    return "made"


def _frozen(make: Maker) -> Maker:
    """``make``'s frozen form."""
    return record(frozen=True) if make is record else dataclasses.dataclass(frozen=True)


def _frozen_on_unfrozen(make: Maker) -> Any:
    base = make(type("Base", (), {"__annotations__": {"a": "int"}}))
    return _frozen(make)(type("Child", (base,), {"__annotations__": {"b": "int"}}))


def _required_after_default(make: Maker) -> Any:
    return make(type("Late", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 0}))


def _initvar(make: Maker) -> Any:
    return make(type("Seeded", (), {"__annotations__": {"seed": dataclasses.InitVar[int]}}))


def _frozen_with_own_setattr(make: Maker) -> Any:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    own = {"__annotations__": {"a": "int"}, "__setattr__": __setattr__}
    return _frozen(make)(type("Own", (), own))


@pytest.mark.parametrize(
    "define",
    [_frozen_on_unfrozen, _frozen_with_own_setattr, _required_after_default, _initvar],
)
def test_classes_the_standard_dataclass_refuses_are_refused(define: Callable[..., Any]) -> None:
    std = _refusal(dataclasses.dataclass, define)
    rec = _refusal(record, define)
    if define is _initvar:  # the standard one takes it; a record says it does not
        assert (std, rec) == ("made", "TypeError")
    else:
        assert std == rec == "TypeError"


def test_a_keyword_only_required_field_may_follow_a_default() -> None:
    @record(kw_only=True)
    class Options:
        a: int = 0
        b: int

    assert Options(b=1) == Options(a=0, b=1)


@pytest.mark.parametrize("frozen_first", [True, False])
def test_a_frozen_record_may_have_an_unfrozen_base_beside_a_frozen_one(frozen_first: bool) -> None:
    """The standard dataclass refuses a frozen class only when no dataclass base is frozen."""
    made = []
    for make in (dataclasses.dataclass, record):
        frozen = _frozen(make)
        loose = make(type("Loose", (), {"__annotations__": {"b": "int"}, "b": 0}))
        firm = frozen(type("Firm", (), {"__annotations__": {"a": "int"}, "a": 0}))
        bases = (firm, loose) if frozen_first else (loose, firm)
        child = frozen(type("Child", bases, {"__annotations__": {"c": "int"}, "c": 0}))
        made.append([f.name for f in dataclasses.fields(child)])
    assert made[0] == made[1]
