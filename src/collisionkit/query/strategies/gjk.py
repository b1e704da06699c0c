"""The ``"gjk"`` strategy: GJK on convex solids (``kernels/proximity/gjk.py``).

The default for two convex shapes (``"descent"`` hands them over: its ``on_solids``). The
boolean is GJK's, exact for polyhedron pairs (the exact solid test decides what the
float GJK cannot certify); contacts and the "first"/"all" counters come from the
shapes' surfaces ``.mesh`` by the descent (``surface_request``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import strategies
from ...constants import MODE_ANY
from ...convex.shapes import ConvexShape
from ...errors import UnsupportedOptionError
from ...geometry.mesh import Mesh
from ...kernels.core.layout import N_STATS, STAT_BV_TESTS, STAT_TRI_TESTS
from ...kernels.proximity import gjk as kg
from ...strategies import Descent
from .. import batch, scaling
from ..registry import Request
from ..rows import BatchResult
from . import Capabilities, declare, descent


def surface_request(req: Request, ma: Mesh, mb: Mesh) -> BatchResult:
    """Answer the request on two triangle meshes (the shapes' surfaces) by the descent: with the
    caller's ``Descent`` record when it gave one (its triangle test), else the default."""
    strat = req.strategy if type(req.strategy) is Descent else strategies.resolve("descent")
    return descent.run(req._replace(a=ma, b=mb, strategy=strat))


def gjk_batch(a: ConvexShape, b: ConvexShape, req: Request, distance: bool = False):
    """(hit (N,) bool, dist (N,), points (N, 6) in a's frame, stats (N, 4)) for the request's tasks."""
    n = req.n
    hit = np.zeros(n, np.bool_)
    dist = np.zeros(n)
    points = np.zeros((n, 6))
    stats = np.zeros((n, 4), np.int64)
    if n == 0:
        return hit, dist, points, stats
    # tasks outside the band of scales the kernel takes as given: prescaled (query/scaling.py)
    for m, tasks in scaling.groups(scaling.task_shifts(req, a.scale, b.scale), n):
        if tasks is None:
            _gjk_rows(_scaled_core(a, 0), _scaled_core(b, 0), req, distance, hit, dist, points, stats)
            continue
        scaling.check_range("distance", (a.scale, b.scale), m)
        k = tasks.shape[0]
        rows = (np.zeros(k, np.bool_), np.zeros(k), np.zeros((k, 6)), np.zeros((k, 4), np.int64))
        _gjk_rows(_scaled_core(a, m), _scaled_core(b, m), scaling.sub_request(req, tasks, m), distance, *rows)
        hit[tasks], dist[tasks], points[tasks], stats[tasks] = (
            rows[0],
            np.ldexp(rows[1], m),
            np.ldexp(rows[2], m),
            rows[3],
        )
    return hit, dist, points, stats


def _scaled_core(s: ConvexShape, m: int) -> tuple:
    """``(kind, core, params, triangles, scale)`` of the shape with every length times 2**-m."""
    kind, core, params, tris, scale = s._kernel_args()
    if m == 0:
        return kind, core, params, tris, scale
    params = params.copy()
    params[:3] = np.ldexp(params[:3], -m)  # inflation radius, cylinder radius, half height
    return kind, np.ldexp(core, -m), params, np.ldexp(tris, -m), math.ldexp(scale, -m)


def _gjk_rows(ka: tuple, kb: tuple, req: Request, distance: bool, hit, dist, points, stats) -> None:
    """One GJK kernel launch over the request's tasks (rows written in place)."""
    args = (*ka, req.pa, *kb, req.pb, req.ia, req.ib, bool(distance), hit, dist, points, stats)
    # GJK tasks cost alike (a few support-point rounds): one chunk per thread
    batch.launch(batch.plan(req.n, req.threads, uniform=True), kg.gjk_batch_serial, kg.gjk_batch_parallel, *args)


def bool_result(req: Request, hit, stats=None) -> BatchResult:
    n = req.n
    full = np.zeros((n, N_STATS), np.int64)
    if stats is not None and n:
        full[:, STAT_BV_TESTS] = stats[:, kg.GJK_STAT_ITERS]
        full[:, STAT_TRI_TESTS] = stats[:, kg.GJK_STAT_TRI_TESTS]
    counts = np.asarray(hit, np.int64)
    return BatchResult(n, req.batched, counts, full, np.empty(0, np.int64), np.full(n, -1, np.int64), 1)


@dataclass(frozen=True)
class GJK:
    """GJK boolean for convex-convex pairs (the default for them).

    Polyhedron pairs are exact: the float GJK decides only answers it can
    certify, anything within ~1e-12 relative of touching is decided by the
    exact solid test (``kernels/proximity/gjk.py``). Contacts (triangle pairs) come from
    the shapes' ``.mesh`` by the descent.
    """

    def run(self, req: Request) -> BatchResult:
        a, b = req.a, req.b
        if not (isinstance(a, ConvexShape) and isinstance(b, ConvexShape)):
            raise UnsupportedOptionError(
                f"strategy 'gjk' answers convex-convex pairs, got {type(a).__name__}-{type(b).__name__}"
            )
        if req.mode != MODE_ANY:
            return surface_request(req, a.mesh, b.mesh)
        if req.n == 1:
            # PERF: one pose pair: the per-call kernel (fewer arguments to dispatch, no batch buffers)
            ka, kb = a._kernel_args(), b._kernel_args()
            stats = np.zeros((1, 4), np.int64)
            hit1 = kg.gjk_intersect_one(*ka, req.pa[req.ia[0]], *kb, req.pb[req.ib[0]], stats[0])
            return bool_result(req, np.array([hit1]), stats)
        hit, _, _, stats = gjk_batch(a, b, req)
        return bool_result(req, hit, stats)


# the per-call kernel without numba's per-call type dispatch (batch.Pinned): shape kernel
# arguments have one type per kernel for every shape kind (tests/test_dispatch.py), poses
# are checked by query.driver.single_pose
_GJK_CALL = batch.Pinned(kg.gjk_intersect_call)



GJK_DEFAULT = GJK()
strategies.register("gjk", GJK_DEFAULT)
declare(GJK, Capabilities(walks="solids", pairs=frozenset({"convex"}), questions=frozenset({"intersects", "contacts", "query_stats"})))


def single_bool(a: ConvexShape, b: ConvexShape, Ta, Tb) -> int:
    """Per-call boolean of ``intersects`` on two convex shapes: the kernel of ``GJK.run``."""
    return _GJK_CALL.call(*a._kernel_args(), Ta, *b._kernel_args(), Tb)


__all__ = ["GJK", "GJK_DEFAULT", "bool_result", "gjk_batch", "single_bool", "surface_request"]
