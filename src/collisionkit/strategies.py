"""Strategy records: how a query walks the two shapes.

A strategy is passed by name (``strategy="descent"``) or as a frozen record
(``strategy=collisionkit.Descent(tri_test="moller")``); options never
travel as loose keyword arguments.

Adding a strategy: define a frozen dataclass with a ``run(request)`` method
(``request`` is a ``query.registry.Request``: validated, broadcast poses and
the query mode; it returns a ``query.rows.BatchResult``), then
``register("name", Record())`` and declare what it serves
(``query.strategies.declare(Record, Capabilities(...))``) from the module that
implements it (under ``query/strategies/``), imported by ``query/__init__.py``.
``Descent`` is the built-in default and has no ``run``: the descent
(``query/strategies/descent.py``) answers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .constants import TRI_TESTS


@dataclass(frozen=True)
class Descent:
    """Simultaneous depth-first descent of the two meshes' hierarchies.

    Parameters
    ----------
    tri_test : {"guigue", "moller"}
        Triangle-triangle test at the leaves. "guigue" (default): Guigue &
        Devillers 2003 on exact orientation predicates, exact on every branch
        (touching, coplanar and degenerate triangles included). "moller":
        Moller 1997 interval overlap in float64, inexact near degeneracy.
    """

    tri_test: str = "guigue"

    def __post_init__(self) -> None:
        if self.tri_test not in TRI_TESTS:
            raise ValueError(f"unknown tri_test {self.tri_test!r}; choose one of {sorted(TRI_TESTS)}")

    @property
    def tri_test_code(self) -> int:
        return TRI_TESTS[self.tri_test]


_BY_NAME: dict[str, Any] = {"descent": Descent()}
_RECORD_TYPES: list[type] = [Descent]

#: Any strategy record (Descent or a registered one).
Strategy = Any


def register(name: str, record: Any) -> None:
    """Make ``record`` reachable as ``strategy=name``, and its type accepted as a record."""
    if not callable(getattr(record, "run", None)):
        raise TypeError(f"strategy record {record!r} has no run(request) method")
    _BY_NAME[name] = record
    if type(record) not in _RECORD_TYPES:
        _RECORD_TYPES.append(type(record))


def names() -> list[str]:
    """The registered strategy names."""
    return sorted(_BY_NAME)


def resolve(strategy: str | Strategy) -> Strategy:
    """The record for a strategy name or record; ValueError for anything else."""
    if isinstance(strategy, str):
        try:
            return _BY_NAME[strategy]
        except KeyError:
            raise ValueError(f"unknown strategy {strategy!r}; choose one of {sorted(_BY_NAME)}") from None
    if isinstance(strategy, tuple(_RECORD_TYPES)):
        return strategy
    raise TypeError(f"strategy must be a name or a strategy record, got {type(strategy).__name__}")
