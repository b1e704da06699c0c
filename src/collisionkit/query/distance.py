"""Minimum distance between two shapes: ``collisionkit.distance``.

Mesh-mesh pairs run the pruned BVH descent of ``kernels.proximity.distance`` with
exact triangle intersection tests (distance 0 exactly when ``intersects``
says True) and closest points of disjoint triangles from
``kernels.triangle.tri_distance``. Other shape pairs (convex shapes, primitives) are
answered by the handlers registered for them in ``query.registry`` (the
convex-shape module registers GJK there); without one, an ``UnsupportedPairError``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from ..bvh import pair_trees
from ..convex.shapes import ConvexShape
from ..geometry.mesh import Mesh
from ..geometry.pose import PoseLike
from ..kernels.core.scaling import OUT_OF_BAND
from ..kernels.proximity import distance as kd
from . import batch, registry, scaling
from .batch import thread_count
from .containment import inside_one
from .driver import FAST, ask, raise_pose_code, register_fast, single_poses
from .pose_form import record
from .registry import Request
from .results import Distance, single
from .shapes import Shape
from .spec import THREADS, Option, Spec, define

#: the per-call kernel without numba's per-call type dispatch (batch.Pinned): its arguments
#: are library-built tree arrays, poses checked by driver.single_pose, Python floats and ints
_DISTANCE_ONE = batch.Pinned(kd.distance_one)


def _check_upper(upper_bound: float) -> float:
    try:
        u = float(upper_bound)
    except (TypeError, ValueError):
        raise ValueError(f"upper_bound must be a number, got {upper_bound!r}") from None
    if not u > 0.0:  # also rejects NaN
        raise ValueError(f"upper_bound must be > 0 (inf for none), got {upper_bound!r}")
    return u


DISTANCE = define(Spec(
    "distance",
    {
        "upper_bound": Option(math.inf, _check_upper, "only distances below it are searched for"),
        "threads": THREADS,
    },
    result=Distance, cli="distance",
))  # fmt: skip


def distance(
    a: Shape,
    b: Shape,
    pose_a: PoseLike = None,
    pose_b: PoseLike = None,
    *,
    upper_bound: float = math.inf,
    threads: int | None = None,
) -> Distance:
    """Minimum distance between ``a`` at ``pose_a`` and ``b`` at ``pose_b``.

    Parameters
    ----------
    a, b : Mesh or convex shape
        (Other shape kinds when a handler is registered for the pair; the type names
        the built-in kinds, ``collisionkit.query.shapes.Shape``.)
    pose_a, pose_b : array_like (4, 4) or (N, 4, 4), optional
        World-from-object rigid transforms; None is the identity; broadcast
        like ``intersects``.
    upper_bound : float, optional
        Only distances below it are searched for (faster when far): a pose
        pair whose distance is not below it reports ``inf``.
    threads : int, optional
        Threads for a batch (default: all cores); 1 runs the serial path.

    Returns
    -------
    Distance
        Per pose: Python scalars and (3,) points for two (4, 4) poses, (N,)
        and (N, 3) arrays for a batch. ``distance`` is 0.0 exactly when the meshes intersect (same exact
        test as ``intersects``), else the float64 distance between the
        reported closest points ``point_a``, ``point_b`` (world frame) of
        faces ``face_a``, ``face_b``.

    Examples
    --------
    >>> import collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> float(ck.distance(box, box, None, ck.translation([3, 0, 0])).distance)
    2.0
    """
    upper = _check_upper(upper_bound)
    fast = FAST.get(("distance", type(a), type(b)))
    if fast is not None:  # PERF: one pose pair of shape kinds with a per-call path
        if threads is not None:
            thread_count(threads)
        poses = single_poses(pose_a, pose_b)
        if poses is not None:
            d = fast(a, b, poses[0], poses[1], upper)
            if d is not None:
                return d
    return ask(DISTANCE, a, b, pose_a, pose_b, upper_bound=upper, threads=threads)


def _fast_convex_mesh(a: Any, b: Any, Ta: np.ndarray, Tb: np.ndarray, upper: float) -> Distance:
    """One pose pair of a convex shape and a mesh (either order): the mesh distance to the
    shape's surface, 0 where the solid holds part of the mesh, as the registered handler
    (``query.convex._distance_with_mesh``)."""
    convex_is_a = isinstance(a, ConvexShape)
    d = _distance_one(a.mesh if convex_is_a else a, b if convex_is_a else b.mesh, Ta, Tb, upper)
    if d.distance > 0.0:
        shape, mesh = (a, b) if convex_is_a else (b, a)
        if inside_one(shape, mesh, convex_is_a, Ta, Tb):
            d = replace(d, distance=0.0)
    return d


def _distance_meshes(req: Request) -> Distance:
    """The mesh-mesh handler: every pose of the request in one kernel call."""
    out, stats = mesh_distance_rows(req, req.options["upper_bound"])
    return distance_record(out, stats, req.batched)


def _distance_one(a: Mesh, b: Mesh, Ta: np.ndarray, Tb: np.ndarray, upper: float) -> Distance:
    """The per-call path: one pose pair, one compiled call (PERF: ~3x less wrapper time)."""
    ta, tb = pair_trees(a, b)
    x, y = ta.arrays, tb.arrays
    out = np.empty((1, 12))
    stats = np.zeros((1, kd.N_DSTATS), np.int64)
    m = 0
    call = _DISTANCE_ONE.call
    for _ in range(2):
        r = call(
            x.topo, x.bv, x.tris, x.face_ids, x.meta, Ta,
            y.topo, y.bv, y.tris, y.face_ids, y.meta, Tb,
            float(x.scale[0] + y.scale[0]), ta.bv_code, scaling.squared(upper), out, stats,
        )  # fmt: skip
        if r != OUT_OF_BAND:
            break
        # outside the scales the kernel takes as given: again, prescaled (query/scaling.py),
        # through the dispatcher (the prescaled arrays are typed on the call)
        m, x, y, (Ta, Tb) = scaling.prescale_pair("distance", a, ta, b, tb, Ta, Tb)
        upper = math.ldexp(upper, -m)
        call = kd.distance_one
    scaling.unscale_distance_rows(out, m)
    if r < 0:
        raise_pose_code(r)
    # PERF: the single-pose record built directly (what record() makes of row 0), its row
    # read as one list and its points as views of the read-only row (issue 15 item 6: -2 us)
    row = out[0].tolist()
    node_pairs, tri_tests = stats[0].tolist()
    out.flags.writeable = False
    return single(
        Distance, distance=row[0], point_a=out[0, 1:4], point_b=out[0, 4:7], face_a=int(row[7]), face_b=int(row[8]),
        node_pairs=node_pairs, tri_tests=tri_tests,
    )  # fmt: skip


def mesh_distance_rows(req: Request, upper: float, seeds: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Run the distance kernel for a prepared mesh-mesh request.

    Returns ``out`` (N, 12): distance, point_a (3), point_b (3) in the world,
    face_a, face_b, leaf-order triangle a, b (for warm starts), a squared lower bound, and ``stats``
    (N, 2): node pairs, triangle pairs.
    """
    a, b = req.a, req.b
    ta, tb = pair_trees(a, b)
    n = req.n
    out = np.empty((n, 12))
    stats = np.zeros((n, kd.N_DSTATS), np.int64)
    if n == 0:
        return out, stats
    if seeds is None:
        seeds = np.full((n, 2), -1, np.int64)
    shifts = scaling.task_shifts(req, float(ta.arrays.scale[0]), float(tb.arrays.scale[0]))
    if shifts is None:
        _run_rows(req, ta.arrays, tb.arrays, ta.options.bv_code, upper, seeds, out, stats)
        return out, stats
    # tasks outside the band of scales the kernel takes as given: prescaled per exponent
    for m, tasks in scaling.groups(shifts, n):
        scaling.check_range("distance", (float(ta.arrays.scale[0]), float(tb.arrays.scale[0])), m)
        sub = scaling.sub_request(req, tasks, m)
        x, y = scaling.scaled_tree(a, ta, m), scaling.scaled_tree(b, tb, m)
        o = np.empty((sub.n, 12))
        st = np.zeros((sub.n, kd.N_DSTATS), np.int64)
        _run_rows(sub, x, y, ta.options.bv_code, math.ldexp(upper, -m), np.ascontiguousarray(seeds[tasks]), o, st)
        scaling.unscale_distance_rows(o, m)
        out[tasks], stats[tasks] = o, st
    return out, stats


def _run_rows(req, x, y, bv_code, upper, seeds, out, stats) -> None:
    """One kernel launch over the request's tasks (arrays as the kernels take them)."""
    n = req.n
    scale = float(x.scale[0] + y.scale[0])
    upper2 = scaling.squared(upper)
    args = (
        x.topo, x.bv, x.tris, x.face_ids, x.meta, req.pa,
        y.topo, y.bv, y.tris, y.face_ids, y.meta, req.pb,
        req.ia, req.ib, scale, bv_code, upper2, seeds, out, stats,
    )  # fmt: skip
    # one chunk per thread: numba splits a prange evenly over the threads anyway, and each
    # chunk allocates its descent stack (PERF: env-rob, 100 poses: 12.2 -> 10.4 us a pose)
    batch.launch(batch.plan(n, req.threads, uniform=True), kd.distance_serial, kd.distance_parallel, *args)


def distance_record(out: np.ndarray, stats: np.ndarray, batched: bool) -> Distance:
    """The Distance record of kernel rows ``out`` (N, 12) and ``stats`` (N, 2), in the caller's form."""
    col = np.ascontiguousarray if batched else np.asarray  # PERF: one pose: views, row 0 is taken
    faces = out[:, 7:9].astype(np.int64).T
    return record(
        Distance, batched,
        distance=col(out[:, 0]),
        point_a=col(out[:, 1:4]),
        point_b=col(out[:, 4:7]),
        face_a=col(faces[0]),
        face_b=col(faces[1]),
        node_pairs=col(stats[:, 0]),
        tri_tests=col(stats[:, 1]),
    )  # fmt: skip


registry.register("distance", Mesh, Mesh, _distance_meshes, honours=DISTANCE.options)
register_fast("distance", Mesh, Mesh, _distance_one)  # two meshes: the per-call kernel itself


def register_convex_mesh_fast(shape_types: tuple[type, ...]) -> None:
    """The per-call path of ``distance`` for each convex shape type against a mesh (either order)."""
    for t in shape_types:
        register_fast("distance", t, Mesh, _fast_convex_mesh)
        register_fast("distance", Mesh, t, _fast_convex_mesh)


__all__ = ["DISTANCE", "distance", "distance_record", "mesh_distance_rows"]
