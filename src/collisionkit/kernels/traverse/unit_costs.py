"""Micro-benchmarks of the cost model's unit costs and the point-to-triangle distances
of the tightness metric (seed 001 / 004: t = n_v c_v + n_p c_p + n_u c_u; tau).

The loops call the very node-pair tests the traversal inlines
(``bvh_traverse._aabb_overlap`` / ``_obb_overlap``, ``bv_dispatch.overlap_other``)
and the exact triangle test, so the unit costs are those of the real code
(without the stack bookkeeping of the descent, which the fitted model leaves to
its residual).
"""

from __future__ import annotations

import numpy as np

from ...constants import BV_AABB, BV_OBB
from ..core.jit import njit, njit_internal
from ..triangle.tri_tri import tri_tri_intersect_tuples
from ..volumes.dispatch import overlap_other
from .descent import _aabb_overlap, _obb_overlap


@njit(cache=True, nogil=True)
def node_tests_loop(kind, bv_a, bv_b, ia, ib, R, t, slack, reps):
    """Run the node-pair test of ``kind`` on pairs (ia[k], ib[k]) ``reps`` times;
    returns (hits, updates) so the work cannot be optimised away."""
    AbsR = (abs(R[0]), abs(R[1]), abs(R[2]), abs(R[3]), abs(R[4]), abs(R[5]), abs(R[6]), abs(R[7]), abs(R[8]))
    hits = 0
    upd = 0
    for _ in range(reps):
        for k in range(ia.shape[0]):
            if kind == BV_AABB:
                h = _aabb_overlap(R, AbsR, t, bv_a, ia[k], bv_b, ib[k], slack)
            elif kind == BV_OBB:
                h = _obb_overlap(R, t, bv_a, ia[k], bv_b, ib[k], slack)
                upd += 1
            else:
                h, u = overlap_other(kind, R, t, bv_a, ia[k], bv_b, ib[k], slack)
                upd += u
            if h:
                hits += 1
    return hits, upd


@njit(cache=True, nogil=True)
def tri_tests_loop(tris_a, tris_b, tri_test, reps):
    """Exact triangle tests on pairs (tris_a[k], tris_b[k]) ``reps`` times; returns the hits."""
    hits = 0
    for _ in range(reps):
        for k in range(tris_a.shape[0]):
            A = (
                tris_a[k, 0, 0], tris_a[k, 0, 1], tris_a[k, 0, 2],
                tris_a[k, 1, 0], tris_a[k, 1, 1], tris_a[k, 1, 2],
                tris_a[k, 2, 0], tris_a[k, 2, 1], tris_a[k, 2, 2],
            )  # fmt: skip
            B = (
                tris_b[k, 0, 0], tris_b[k, 0, 1], tris_b[k, 0, 2],
                tris_b[k, 1, 0], tris_b[k, 1, 1], tris_b[k, 1, 2],
                tris_b[k, 2, 0], tris_b[k, 2, 1], tris_b[k, 2, 2],
            )  # fmt: skip
            if tri_tri_intersect_tuples(A, B, tri_test):
                hits += 1
    return hits


@njit_internal(nogil=True)
def _point_triangle_d2(px, py, pz, ax, ay, az, bx, by, bz, cx, cy, cz):
    """Squared distance from p to triangle abc (Ericson 2005, 5.1.5, closest point by regions)."""
    abx = bx - ax
    aby = by - ay
    abz = bz - az
    acx = cx - ax
    acy = cy - ay
    acz = cz - az
    apx = px - ax
    apy = py - ay
    apz = pz - az
    d1 = abx * apx + aby * apy + abz * apz
    d2 = acx * apx + acy * apy + acz * apz
    if d1 <= 0.0 and d2 <= 0.0:
        return apx * apx + apy * apy + apz * apz
    bpx = px - bx
    bpy = py - by
    bpz = pz - bz
    d3 = abx * bpx + aby * bpy + abz * bpz
    d4 = acx * bpx + acy * bpy + acz * bpz
    if d3 >= 0.0 and d4 <= d3:
        return bpx * bpx + bpy * bpy + bpz * bpz
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0 and d1 - d3 > 0.0:
        v = d1 / (d1 - d3)
        qx = apx - v * abx
        qy = apy - v * aby
        qz = apz - v * abz
        return qx * qx + qy * qy + qz * qz
    cpx = px - cx
    cpy = py - cy
    cpz = pz - cz
    d5 = abx * cpx + aby * cpy + abz * cpz
    d6 = acx * cpx + acy * cpy + acz * cpz
    if d6 >= 0.0 and d5 <= d6:
        return cpx * cpx + cpy * cpy + cpz * cpz
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0 and d2 - d6 > 0.0:
        w = d2 / (d2 - d6)
        qx = apx - w * acx
        qy = apy - w * acy
        qz = apz - w * acz
        return qx * qx + qy * qy + qz * qz
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0 and (d4 - d3) + (d5 - d6) > 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        qx = bpx - w * (cx - bx)
        qy = bpy - w * (cy - by)
        qz = bpz - w * (cz - bz)
        return qx * qx + qy * qy + qz * qz
    denom = va + vb + vc
    if denom == 0.0:  # degenerate triangle: nearest of the three edges' endpoints
        return min(
            apx * apx + apy * apy + apz * apz, min(bpx * bpx + bpy * bpy + bpz * bpz, cpx * cpx + cpy * cpy + cpz * cpz)
        )
    v = vb / denom
    w = vc / denom
    qx = apx - abx * v - acx * w
    qy = apy - aby * v - acy * w
    qz = apz - abz * v - acz * w
    return qx * qx + qy * qy + qz * qz


@njit(cache=True, nogil=True)
def max_distance_to_triangles(pts, tris, s, e):
    """max over pts of (min over triangles tris[s:e] of the distance): the one-sided
    Hausdorff distance from the point sample to the triangles."""
    worst = 0.0
    for p in range(pts.shape[0]):
        best = np.inf
        px = pts[p, 0]
        py = pts[p, 1]
        pz = pts[p, 2]
        for i in range(s, e):
            d = _point_triangle_d2(
                px, py, pz,
                tris[i, 0, 0], tris[i, 0, 1], tris[i, 0, 2],
                tris[i, 1, 0], tris[i, 1, 1], tris[i, 1, 2],
                tris[i, 2, 0], tris[i, 2, 1], tris[i, 2, 2],
            )  # fmt: skip
            if d < best:
                best = d
                if best <= worst:
                    break  # this point cannot raise the maximum
        if best > worst:
            worst = best
    return np.sqrt(worst)
