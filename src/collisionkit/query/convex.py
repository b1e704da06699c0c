"""How the public queries answer pairs with convex shapes (registered in ``query.registry``).

* convex-convex ``intersects`` (mode "any"): GJK (``kernels/proximity/gjk.py``) unless
  the strategy is ``"double-box"``; exact for polyhedron pairs, one solid
  inside the other included. ``query_stats`` counts GJK rounds as ``bv_tests``
  and the exact fallback's triangle tests as ``tri_tests``.
* convex-convex ``contacts`` and ``query_stats(mode="first"/"all")``: the
  intersecting triangle pairs of the two ``.mesh`` surfaces by the mesh BVH
  engine (face ids index ``shape.mesh.faces``). A solid inside the other has
  no triangle pair: ``contacts`` is empty while ``intersects`` is True.
* convex-mesh and mesh-convex: the convex shape's ``.mesh`` against the mesh
  by the BVH engine; for ``intersects`` a pose without a triangle pair is
  still a collision when a mesh vertex lies in the convex solid (exact
  orientation predicates): the mesh is a surface, the convex shape a solid, so
  a mesh triangle wholly inside the solid intersects it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import strategies
from ..constants import MODE_ANY
from ..convex.shapes import Box, Capsule, Convex, ConvexShape, Cylinder, Sphere
from ..errors import UnsupportedOptionError, UnsupportedPairError
from ..geometry.mesh import Mesh
from ..kernels.core.layout import N_STATS, STAT_BV_TESTS, STAT_TRI_TESTS
from ..kernels.proximity import gjk as kg
from ..strategies import BVH
from . import batch, containment, engine, registry, scaling
from .pair import intersects
from .pose_form import in_form, per_pose, record
from .registry import Request
from .results import Distance


def _mesh_request(req: Request, ma: Mesh, mb: Mesh) -> engine.BatchResult:
    """Answer the request on two triangle meshes with the BVH engine."""
    strat = req.strategy if isinstance(req.strategy, BVH) else strategies.resolve("bvh")
    return engine.run(req._replace(a=ma, b=mb, strategy=strat))


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


def _bool_result(req: Request, hit, stats=None) -> engine.BatchResult:
    n = req.n
    full = np.zeros((n, N_STATS), np.int64)
    if stats is not None and n:
        full[:, STAT_BV_TESTS] = stats[:, kg.GJK_STAT_ITERS]
        full[:, STAT_TRI_TESTS] = stats[:, kg.GJK_STAT_TRI_TESTS]
    counts = np.asarray(hit, np.int64)
    return engine.BatchResult(n, req.batched, counts, full, np.empty(0, np.int64), np.full(n, -1, np.int64), 1)


@dataclass(frozen=True)
class GJK:
    """GJK boolean for convex-convex pairs (the default for them).

    Polyhedron pairs are exact: the float GJK decides only answers it can
    certify, anything within ~1e-12 relative of touching is decided by the
    exact solid test (``kernels/proximity/gjk.py``). Contacts (triangle pairs) come from
    the shapes' ``.mesh`` by the BVH engine.
    """

    def run(self, req: Request) -> engine.BatchResult:
        a, b = req.a, req.b
        if not (isinstance(a, ConvexShape) and isinstance(b, ConvexShape)):
            raise UnsupportedPairError(
                f"strategy 'gjk' answers convex-convex pairs, got {type(a).__name__}-{type(b).__name__}"
            )
        if req.mode != MODE_ANY:
            return _mesh_request(req, a.mesh, b.mesh)
        if req.n == 1:
            # PERF: one pose pair: the per-call kernel (fewer arguments to dispatch, no batch buffers)
            ka, kb = a._kernel_args(), b._kernel_args()
            stats = np.zeros((1, 4), np.int64)
            hit1 = kg.gjk_intersect_one(*ka, req.pa[req.ia[0]], *kb, req.pb[req.ib[0]], stats[0])
            return _bool_result(req, np.array([hit1]), stats)
        hit, _, _, stats = gjk_batch(a, b, req)
        return _bool_result(req, hit, stats)


def _convex_convex(req: Request) -> engine.BatchResult:
    """Two convex shapes: GJK for "bvh" (the default) and for "gjk", the double hierarchy for
    "double-box"; the mesh strategies ("bfs", "oaabb") are refused by name."""
    from .double_box import DoubleBox  # NOTE: double_box imports this module's helpers at call time

    strat = req.strategy
    if isinstance(strat, BVH):
        strat = _GJK
    if not isinstance(strat, (GJK, DoubleBox)):
        raise UnsupportedOptionError(
            f"{req.query} on {type(req.a).__name__} and {type(req.b).__name__}: option "
            f"strategy={req.options.get('strategy')!r} walks triangle meshes and is not supported here "
            "(convex pairs take 'gjk', the default, 'double-box' or a BVH record)"
        )
    return strat.run(req)


def _with_containment(req: Request, res: engine.BatchResult) -> engine.BatchResult:
    """Mark poses without a triangle pair as colliding where the convex solid holds part of the mesh."""
    if req.mode != MODE_ANY or req.n == 0:
        return res
    todo = np.flatnonzero(res.counts == 0)
    if todo.size == 0:
        return res
    convex_is_a = isinstance(req.a, ConvexShape)
    shape, mesh = (req.a, req.b) if convex_is_a else (req.b, req.a)
    counts = res.counts.copy()
    counts[containment.inside_tasks(shape, mesh, convex_is_a, req, todo)] = 1
    return res._replace(counts=counts)


def _convex_mesh(req: Request) -> engine.BatchResult:
    a = req.a.mesh if isinstance(req.a, ConvexShape) else req.a
    b = req.b.mesh if isinstance(req.b, ConvexShape) else req.b
    if not isinstance(req.strategy, BVH):
        raise UnsupportedOptionError(
            f"{req.query} on {type(req.a).__name__} and {type(req.b).__name__} runs on the BVH engine: option "
            f"strategy={req.options.get('strategy')!r} is not supported here (strategy records: BVH)"
        )
    return _with_containment(req, _mesh_request(req, a, b))


def _single_bool_mesh(a, b, Ta, Tb) -> int:
    """Per-call boolean of ``intersects`` on a convex shape and a mesh (either order): the
    mesh-mesh per-call path on the shape's surface (a bad pose raises there, named as the
    caller's), then containment as ``_with_containment`` (one vertex per piece of the mesh).
    PERF: the batch path's wrapper cost 25 us a call, ten times the kernels' own time."""
    convex_is_a = isinstance(a, ConvexShape)
    if intersects(a.mesh if convex_is_a else a, b if convex_is_a else b.mesh, Ta, Tb):
        return 1
    shape, mesh = (a, b) if convex_is_a else (b, a)
    return int(containment.inside_one(shape, mesh, convex_is_a, Ta, Tb))


def _single_bool(a: ConvexShape, b: ConvexShape, Ta, Tb) -> int:
    """Per-call boolean of ``intersects`` (query.registry.SINGLE_BOOL): the same kernel as GJK.run."""
    return _GJK_CALL.call(*a._kernel_args(), Ta, *b._kernel_args(), Tb)


# the per-call kernel without numba's per-call type dispatch (batch.Pinned): shape kernel
# arguments have one type per kernel for every shape kind (tests/test_dispatch.py), poses
# are checked by query.pair._single_pose
_GJK_CALL = batch.Pinned(kg.gjk_intersect_call)


_GJK = GJK()
strategies.register("gjk", _GJK)
for _ta in (Convex, Box, Sphere, Capsule, Cylinder):
    for _tb in (Convex, Box, Sphere, Capsule, Cylinder):
        registry.register_single_bool(_ta, _tb, _single_bool)
    registry.register_single_bool(_ta, Mesh, _single_bool_mesh)
    registry.register_single_bool(Mesh, _ta, _single_bool_mesh)
for _query in ("intersects", "contacts", "query_stats"):
    _all = registry.QUERY_OPTIONS[_query]  # strategy: gjk, double-box or BVH records (convex-mesh: BVH only)
    registry.register(_query, ConvexShape, ConvexShape, _convex_convex, honours=_all)
    registry.register(_query, ConvexShape, Mesh, _convex_mesh, honours=_all)
    registry.register(_query, Mesh, ConvexShape, _convex_mesh, honours=_all)


def gjk_distance(a: ConvexShape, b: ConvexShape, pose_a=None, pose_b=None):
    """Distance between two convex shapes by GJK, with closest points in the world frame.

    Returns ``(distance, point_a, point_b)``: floats (N,) and (N, 3) arrays for
    a batch, a float and (3,) arrays for one pose pair. Overlapping shapes
    have distance 0. (The public ``collisionkit.distance`` query builds on the
    kernel ``kernels.proximity.gjk.distance_convex_convex``.)
    """
    req = engine.prepare(a, b, pose_a, pose_b, MODE_ANY, -1, "bvh", None)
    _, dist, pts, _ = gjk_batch(a, b, req, distance=True)
    Ta = req.pa[req.ia]
    pa = np.einsum("nij,nj->ni", Ta[:, :3, :3], pts[:, 0:3]) + Ta[:, :3, 3]
    pb = np.einsum("nij,nj->ni", Ta[:, :3, :3], pts[:, 3:6]) + Ta[:, :3, 3]
    return per_pose(dist, req.batched), per_pose(pa, req.batched), per_pose(pb, req.batched)


# -- distance and penetration for convex shapes (registered with the issue-7 queries) ------
def _distance_convex_convex(req: Request):
    """``collisionkit.distance`` on two convex shapes: GJK with closest points.

    Faces are -1 (smooth primitives have none; for polyhedra the closest
    feature may be an edge or vertex). Distances not below ``upper`` are inf,
    as for meshes.
    """
    upper = req.options["upper_bound"]
    if req.n == 1 and not req.batched:
        one = _distance_convex_one(req.a, req.b, req.pa[req.ia[0]], req.pb[req.ib[0]], upper)
        if one is not None:
            return one
    _, dist, pts, stats = gjk_batch(req.a, req.b, req, distance=True)
    Ta = req.pa[req.ia]
    pa, pb = _world_points(Ta, pts[:, 0:3]), _world_points(Ta, pts[:, 3:6])
    far = dist >= upper
    dist = np.where(far, np.inf, dist)
    pa[far] = np.nan
    pb[far] = np.nan
    faces = np.full(req.n, -1, np.int64)
    return record(
        Distance, req.batched, distance=dist, point_a=pa, point_b=pb, face_a=faces, face_b=faces.copy(),
        node_pairs=np.ascontiguousarray(stats[:, 0]), tri_pairs=np.zeros(req.n, np.int64),
    )  # fmt: skip


def _world_points(T: np.ndarray, local: np.ndarray) -> np.ndarray:
    """(n, 3) points of frames T (n, 4, 4) given in those frames (n, 3): one expression for
    the batch rows and the single pose, so that both agree to the bit."""
    return np.matmul(T[:, :3, :3], local[:, :, None])[:, :, 0] + T[:, :3, 3]


def _distance_convex_one(a: ConvexShape, b: ConvexShape, Ta: np.ndarray, Tb: np.ndarray, upper: float):
    """One pose pair of ``_distance_convex_convex``: the GJK kernel called once, the rows'
    arithmetic (PERF: 52 -> 26 us a call, Box-Sphere); None outside the band of scales the kernel
    takes as given (the batch path prescales)."""
    ka, core_a, params_a, _, scale_a = a._kernel_args()
    kb, core_b, params_b, _, scale_b = b._kernel_args()
    reach = max(scale_a + scale_b, abs(Ta[0, 3]), abs(Ta[1, 3]), abs(Ta[2, 3]), abs(Tb[0, 3]), abs(Tb[1, 3]), abs(Tb[2, 3]))
    if scaling.shift_for(float(reach)) != 0:
        return None
    out = np.empty(8)
    d = kg.distance_convex_convex(ka, core_a, params_a, scale_a, Ta, kb, core_b, params_b, scale_b, Tb,
                                  np.empty((4, 11)), out)  # fmt: skip
    p = _world_points(np.stack((Ta, Ta)), out[2:8].reshape(2, 3))
    if d >= upper:
        d = math.inf
        p[:] = np.nan
    p.flags.writeable = False
    # the frozen dataclass's __init__ costs more than the kernel here: the single-pose record
    # built by hand, every field set (tests/test_api_shapes.py checks the forms)
    r = _new(Distance)
    r.__dict__.update(distance=float(d), point_a=p[0], point_b=p[1], face_a=-1, face_b=-1, node_pairs=0, tri_pairs=0)
    return r


_new = object.__new__


def _distance_with_mesh(req: Request):
    """``distance`` between a convex solid and a mesh: the mesh distance to the
    convex shape's triangulated surface, 0 where the solid holds part of the mesh
    (``intersects``' solid semantics; ``query.containment``)."""
    from .distance import distance_record, mesh_distance_rows

    convex_is_a = isinstance(req.a, ConvexShape)
    shape, mesh = (req.a, req.b) if convex_is_a else (req.b, req.a)
    surfaces = req._replace(a=req.a.mesh if convex_is_a else req.a, b=req.b if convex_is_a else req.b.mesh)
    out, stats = mesh_distance_rows(surfaces, req.options["upper_bound"])
    todo = np.flatnonzero(out[:, 0] > 0.0)  # 0: a crossing triangle pair (exact)
    if todo.size:
        out[containment.inside_tasks(shape, mesh, convex_is_a, req, todo), 0] = 0.0
    return distance_record(out, stats, req.batched)


def _penetration_convex(req: Request):
    """``penetration`` of convex shapes (with each other or with a mesh): the mesh
    methods on their triangulations; exact only when both are polyhedra (a smooth primitive is
    answered for its tessellation, so ``exact`` is False)."""
    from dataclasses import replace

    from .penetration import penetration

    a, b = req.a, req.b
    ma = a.mesh if isinstance(a, ConvexShape) else a
    mb = b.mesh if isinstance(b, ConvexShape) else b
    p = penetration(ma, mb, req.pa[req.ia], req.pb[req.ib], **req.options)  # batch form
    if any(isinstance(s, (Sphere, Capsule, Cylinder)) for s in (a, b)):
        p = replace(p, exact=np.zeros_like(p.exact))
    return in_form(p, req.batched)


_DISTANCE = registry.QUERY_OPTIONS["distance"]
registry.register("distance", ConvexShape, ConvexShape, _distance_convex_convex, honours=_DISTANCE)
registry.register("distance", ConvexShape, Mesh, _distance_with_mesh, honours=_DISTANCE)
registry.register("distance", Mesh, ConvexShape, _distance_with_mesh, honours=_DISTANCE)
_PENETRATION = registry.QUERY_OPTIONS["penetration"]  # the mesh methods on the triangulations
registry.register("penetration", ConvexShape, ConvexShape, _penetration_convex, honours=_PENETRATION)
registry.register("penetration", ConvexShape, Mesh, _penetration_convex, honours=_PENETRATION)
registry.register("penetration", Mesh, ConvexShape, _penetration_convex, honours=_PENETRATION)
