"""How the questions answer pairs with convex shapes: their handlers (registered in
``query.registry``) and per-call paths (``driver.FAST``); the GJK strategy itself is
``strategies/gjk.py``.

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
from dataclasses import replace

import numpy as np

from ..constants import MODE_ANY
from ..convex.shapes import Box, Capsule, Convex, ConvexShape, Cylinder, Sphere
from ..geometry.mesh import Mesh
from ..kernels.proximity import gjk as kg
from ..strategies import resolve
from . import containment, registry, scaling
from .distance import DISTANCE, distance_record, mesh_distance_rows, register_convex_mesh_fast
from .driver import prepare, register_fast
from .pair import CONTACTS, INTERSECTS, QUERY_STATS, bool_result, check_margin_strategy, margin_rows, mesh_bool_one
from .penetration import PENETRATION, penetration_rows
from .pose_form import in_form, per_pose, record
from .registry import Request
from .results import Distance
from .rows import BatchResult
from .strategies import capabilities, refuse, walk
from .strategies.gjk import gjk_batch, single_bool, surface_request

SHAPES = (Convex, Box, Sphere, Capsule, Cylinder)


def _convex_convex(req: Request) -> BatchResult:
    """Two convex shapes: a strategy that walks solids answers them ("gjk", "double-box"); one
    that walks surfaces hands them to the one it names (``Capabilities.on_solids``: "descent"
    runs GJK); the other surface strategies ("bfs", "oaabb") are refused by name."""
    caps = capabilities(req.strategy)
    if caps.walks == "solids":
        return walk(req)
    if caps.on_solids is not None:
        return walk(req, resolve(caps.on_solids))
    raise refuse(req, "walks triangle meshes and is not supported here "
                 "(convex pairs take 'gjk', the default, 'double-box' or a Descent record)")  # fmt: skip


def _with_containment(req: Request, res: BatchResult) -> BatchResult:
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


def _convex_mesh(req: Request) -> BatchResult:
    a = req.a.mesh if isinstance(req.a, ConvexShape) else req.a
    b = req.b.mesh if isinstance(req.b, ConvexShape) else req.b
    if "convex-mesh" not in capabilities(req.strategy).pairs:
        raise refuse(req, "is not supported here: a convex shape and a mesh run on the BVH engine "
                     "(strategy records: Descent)")  # fmt: skip
    return _with_containment(req, surface_request(req, a, b))


def _single_bool_mesh(a, b, Ta, Tb) -> int:
    """Per-call boolean of ``intersects`` on a convex shape and a mesh (either order): the
    mesh-mesh per-call kernel on the shape's surface (a bad pose is a negative code, named
    as the caller's), then containment as ``_with_containment`` (one vertex per piece of the
    mesh). PERF: the batch path's wrapper cost 25 us a call, ten times the kernels' own time."""
    convex_is_a = isinstance(a, ConvexShape)
    r = mesh_bool_one(a.mesh if convex_is_a else a, b if convex_is_a else b.mesh, Ta, Tb)
    if r != 0:
        return r
    shape, mesh = (a, b) if convex_is_a else (b, a)
    return int(containment.inside_one(shape, mesh, convex_is_a, Ta, Tb))


for _ta in SHAPES:
    for _tb in SHAPES:
        register_fast("intersects", _ta, _tb, single_bool)
    register_fast("intersects", _ta, Mesh, _single_bool_mesh)
    register_fast("intersects", Mesh, _ta, _single_bool_mesh)
register_convex_mesh_fast(SHAPES)
# -- intersects with a margin (issue 30 item 2): distance <= margin, as ``distance`` measures it
def _convex_convex_margin(req: Request) -> BatchResult:
    """``intersects`` on two convex shapes: with a margin, GJK's distance at most the margin
    (what ``distance`` reports for the pair); else ``_convex_convex``."""
    m = req.options["margin"]
    if not m > 0.0:
        return _convex_convex(req)
    check_margin_strategy(req, convex=True)
    _, dist, _, _ = gjk_batch(req.a, req.b, req, distance=True)
    return bool_result(req, dist <= m)


def _convex_mesh_margin(req: Request) -> BatchResult:
    """``intersects`` on a convex shape and a mesh: with a margin, the threshold descent on the
    shape's surface and the mesh, and (where it finds nothing) the solid holding part of the
    mesh, as ``distance`` measures the pair (``_distance_with_mesh``); else ``_convex_mesh``."""
    m = req.options["margin"]
    if not m > 0.0:
        return _convex_mesh(req)
    check_margin_strategy(req)
    convex_is_a = isinstance(req.a, ConvexShape)
    shape, mesh = (req.a, req.b) if convex_is_a else (req.b, req.a)
    hit = margin_rows(req, req.a.mesh if convex_is_a else req.a, req.b if convex_is_a else req.b.mesh, m)
    todo = np.flatnonzero(~hit)
    if todo.size:
        hit |= containment.inside_tasks(shape, mesh, convex_is_a, req, todo)
    return bool_result(req, hit)


# strategy: gjk, double-box or Descent records (convex-mesh: Descent only)
registry.register("intersects", ConvexShape, ConvexShape, _convex_convex_margin, honours=INTERSECTS.options)
registry.register("intersects", ConvexShape, Mesh, _convex_mesh_margin, honours=INTERSECTS.options)
registry.register("intersects", Mesh, ConvexShape, _convex_mesh_margin, honours=INTERSECTS.options)
for _spec in (CONTACTS, QUERY_STATS):
    registry.register(_spec.name, ConvexShape, ConvexShape, _convex_convex, honours=_spec.options)
    registry.register(_spec.name, ConvexShape, Mesh, _convex_mesh, honours=_spec.options)
    registry.register(_spec.name, Mesh, ConvexShape, _convex_mesh, honours=_spec.options)


def gjk_distance(a: ConvexShape, b: ConvexShape, pose_a=None, pose_b=None):
    """Distance between two convex shapes by GJK, with closest points in the world frame.

    Returns ``(distance, point_a, point_b)``: floats (N,) and (N, 3) arrays for
    a batch, a float and (3,) arrays for one pose pair. Overlapping shapes
    have distance 0. (The public ``collisionkit.distance`` query builds on the
    kernel ``kernels.proximity.gjk.distance_convex_convex``.)
    """
    req = prepare(a, b, pose_a, pose_b, MODE_ANY, -1, "descent", None)
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
        node_pairs=np.ascontiguousarray(stats[:, 0]), tri_tests=np.zeros(req.n, np.int64),
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
    r.__dict__.update(distance=float(d), point_a=p[0], point_b=p[1], face_a=-1, face_b=-1, node_pairs=0, tri_tests=0)
    return r


_new = object.__new__


def _distance_with_mesh(req: Request):
    """``distance`` between a convex solid and a mesh: the mesh distance to the
    convex shape's triangulated surface, 0 where the solid holds part of the mesh
    (``intersects``' solid semantics; ``query.containment``)."""
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
    a, b = req.a, req.b
    ma = a.mesh if isinstance(a, ConvexShape) else a
    mb = b.mesh if isinstance(b, ConvexShape) else b
    p = penetration_rows(req._replace(a=ma, b=mb, batched=True))  # batch form
    if any(isinstance(s, (Sphere, Capsule, Cylinder)) for s in (a, b)):
        p = replace(p, exact=np.zeros_like(p.exact))
    return in_form(p, req.batched)


_DISTANCE = DISTANCE.options
registry.register("distance", ConvexShape, ConvexShape, _distance_convex_convex, honours=_DISTANCE)
registry.register("distance", ConvexShape, Mesh, _distance_with_mesh, honours=_DISTANCE)
registry.register("distance", Mesh, ConvexShape, _distance_with_mesh, honours=_DISTANCE)
_PENETRATION = PENETRATION.options  # the mesh methods on the triangulations
registry.register("penetration", ConvexShape, ConvexShape, _penetration_convex, honours=_PENETRATION)
registry.register("penetration", ConvexShape, Mesh, _penetration_convex, honours=_PENETRATION)
registry.register("penetration", Mesh, ConvexShape, _penetration_convex, honours=_PENETRATION)

__all__ = ["gjk_distance"]
