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
from numba import prange

from ...constants import MODE_ANY, NO_BUDGET, TRI_TEST_GUIGUE
from ..core.jit import njit, njit_internal
from ..core.layout import META_DEPTH, META_FANOUT, STAT_NODE_PAIRS, STAT_TRI_TESTS
from ..core.scaling import in_band
from ..core.tri_rows import tree_rows
from ..core.unlinked import call_unlinked, njit_driver
from ..proximity.distance import DSTAT_NODE_PAIRS, DSTAT_TRI_PAIRS, N_DSTATS, distance_task
from ..proximity.threshold import _RIGID_WIDEN, WITHIN, within_pooled
from ..proximity.threshold import stack_rows as within_stack_rows
from ..traverse.descent import collide_task
from .checker import (
    _BOOL2,
    _I8,
    _I64,
    H_BASE_LINK,
    H_STACK,
    PAIR_A,
    PAIR_A_BOX,
    PAIR_B,
    PAIR_B_BOX,
    PAIR_KIND,
    PAIR_ROW,
    PAIR_SELF,
    PAIR_TREE_A,
    PAIR_TREE_B,
    _claim,
    _link_boxes,
    _local_boxes_overlap,
    _one_config,
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


# LENGTH: one pair's whole query (band, box pretest, tree slices, descent in the relative-error
# mode, its lower bound); the scratch arrays come from the caller, once per call.
@njit_internal(nogil=True)
def distance_scratch(sel, pairs, meta):
    """Scratch of ``distance_task`` for the pairs ``sel``, allocated once per call: its stack
    (rows, 2) int64 and bounds (rows,), the segment buffer (24, 3), one output row (1, 12)
    and stats row (1, N_DSTATS) int64."""
    rows = _stack_rows(sel, pairs, meta)
    return (
        np.empty((rows, 2), np.int64),
        np.empty(rows),
        np.empty((24, 3)),
        np.zeros((1, 12)),
        np.zeros((1, N_DSTATS), np.int64),
    )


@njit_internal(nogil=True)
def _pair_bound(p, Ta, Tb, u, shrink, seed_a, seed_b, pairs, meta, topo, bv, tris, scale, link_obb, obj_obb, stack, lbs, buf, row, stats):
    """(d, low): pair p's distance at poses Ta, Tb searched below u > 0 in the distance
    descent's relative-error mode (``shrink`` in (0, 1]: node and triangle pairs whose squared
    lower bound reaches ``shrink`` times the best so far are pruned), and a certified lower
    bound ``low`` of the true distance. d is the distance of two real points of the shapes
    (so d >= the true distance; inf when nothing was found below u), within a factor
    1/sqrt(shrink) of the true distance; shrink = 1 is ``_pair_distance`` (d exact, low = d,
    or u when nothing is below u). (NaN, NaN) when the pair is outside the kernel's band.

    low: when found, the smallest of d and every pruned pair's bound (``distance_task``'s
    ``out[11]``); when not, ``sqrt(shrink) * u`` (every pruned pair's bound reached
    shrink * u**2, the root's included, and every measured pair was at least u).

    ``seed_a``, ``seed_b`` (leaf-order triangle indices of the two trees, -1: none) are
    measured first (``distance_task``'s warm start: a bound from the start; the distance
    found never depends on them, only the work). The closest pair found is ``row[0, 7:9]``."""
    ta = pairs[p, PAIR_TREE_A]
    tb = pairs[p, PAIR_TREE_B]
    s = scale[ta] + scale[tb]
    if not in_band(s, Ta, Tb):
        return math.nan, math.nan
    # PERF: the two local oriented boxes more than u apart settle the pair without a
    # descent (as the checker's narrow phase: most pairs end here)
    if pairs[p, PAIR_SELF] != 0:
        near = _local_boxes_overlap(Ta, Tb, link_obb, pairs[p, PAIR_A_BOX], link_obb, pairs[p, PAIR_B_BOX], u)
    else:
        near = _local_boxes_overlap(Ta, Tb, link_obb, pairs[p, PAIR_A_BOX], obj_obb, pairs[p, PAIR_B_BOX], u)
    if not near:
        return math.inf, u
    u2 = u * u
    if u2 == 0.0:
        u2 = 5e-324  # never rounded down to 0 (as query.scaling.squared)
    na0, na1, fa0, fa1 = tree_rows(meta, ta)
    nb0, nb1, fb0, fb1 = tree_rows(meta, tb)
    d2 = distance_task(
        topo[na0:na1], bv[na0:na1], tris[fa0:fa1], Ta,
        topo[nb0:nb1], bv[nb0:nb1], tris[fb0:fb1], Tb,
        s, pairs[p, PAIR_KIND], u2, shrink, seed_a, seed_b, stack, lbs, buf, row, stats, np.int64(0),
    )  # fmt: skip
    if row[0, 7] < 0.0:
        return math.inf, (u if shrink >= 1.0 else math.sqrt(u2 * shrink))
    d = math.sqrt(d2)
    return d, (d if shrink >= 1.0 else min(d, math.sqrt(row[0, 11])))


# inline: its one caller is ``pair_distances``; compiled apart, the distance chain it links was
# optimised and generated once more (issue 32: compile time)
@njit_internal(nogil=True, inline="always")
def _pair_distance(p, Ta, Tb, u, pairs, meta, topo, bv, tris, scale, link_obb, obj_obb, stack, lbs, buf, row, stats):
    """Pair p's distance at poses Ta, Tb searched below u > 0: the distance (closest points
    in ``row[0, 1:7]``, a's frame), inf when it is not below u, NaN when the pair's extent
    is outside the kernel's band of scales (nothing computed): ``_pair_bound``'s exact mode."""
    none = np.int64(-1)
    d, _low = _pair_bound(
        p, Ta, Tb, u, 1.0, none, none, pairs, meta, topo, bv, tris, scale, link_obb, obj_obb, stack, lbs, buf, row, stats
    )
    return d


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
    stack, lbs, buf, row, stats = distance_scratch(sel, pairs, meta)
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


# LENGTH (~80 lines): the whole per-configuration loop of one worker (as checker._run:
# kinematics, boxes, pairs), its arrays passed once per worker, not per pair helper.
@njit_internal(nogil=True)
def _margin_worker(c, nchunks, Q, fb, wb, ib, topo, thr, out, shared, detail, work):
    """Margin check of the configurations of worker ``c`` (claimed dynamically when
    ``shared`` has an entry: a cursor; else c, c + nchunks, ...): ``out[k]`` = 1 when some
    pair of the checker is at most ``thr[p]`` apart (it stops the configuration), 0 when
    none is, -1 when none is but a pair lay outside the kernel's band of scales (the caller
    decides it). ``thr`` (P,) float64 >= 0, one per row of the checker's ``pairs``.

    Recording (``detail`` (C, N), a column per configuration; else (0, 0)): every pair is
    tested, ``detail[row, k]`` set for each pair within its threshold; ``work[p]`` (when it
    has a row per pair; serial calls only) adds up pair p's node pairs and triangle tests.
    What ``robot/checker.py`` orders a margin checker's pairs by, so that its first check
    compiles no other kernel (as ``checker._run``'s CHECK_DETAIL for the plain check).

    Per pair, cheapest first, each test a lower bound of the distance, so a pair it
    separates is more than its threshold apart: the padded world boxes more than thr apart
    along an axis; the two local oriented boxes (``checker._local_boxes_overlap`` widened
    by thr); then the exact test. thr > 0: ``proximity.threshold.within_task`` (the
    threshold descent: stops at the first triangle pair within thr, or when every open
    node pair's lower bound exceeds it). thr == 0: ``traverse.descent.collide_task`` in
    MODE_ANY, the checker's own test, so a zero threshold is ``Robot.check``'s answer bit
    for bit.
    """
    (
        base, parents, children, kinds, H, vsrc, vmul, vdepth,
        local, link_row, link_obb, obj_poses, obj_box, obj_obb, pairs, bv, tris, meta, scale,
    ) = _unpack(fb, wb, ib)  # fmt: skip
    n = Q.shape[0]
    P = pairs.shape[0]
    values = np.zeros((parents.shape[0], 1))
    poses = np.zeros((link_row.shape[0], 1, 4, 4))
    lbox = np.empty((local.shape[0], 6))
    rows = within_stack_rows(meta, meta)
    stack = np.empty((rows, 2), np.int64)
    dstats = np.zeros((1, N_DSTATS), np.int64)
    cstack = np.empty((ib[H_STACK], 2), np.int32)
    cstats = np.zeros((1, 4), np.int64)
    keys = np.zeros(1, np.int64)
    zero = np.int64(0)
    one = np.int64(1)
    none = np.int64(-1)
    mode_any = np.int64(MODE_ANY)
    no_cap = np.int64(-1)
    budget = np.int64(NO_BUDGET)
    tri_test = np.int64(TRI_TEST_GUIGUE)
    base_link = ib[H_BASE_LINK]
    ids = topo[0]
    record = n > 0 and detail.shape[1] == n
    count_work = work.shape[0] == P
    k = c - nchunks
    while True:
        k = _claim(shared, np.int64(0), k, nchunks, n, np.bool_(False))
        if k < 0:
            break
        link_poses_of(Q, k, vsrc, vdepth, vmul, base, base_link, parents, children, kinds, H, values, poses)
        _link_boxes(local, link_row, poses, lbox)
        got = np.int8(0)
        for p in range(P):
            u = thr[p]
            ra = pairs[p, PAIR_A_BOX]
            rb = pairs[p, PAIR_B_BOX]
            is_self = pairs[p, PAIR_SELF] != 0
            # EXACT: x - y > u is x > y at u = 0 (IEEE subtraction), the checker's box test
            if is_self:
                apart = (
                    lbox[ra, 0] - lbox[rb, 3] > u or lbox[rb, 0] - lbox[ra, 3] > u
                    or lbox[ra, 1] - lbox[rb, 4] > u or lbox[rb, 1] - lbox[ra, 4] > u
                    or lbox[ra, 2] - lbox[rb, 5] > u or lbox[rb, 2] - lbox[ra, 5] > u
                )  # fmt: skip
            else:
                apart = (
                    lbox[ra, 0] - obj_box[rb, 3] > u or obj_box[rb, 0] - lbox[ra, 3] > u
                    or lbox[ra, 1] - obj_box[rb, 4] > u or obj_box[rb, 1] - lbox[ra, 4] > u
                    or lbox[ra, 2] - obj_box[rb, 5] > u or obj_box[rb, 2] - lbox[ra, 5] > u
                )  # fmt: skip
            if apart:
                continue
            b = pairs[p, PAIR_B]
            Ta = poses[pairs[p, PAIR_A], 0]
            Tb = poses[b, 0] if is_self else obj_poses[b]
            # u widened as threshold.node_near's: poses are rigid only to 1e-6
            g = u * (1.0 + _RIGID_WIDEN)
            if is_self:
                if not _local_boxes_overlap(Ta, Tb, link_obb, ra, link_obb, rb, g):
                    continue
            elif not _local_boxes_overlap(Ta, Tb, link_obb, ra, obj_obb, rb, g):
                continue
            ta = pairs[p, PAIR_TREE_A]
            tb = pairs[p, PAIR_TREE_B]
            if u == 0.0:
                cstack[0, 0] = 0
                cstack[0, 1] = 0
                before = cstats[0, STAT_NODE_PAIRS] + cstats[0, STAT_TRI_TESTS]
                found, _ = collide_task(
                    topo, bv, tris, ids, meta, scale, ta, Ta,
                    topo, bv, tris, ids, meta, scale, tb, Tb,
                    pairs[p, PAIR_KIND], tri_test, mode_any, no_cap,
                    keys, zero, zero, cstack, one, budget, cstats, zero,
                )  # fmt: skip
                if count_work:
                    work[p] += cstats[0, STAT_NODE_PAIRS] + cstats[0, STAT_TRI_TESTS] - before
                if found > 0:
                    got = np.int8(1)
                    if not record:
                        break
                    detail[pairs[p, PAIR_ROW], k] = True
                continue
            s = scale[ta] + scale[tb]
            if not in_band(s, Ta, Tb):
                if got == 0:  # NOTE: a hit recorded before it stands
                    got = np.int8(-1)
                continue
            # NOTE: no warm start: the pair measured closest by the last configuration's
            # descent (its direction as a bound from the start) cost more than it saved
            # (Panda, margin 0.01: 11.9 vs 11.1 us a configuration)
            before = dstats[0, DSTAT_NODE_PAIRS] + dstats[0, DSTAT_TRI_PAIRS]
            found, _, _ = within_pooled(
                topo, bv, tris, meta, ta, Ta, topo, bv, tris, meta, tb, Tb, s, pairs[p, PAIR_KIND], u,
                none, none, stack, dstats, zero,
            )  # fmt: skip
            if count_work:
                work[p] += dstats[0, DSTAT_NODE_PAIRS] + dstats[0, DSTAT_TRI_PAIRS] - before
            if found == WITHIN:
                got = np.int8(1)
                if not record:
                    break
                detail[pairs[p, PAIR_ROW], k] = True
        out[k] = got


# PERF: its chunk called unlinked (kernels/core/unlinked.py): linked, it optimised the whole
# margin check again (1.2 of the robot_margins warm-up group's 33 CPU s, 2026-12-07)
@njit_driver(_margin_worker, lambda q, fb, wb, ib, topo, thr: (
    _one_config(q), fb, wb, ib, topo, thr, _I8, _I64, _BOOL2, _I64
), nogil=False)  # fmt: skip
def margin_one(q, fb, wb, ib, topo, thr):
    """One configuration q (dof,): 1 (some pair within its threshold), 0 (none), -1 (none,
    but a pair outside the kernel's band: the caller decides), -2 (q holds a non-finite
    value). ``thr`` as ``_margin_worker``."""
    Q = q.reshape((1, q.shape[0]))
    for j in range(q.shape[0]):
        if not math.isfinite(q[j]):
            return np.int64(-2)
    out = np.zeros(1, np.int8)
    none = np.zeros(0, np.int64)
    args = (Q, fb, wb, ib, topo, thr, out, none, np.zeros((0, 0), np.bool_), none)
    call_unlinked(_margin_worker, np.int64(0), np.int64(1), args)
    return np.int64(out[0])


@njit_driver(_margin_worker)
def margin_serial(Q, fb, wb, ib, topo, thr, out, shared, detail, work, nchunks):
    """A batch Q (N, dof) (finite, checked by the caller) on the calling thread: ``out`` (N,)
    int8, ``detail`` and ``work`` as ``_margin_worker`` (``shared`` empty)."""
    args = (Q, fb, wb, ib, topo, thr, out, shared, detail, work)  # fmt: skip
    for c in range(nchunks):
        call_unlinked(_margin_worker, c, nchunks, args)  # kernels/core/unlinked.py


@njit_driver(_margin_worker, parallel=True)
def margin_parallel(Q, fb, wb, ib, topo, thr, out, shared, detail, work, nchunks):
    """A batch over numba threads: ``nchunks`` workers (one a thread) claim configurations
    dynamically (``shared`` = [next configuration]), as ``checker.check_parallel``
    (``detail`` may record; ``work`` empty)."""
    args = (Q, fb, wb, ib, topo, thr, out, shared, detail, work)  # fmt: skip
    for c in prange(nchunks):
        call_unlinked(_margin_worker, np.int64(c), nchunks, args)  # kernels/core/unlinked.py
