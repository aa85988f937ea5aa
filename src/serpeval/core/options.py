"""Options objects: how a wide function takes its options as one frozen dataclass.

The analyses with many options (``analyze_ab``, ``plan_ab``, ``monitor_ab``, ``simulate``,
``compare``, ``gate``) take ``(data, options)``: the options are a frozen dataclass whose
fields validate themselves when it is built, so one object can be built once, checked at
once, reused across calls and varied with :func:`dataclasses.replace`. The old keyword
spelling (``compare(qrels, runs, test="wilcoxon")``) keeps working for one release: each
keyword is one field of the object, and :func:`resolve` maps the keywords onto it.

Rules of :func:`resolve`, the same for every function:

- keywords only: the object is built from them (unset fields keep their defaults);
- an object only: it is used as is;
- both: a keyword equal to the object's field (after validation: ``"Holm"`` equals
  ``"holm"``) is accepted; one that differs is a :class:`TypeError` naming the keyword and
  both values (one place per option, never a silent winner);
- a keyword that is not a field the function reads is a :class:`TypeError`, as Python's own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

__all__ = ["OptionsT", "check_rng", "field_names", "resolve", "set_field"]

OptionsT = TypeVar("OptionsT")


def field_names(cls: type) -> tuple[str, ...]:
    """The fields of an options dataclass, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(cls))


def set_field(obj: object, name: str, value: Any) -> None:
    """Store a validated (canonical) value on a frozen dataclass from its ``__post_init__``."""
    object.__setattr__(obj, name, value)


def check_rng(rng: Any) -> None:
    """Refuse an ``rng`` that :func:`~serpeval.core.checks.as_generator` refuses (same message),
    without making a generator from it (an options object keeps the seed, not a stream)."""
    import numpy as np

    from serpeval.core.checks import as_generator

    if rng is None or isinstance(rng, np.random.Generator):
        return
    if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
        as_generator(rng)


def resolve(
    cls: type[OptionsT],
    given: OptionsT | None,
    keywords: Mapping[str, Any],
    where: str,
    *,
    allowed: Collection[str] | None = None,
    renamed: Mapping[str, tuple[str, Callable[[Any], Any]]] | None = None,
) -> OptionsT:
    """The options of one call, from an options object, the old keywords, or both.

    Args:
        cls: the options dataclass.
        given: the object passed (None: none).
        keywords: the keywords passed (the old spelling).
        where: the function's name, for the messages.
        allowed: the fields this function reads (default: all); other keywords are refused.
        renamed: old keyword -> (field, conversion), e.g. ``monitor_ab``'s ``metric="ctr"``
            -> ``metrics=("ctr",)``.

    Raises:
        TypeError: an unknown keyword, an object of another class, or a keyword that
            conflicts with the object's field.
    """
    names = field_names(cls)
    accepted = set(names if allowed is None else allowed)
    renamed = dict(renamed or {})
    mapped: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in keywords.items():
        if key in renamed:
            field, convert = renamed[key]
            mapped[field], spelled[field] = convert(value), key
        elif key in accepted:
            mapped[key], spelled[key] = value, key
        else:
            options = ", ".join(sorted(accepted | set(renamed)))
            raise TypeError(f"{where}() got an unexpected keyword argument {key!r}; its options "
                            f"({cls.__name__}) are: {options}.")
    if given is None:
        return cls(**mapped)
    if not isinstance(given, cls):
        raise TypeError(f"{where}() takes its options as a {cls.__name__}; got "
                        f"{type(given).__name__}.")
    if not mapped:
        return given
    merged = dataclasses.replace(given, **mapped)  # type: ignore[type-var]
    for field in mapped:
        mine, theirs = getattr(merged, field), getattr(given, field)
        if not _same(mine, theirs):
            raise TypeError(
                f"{where}(): {spelled[field]}={keywords[spelled[field]]!r} conflicts with "
                f"{cls.__name__}.{field}={theirs!r}; give each option in one place "
                f"(dataclasses.replace(options, {field}=...)).")
    return given


def _same(a: Any, b: Any) -> bool:
    """Equal option values (arrays and generators compare by identity when ``==`` is not a bool)."""
    if a is b:
        return True
    try:
        equal = a == b
    except Exception:  # pragma: no cover - an exotic __eq__
        return False
    return equal if isinstance(equal, bool) else False
