"""Strategy records: how a query walks the two shapes.

A strategy is passed by name (``strategy="bvh"``) or as a frozen record
(``strategy=collisionkit.strategies.BVH(tri_test="moller")``); options never
travel as loose keyword arguments. Later strategies (the R-tree/overlap-box
search, breadth-first traversal, double boxes) add records here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .constants import TRI_TESTS


@dataclass(frozen=True)
class BVH:
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


_BY_NAME = {"bvh": BVH()}

Strategy = BVH


def resolve(strategy: str | Strategy) -> Strategy:
    """The record for a strategy name or record; ValueError for anything else."""
    if isinstance(strategy, str):
        try:
            return _BY_NAME[strategy]
        except KeyError:
            raise ValueError(f"unknown strategy {strategy!r}; choose one of {sorted(_BY_NAME)}") from None
    if isinstance(strategy, BVH):
        return strategy
    raise TypeError(f"strategy must be a name or a strategy record, got {type(strategy).__name__}")
