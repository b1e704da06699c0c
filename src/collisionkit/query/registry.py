"""One registry for every query: (query, shape kind a, shape kind b) -> handler.

A handler answers one query for one pair of shape kinds. It receives one
``Request`` (the validated, broadcast poses and every option of the query) and
declares the options it honours. A request that sets any other option (a value
other than the query's default) is refused with ``UnsupportedOptionError``
naming it: wave one dropped options on the way to handlers without a word.

The options of each query, with their defaults, are its ``Spec``'s (``query/spec.py``;
``QUERY_OPTIONS`` reads them). Registering::

    registry.register("distance", ConvexShape, Mesh, distance_convex_mesh,
                      honours=("upper_bound", "threads"))
    registry.refuse("classify", Sphere, ConvexShape, "why this cell has no answer")

Lookup is by ``isinstance`` in registration order (the first match wins), cached
per exact pair of types. Each query module registers its mesh-mesh handler; the
convex module (``query/convex.py``) registers the convex-shape handlers.

What a handler returns is the query's own answer (a result record), except for
the three traversal queries (``intersects``, ``contacts``, ``query_stats``),
whose handlers return the engine's ``BatchResult`` that the query turns into
its record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..errors import UnsupportedOptionError, UnsupportedPairError, UnsupportedQueryError
from .spec import QUERY_OPTIONS, SPECS


class Request(NamedTuple):
    """One query on one pair of shapes: everything validated, nothing left to parse.

    ``pa``/``pb`` are the distinct poses of each side, ``ia``/``ib`` the pose
    index of each of the ``n`` tasks (broadcasting without copies; where a side has
    ``n`` poses its index is 0..n-1, which ``scaling.per_task`` relies on). For
    ``time_of_impact`` they are the start poses and ``pa_end``/``pb_end`` the
    end poses (same indexing). ``mode``, ``max_pairs``, ``strategy`` and
    ``threads`` are the engine's view of the options (codes, a resolved
    strategy record, a thread count); ``options`` holds every option of the
    query as the caller gave it (defaults filled in).
    """

    a: Any
    b: Any
    pa: NDArray[np.float64]  # (Na, 4, 4)
    pb: NDArray[np.float64]  # (Nb, 4, 4)
    ia: NDArray[np.int64]  # (n,)
    ib: NDArray[np.int64]  # (n,)
    n: int
    batched: bool  # whether the caller passed a batch (results are arrays)
    mode: int  # MODE_ANY / MODE_FIRST / MODE_ALL / MODE_SURFACE_PAIRS
    max_pairs: int  # -1: no cap
    strategy: Any  # the resolved strategy record
    threads: int  # validated thread count
    query: str = ""
    options: Mapping[str, Any] = MappingProxyType({})
    pa_end: NDArray[np.float64] | None = None
    pb_end: NDArray[np.float64] | None = None


def _is_default(value: Any, default: Any) -> bool:
    if value is default:
        return True
    if type(value) is not type(default):
        return False
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # arrays and records without a plain ==
        return False


def set_options(query: str, options: Mapping[str, Any]) -> list[str]:
    """The names in ``options`` whose value differs from ``query``'s default (``query/spec.py``)."""
    defaults = SPECS[query]._defaults
    return [k for k, v in options.items() if not _is_default(v, defaults[k])]


@dataclass(frozen=True)
class Handler:
    """A registered answer to ``query`` on (``type_a``, ``type_b``) pairs.

    ``honours`` lists the query options the handler acts on; ``reason`` is set
    for a refused cell (the handler then raises ``UnsupportedQueryError``).
    """

    query: str
    type_a: type
    type_b: type
    fn: Callable[[Request], Any] | None
    honours: frozenset[str]
    reason: str = ""

    def check(self, query: str, a: Any, b: Any, options: Mapping[str, Any]) -> None:
        """Raise for a refused cell, or for an option set that this handler does not honour."""
        if self.fn is None:
            raise UnsupportedQueryError(
                f"{query} does not answer {type(a).__name__} and {type(b).__name__}: {self.reason}"
            )
        if self.honours.issuperset(options):  # PERF: the common case, no default compared
            return
        for name in set_options(query, options):
            if name not in self.honours:
                raise UnsupportedOptionError(
                    f"{query} on {type(a).__name__} and {type(b).__name__} does not support option "
                    f"{name}={options[name]!r} (supported here: {', '.join(sorted(self.honours)) or 'none'})"
                )

    def __call__(self, request: Request) -> Any:
        assert self.fn is not None
        return self.fn(request)


_HANDLERS: dict[str, list[Handler]] = {}
_CACHE: dict[tuple[str, type, type], Handler | None] = {}


def register(
    query: str, type_a: type, type_b: type, fn: Callable[[Request], Any], *, honours: Iterable[str]
) -> Handler:
    """Answer ``query`` on (type_a, type_b) pairs (and subclasses) with ``fn(request)``.

    ``honours``: the options of the query that ``fn`` acts on; every other
    option must be left at its default by callers (else ``UnsupportedOptionError``).
    """
    honoured = frozenset(honours)
    unknown = honoured - SPECS[query].options.keys()
    if unknown:
        raise ValueError(f"{query} has no options {sorted(unknown)}")
    h = Handler(query, type_a, type_b, fn, honoured)
    _HANDLERS.setdefault(query, []).append(h)
    _CACHE.clear()
    return h


def refuse(query: str, type_a: type, type_b: type, reason: str) -> Handler:
    """Make ``query`` on (type_a, type_b) pairs raise ``UnsupportedQueryError`` with ``reason``.

    Register refusals before the handlers they shadow (first match wins).
    """
    h = Handler(query, type_a, type_b, None, frozenset(), reason)
    _HANDLERS.setdefault(query, []).append(h)
    _CACHE.clear()
    return h


def find(query: str, a: Any, b: Any) -> Handler:
    """The handler for ``query`` on the types of ``a`` and ``b``.

    Raises
    ------
    UnsupportedPairError
        When no handler is registered for the pair (e.g. a shape that is not one).
    """
    key = (query, type(a), type(b))
    try:
        h = _CACHE[key]
    except KeyError:
        h = next((h for h in _HANDLERS.get(query, ()) if isinstance(a, h.type_a) and isinstance(b, h.type_b)), None)
        _CACHE[key] = h
    if h is None:
        raise UnsupportedPairError(
            f"{query} is not implemented for {type(a).__name__} and {type(b).__name__} "
            "(shapes are collisionkit.Mesh or convex shapes: Convex, Box, Sphere, Capsule, Cylinder)"
        )
    return h


def handlers(query: str | None = None) -> list[Handler]:
    """Every registered handler (of one query, or of all), refusals included."""
    if query is not None:
        return list(_HANDLERS.get(query, ()))
    return [h for q in _HANDLERS for h in _HANDLERS[q]]


def checked(query: str, a: Any, b: Any, options: Mapping[str, Any]) -> Handler:
    """The handler for ``query`` on ``a`` and ``b``, after checking that it honours every option set.

    Raises
    ------
    UnsupportedPairError
        No handler for the pair.
    UnsupportedQueryError
        A refused cell (README: "Which query answers which shapes").
    UnsupportedOptionError
        An option set to a non-default value that the handler does not act on.
    """
    h = find(query, a, b)
    h.check(query, a, b, options)
    return h


__all__ = [
    "QUERY_OPTIONS",
    "Handler",
    "Request",
    "checked",
    "find",
    "handlers",
    "refuse",
    "register",
    "set_options",
]
