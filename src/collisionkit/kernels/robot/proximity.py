"""Pair distances of the prepared robot checker below per-pair bounds, for one configuration,
in one compiled call (issue 30 item 2: the threshold queries of ``robot/motion.py``).

The packed checker (``kernels.robot.checker``: ``fb``, ``wb``, ``ib``, ``topo``) holds every
(link, object) and self pair whose two shapes are meshes, their trees in one pool. For the
link poses of one configuration and a list of its pairs, each with a distance bound, this
runs ``proximity.distance.distance_task`` (the pruned branch-and-bound descent, its
conservative node lower bounds and slack) on the pair's two trees, sliced out of the pool:
the descent searches only below the bound, so a pair farther than its bound costs the few
node pairs whose lower bounds reach it. Per pair the answer is the one
``collisionkit.distance(a, b, Ta, Tb, upper_bound=bound)`` computes on the same trees and
poses: the distance and closest points (world frame) when it is below the bound, else inf.

Clearance (``PD_CLEARANCE``): the bound of each pair is also capped by the best padded distance
found so far, ``best + thr[i]`` with ``best = min(d_j - thr_j)`` over the pairs before it
(so a pair that cannot beat it is pruned at its root), exactly as ``motion.clearance``
caps its per-pair queries.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core.layout import META_DEPTH, META_FANOUT, META_NODE_OFF, META_NODES, META_TRI_OFF, META_TRIS
from ..core.scaling import in_band
from ..proximity.distance import N_DSTATS, distance_task
from .checker import (
    H_BASE_LINK,
    PAIR_A,
    PAIR_A_BOX,
    PAIR_B,
    PAIR_B_BOX,
    PAIR_KIND,
    PAIR_SELF,
    PAIR_TREE_A,
    PAIR_TREE_B,
    _local_boxes_overlap,
    _unpack,
    link_poses_of,
)  # fmt: skip

#: columns of a row of ``pair_distances``'s output
OUT_D = 0  # distance (inf: not below the bound; NaN: the pair is outside the kernel's scale band)
OUT_PA = 1  # closest point on a (3, world frame)
OUT_PB = 4  # closest point on b (3, world frame)
OUT_WIDTH = 7

#: what ``pair_distances`` answers
PD_ALL = 0
PD_CLEARANCE = 1
PD_ANY = 2


@njit(cache=True, nogil=True)
def _stack_rows(sel, pairs, meta):
    """Stack rows of ``distance_task`` for the pairs ``sel`` (``distance._stack_rows``'s count)."""
    rows = np.int64(2)
    for i in range(sel.shape[0]):
        ta = pairs[sel[i], PAIR_TREE_A]
        tb = pairs[sel[i], PAIR_TREE_B]
        f = max(meta[ta, META_FANOUT], meta[tb, META_FANOUT])
        rows = max(rows, (meta[ta, META_DEPTH] + meta[tb, META_DEPTH]) * (f * f - 1) + 2)
    return rows


# LENGTH: one pair's whole query (band, box pretest, tree slices, descent); the scratch
# arrays come from the caller, once per call.
@njit(cache=True, nogil=True)
def _pair_distance(p, Ta, Tb, u, pairs, meta, topo, bv, tris, scale, link_obb, obj_obb, stack, lbs, buf, row, stats):
    """Pair p's distance at poses Ta, Tb searched below u > 0: the distance (closest points
    in ``row[0, 1:7]``, a's frame), inf when it is not below u, NaN when the pair's extent
    is outside the kernel's band of scales (nothing computed)."""
    ta = pairs[p, PAIR_TREE_A]
    tb = pairs[p, PAIR_TREE_B]
    s = scale[ta] + scale[tb]
    if not in_band(s, Ta, Tb):
        return math.nan
    # PERF: the two local oriented boxes more than u apart settle the pair without a
    # descent (as the checker's narrow phase: most pairs end here)
    if pairs[p, PAIR_SELF] != 0:
        near = _local_boxes_overlap(Ta, Tb, link_obb, pairs[p, PAIR_A_BOX], link_obb, pairs[p, PAIR_B_BOX], u)
    else:
        near = _local_boxes_overlap(Ta, Tb, link_obb, pairs[p, PAIR_A_BOX], obj_obb, pairs[p, PAIR_B_BOX], u)
    if not near:
        return math.inf
    u2 = u * u
    if u2 == 0.0:
        u2 = 5e-324  # never rounded down to 0 (as query.scaling.squared)
    na0 = meta[ta, META_NODE_OFF]
    na1 = na0 + meta[ta, META_NODES]
    fa0 = meta[ta, META_TRI_OFF]
    fa1 = fa0 + meta[ta, META_TRIS]
    nb0 = meta[tb, META_NODE_OFF]
    nb1 = nb0 + meta[tb, META_NODES]
    fb0 = meta[tb, META_TRI_OFF]
    fb1 = fb0 + meta[tb, META_TRIS]
    none = np.int64(-1)
    d2 = distance_task(
        topo[na0:na1], bv[na0:na1], tris[fa0:fa1], Ta,
        topo[nb0:nb1], bv[nb0:nb1], tris[fb0:fb1], Tb,
        s, pairs[p, PAIR_KIND], u2, 1.0, none, none, stack, lbs, buf, row, stats, np.int64(0),
    )  # fmt: skip
    if row[0, 7] < 0.0:
        return math.inf
    return math.sqrt(d2)


@njit(cache=True)
def pair_distances(T, fb, wb, ib, topo, sel, upper, thr, mode, best, out):
    """Distances of the checker's pairs ``sel`` (n,) int64 (rows of its ``pairs``) at the
    link poses T (L, 4, 4) float64 (world frame, ``Robot.link_poses``'s), each searched
    below ``upper`` (n,) float64 (a distance; inf: no bound). ``thr`` (n,) float64 the
    pairs' thresholds. Writes ``out`` (n, OUT_WIDTH) float64 (rows not reached: untouched).

    ``mode`` PD_ALL: every pair; returns -1. PD_CLEARANCE: each pair also searched below
    ``best + thr[i]``, ``best`` (a float: the best padded distance known before the call)
    lowered to ``max(d - thr, 0)`` by each pair that beats it; returns the index in ``sel``
    of the last pair that did (-1: none). PD_ANY: stops at the first pair with
    ``d <= thr[i]`` and returns its index (-1: none).

    A pair whose extent lies outside the kernel's band of scales (``core.scaling.in_band``)
    gets NaN: the caller measures it through ``collisionkit.distance`` (which prescales).
    """
    (
        base, parents, children, kinds, H, vsrc, vmul, vdepth,
        local, link_row, link_obb, obj_poses, obj_box, obj_obb, pairs, bv, tris, meta, scale,
    ) = _unpack(fb, wb, ib)  # fmt: skip
    n = sel.shape[0]
    rows = _stack_rows(sel, pairs, meta)
    stack = np.empty((rows, 2), np.int64)
    lbs = np.empty(rows)
    buf = np.empty((24, 3))
    row = np.zeros((1, 12))
    stats = np.zeros((1, N_DSTATS), np.int64)
    who = np.int64(-1)
    for i in range(n):
        p = sel[i]
        a = pairs[p, PAIR_A]
        b = pairs[p, PAIR_B]
        Ta = T[a]
        Tb = T[b] if pairs[p, PAIR_SELF] != 0 else obj_poses[b]
        u = upper[i]
        if mode == PD_CLEARANCE:
            u = min(u, best + thr[i])
        if not u > 0.0:
            out[i, OUT_D] = math.inf
            continue
        d = _pair_distance(p, Ta, Tb, u, pairs, meta, topo, bv, tris, scale, link_obb, obj_obb, stack, lbs, buf, row, stats)
        out[i, OUT_D] = d
        if not math.isfinite(d):
            continue
        for e in range(2):
            px = row[0, 1 + 3 * e]
            py = row[0, 2 + 3 * e]
            pz = row[0, 3 + 3 * e]
            for k in range(3):
                out[i, 1 + 3 * e + k] = Ta[k, 0] * px + Ta[k, 1] * py + Ta[k, 2] * pz + Ta[k, 3]
        if mode == PD_CLEARANCE:
            c = max(d - thr[i], 0.0)
            if c < best:
                best = c
                who = i
        elif mode == PD_ANY and d <= thr[i]:
            return np.int64(i)
    return who


@njit(cache=True)
def margin_any(Q, fb, wb, ib, topo, thr, upper, hit):
    """Margin check of a batch Q (N, dof) float64 (finite, checked by the caller) over the
    checker's pairs with ``thr[p] > 0`` (``thr`` (P,) float64, one per row of its
    ``pairs``; a pair with thr <= 0 is skipped: the caller tests it); ``upper`` (P,) the next
    float above each threshold (each descent searches below it). ``hit[k]`` (N,) int8:
    1 when some pair is at most its threshold apart (``d <= thr``; it stops the
    configuration), 0 when none is, -1 when
    none is but a pair lay outside the kernel's band (the caller decides it).

    Link poses by ``checker.link_poses_of``, as ``checker._worker`` computes them
    (bit-identical to ``Robot.link_poses``).
    """
    (
        base, parents, children, kinds, H, vsrc, vmul, vdepth,
        local, link_row, link_obb, obj_poses, obj_box, obj_obb, pairs, bv, tris, meta, scale,
    ) = _unpack(fb, wb, ib)  # fmt: skip
    P = pairs.shape[0]
    rows = _stack_rows(np.arange(P), pairs, meta)
    stack = np.empty((rows, 2), np.int64)
    lbs = np.empty(rows)
    buf = np.empty((24, 3))
    row = np.zeros((1, 12))
    stats = np.zeros((1, N_DSTATS), np.int64)
    values = np.zeros((parents.shape[0], 1))
    poses = np.zeros((link_row.shape[0], 1, 4, 4))
    base_link = ib[H_BASE_LINK]
    for k in range(Q.shape[0]):
        link_poses_of(Q, k, vsrc, vdepth, vmul, base, base_link, parents, children, kinds, H, values, poses)
        got = np.int8(0)
        for p in range(P):
            t = thr[p]
            if not t > 0.0:
                continue
            b = pairs[p, PAIR_B]
            Ta = poses[pairs[p, PAIR_A], 0]
            Tb = poses[b, 0] if pairs[p, PAIR_SELF] != 0 else obj_poses[b]
            d = _pair_distance(
                p, Ta, Tb, upper[p], pairs, meta, topo, bv, tris, scale, link_obb, obj_obb,
                stack, lbs, buf, row, stats,
            )  # fmt: skip
            if math.isnan(d):
                got = np.int8(-1)
            elif d <= t:
                got = np.int8(1)
                break
        hit[k] = got
