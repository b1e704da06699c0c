"""The ``"double-box"`` strategy: seed 003's double hierarchy of outer and inner boxes, walked.

The hierarchy is built in ``convex/double_hierarchy.py``; the traversal kernel is
``kernels/traverse/double_box.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import strategies
from ...constants import MODE_ANY, TRI_TESTS
from ...convex.double_hierarchy import hierarchy_of
from ...convex.shapes import Convex
from ...errors import UnsupportedOptionError
from ...kernels.core.layout import N_STATS
from ...kernels.traverse import double_box as kd
from .. import batch
from ..registry import Request
from ..rows import BatchResult
from . import Capabilities, declare
from .gjk import bool_result, surface_request


def double_box_batch(a: Convex, b: Convex, req: Request, depth: int, tri_test: int):
    """(decided (N,) int64 codes, stats (N, 4)) for the request's tasks."""
    ha, hb = hierarchy_of(a, depth), hierarchy_of(b, depth)
    n = req.n
    decided = np.zeros(n, np.int64)
    stats = np.zeros((n, N_STATS), np.int64)
    if n == 0:
        return decided, stats
    stack_size = np.int64(2 * (ha.depth + hb.depth) + 2)
    args = (
        ha.topo, ha.outer, ha.inner, ha.tri_ids, a._tris, a.scale, req.pa,
        hb.topo, hb.outer, hb.inner, hb.tri_ids, b._tris, b.scale, req.pb,
        req.ia, req.ib, np.int64(tri_test), stack_size, decided, stats,
    )  # fmt: skip
    batch.launch(batch.plan(n, req.threads), kd.double_box_serial, kd.double_box_parallel, *args)
    return decided, stats


@dataclass(frozen=True)
class DoubleBox:
    """The double hierarchy of outer and inner boxes (seed 003) for polyhedron pairs.

    Parameters
    ----------
    depth : int
        Levels of splitting (the seed traverses "up to level 4").
    tri_test : {"guigue", "moller"}
        Face test at the leaves: "guigue" (default, exact: the answers equal
        GJK's exactly) or "moller" (the seed's Moller 1997, float64).

    Only the boolean (``intersects``) uses the hierarchy; ``contacts`` on
    convex pairs runs the descent on the ``.mesh`` surfaces.
    """

    depth: int = 4
    tri_test: str = "guigue"

    def __post_init__(self) -> None:
        if self.tri_test not in TRI_TESTS:
            raise ValueError(f"unknown tri_test {self.tri_test!r}; choose one of {sorted(TRI_TESTS)}")
        if isinstance(self.depth, bool) or not isinstance(self.depth, (int, np.integer)) or not 0 <= self.depth <= 12:
            raise ValueError(f"depth must be an int in [0, 12], got {self.depth!r}")

    def run(self, req: Request) -> BatchResult:
        a, b = req.a, req.b
        if not (isinstance(a, Convex) and isinstance(b, Convex)):
            names = f"{type(a).__name__}-{type(b).__name__}"
            raise UnsupportedOptionError(f"strategy 'double-box' answers polyhedron pairs (Convex, Box), got {names}")
        if req.mode != MODE_ANY:
            return surface_request(req, a.mesh, b.mesh)
        if req.n == 1 and req.mode == MODE_ANY:
            # PERF: one pose pair: the per-call kernel, no batch buffers
            ha, hb = hierarchy_of(a, self.depth), hierarchy_of(b, self.depth)
            stats1 = np.zeros((1, N_STATS), np.int64)
            code = kd.double_box_one(
                ha.topo, ha.outer, ha.inner, ha.tri_ids, a._tris, a.scale, req.pa[req.ia[0]],
                hb.topo, hb.outer, hb.inner, hb.tri_ids, b._tris, b.scale, req.pb[req.ib[0]],
                np.int64(TRI_TESTS[self.tri_test]), np.int64(2 * (ha.depth + hb.depth) + 2), stats1,
            )  # fmt: skip
            return bool_result(req, np.array([code > 0]))._replace(stats=stats1)
        decided, stats = double_box_batch(a, b, req, self.depth, TRI_TESTS[self.tri_test])
        res = bool_result(req, decided != kd.DECIDED_REJECT)
        return res._replace(stats=stats)


strategies.register("double-box", DoubleBox())
declare(
    DoubleBox,
    Capabilities(walks="solids", pairs=frozenset({"polyhedra"}), questions=frozenset({"intersects", "contacts", "query_stats"})),
)

__all__ = ["DoubleBox", "double_box_batch"]
