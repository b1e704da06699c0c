"""Are two meshes within distance ``thr`` of each other? A threshold descent of their BVHs
(issue 30 item 2: the margin queries), without the full distance.

The descent of ``proximity.distance`` with a fixed cut instead of a shrinking best: a node
pair, a triangle against a leaf, or a triangle pair is dropped as soon as a lower bound of
its squared distance reaches the cut (the same conservative bounds as the distance
descent: ``node_lower_bound2`` / ``_pair_lb2`` with the volume slack, the triangle-box,
plane and directional gaps less their rounding allowances), and the search stops at the
first triangle pair that is within ``thr``:

* ``thr > 0``: the pair's closest points (``tri_distance.tri_tri_closest``) at most ``thr``
  apart, ``sqrt(d2) <= thr``; when they are not but the triangles' coordinate boxes touch,
  the exact intersection test (``tri_tri``, Guigue-Devillers) decides whether they cross
  (distance 0). So "within" is exactly ``collisionkit.distance(...).distance <= thr`` on
  the same trees and poses (the distance query reports the same ``sqrt(d2)`` values and 0
  exactly when the exact test finds a crossing pair); the cut is the square of a float a
  little above ``thr``, as the distance query searching below ``nextafter(thr)`` prunes.
* ``thr == 0``: only the exact intersection test counts (a rounded ``d2`` of 0 between
  disjoint triangles never does): the answer is ``intersects``'.

The unit direction between the closest points measured so far (as the distance descent's
best pair) gives one more lower bound for every node and triangle pair (projection onto a
unit vector never lengthens a distance), which settles most pairs near the threshold.

Counters (``distance.DSTAT_*`` columns): node pairs popped, triangle pairs tested.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ...constants import LEAF_FLAG, TRI_TEST_GUIGUE
from ..core.layout import META_DEPTH, META_FANOUT, META_NODE_OFF, META_NODES, META_TRI_OFF, META_TRIS
from ..core.linalg import map_triangle, pose_error, relative_pose, triangle_box
from ..core.scaling import OUT_OF_BAND, in_band
from ..triangle.tri_distance import tri_tri_closest
from ..triangle.tri_tri import tri_tri_intersect_tuples
from .distance import (
    DSTAT_NODE_PAIRS,
    DSTAT_TRI_PAIRS,
    _box_gap2,
    _direction,
    _min_dot,
    _pair_lb2,
    _tri_leaf_gap2,
    node_lower_bound2,
    plane_gap2,
)

_U = 2.0**-53

#: answers of ``within_task`` and the batch rows
WITHIN = 1
APART = 0
#: a batch row whose pair lies outside the kernel's band of scales (nothing computed: the
#: caller prescales, ``query/scaling.py``)
OUT_BAND = -1


@njit(cache=True, nogil=True)
def threshold_cut(thr):
    """The squared cut of threshold ``thr`` >= 0: a pair whose squared lower bound reaches it
    is farther than ``thr``. Slightly above thr**2 (the square of a float past ``thr``,
    rounded up), never 0, so rounding never prunes a pair within ``thr``."""
    c = thr * thr * (1.0 + 16.0 * _U)
    return c if c > 0.0 else 5e-324


# LENGTH (~150 lines): one descent whose state (stack, the direction of the closest pair
# measured so far, counters) lives in locals and changes at every leaf, as distance_task.
@njit(cache=True, nogil=True)
def within_task(topo_a, bv_a, tris_a, Ta, topo_b, bv_b, tris_b, Tb, scale, bv_kind, thr, stack, lbs, stats, row):
    """WITHIN (1) when tree a at pose Ta and tree b at pose Tb (one tree each, volume kind
    ``bv_kind``, ``scale`` their largest coordinates summed) are at most ``thr`` >= 0 apart,
    else APART (0). ``stack`` (rows, 2) int64 and ``lbs`` (rows,) float64 scratch
    (``stack_rows``); ``stats[row]`` gains node pairs and triangle pairs."""
    R, t = relative_pose(Ta, Tb)
    AbsR = (abs(R[0]), abs(R[1]), abs(R[2]), abs(R[3]), abs(R[4]), abs(R[5]), abs(R[6]), abs(R[7]), abs(R[8]))
    slack = 64.0 * _U * (scale + abs(t[0]) + abs(t[1]) + abs(t[2]))
    kind = bv_kind
    cut = threshold_cut(thr)
    measure = thr > 0.0
    n_pairs = np.int64(0)
    n_tri = np.int64(0)
    tri_method = np.int64(TRI_TEST_GUIGUE)
    found = APART
    closest = math.inf  # the smallest d2 measured so far: its direction bounds the rest
    have_v = False
    v = (0.0, 0.0, 0.0)
    w = (0.0, 0.0, 0.0)
    top = 0
    lb0 = node_lower_bound2(kind, R, AbsR, t, bv_a, np.int64(0), bv_b, np.int64(0), slack)
    if lb0 < cut:
        stack[0, 0] = 0
        stack[0, 1] = 0
        lbs[0] = lb0
        top = 1
    while top > 0 and found == APART:
        top -= 1
        ia = stack[top, 0]
        ib = stack[top, 1]
        n_pairs += 1
        leaf_a = (topo_a[ia, 2] & LEAF_FLAG) != 0
        leaf_b = (topo_b[ib, 2] & LEAF_FLAG) != 0
        if leaf_a and leaf_b:
            fa0 = topo_a[ia, 0]
            fa1 = fa0 + topo_a[ia, 1]
            fb0 = topo_b[ib, 0]
            fb1 = fb0 + topo_b[ib, 1]
            for jb in range(fb0, fb1):
                B = map_triangle(
                    R, t,
                    tris_b[jb, 0, 0], tris_b[jb, 0, 1], tris_b[jb, 0, 2],
                    tris_b[jb, 1, 0], tris_b[jb, 1, 1], tris_b[jb, 1, 2],
                    tris_b[jb, 2, 0], tris_b[jb, 2, 1], tris_b[jb, 2, 2],
                )  # fmt: skip
                blx, bhx, bly, bhy, blz, bhz = triangle_box(B)
                sb = _min_dot(v, B)
                # b's triangle against a's whole leaf first: skips its row of pairs
                if _tri_leaf_gap2(kind, have_v, v, bv_a, ia, blx, bhx, bly, bhy, blz, bhz, sb, slack) >= cut:
                    continue
                for ja in range(fa0, fa1):
                    A = (
                        tris_a[ja, 0, 0], tris_a[ja, 0, 1], tris_a[ja, 0, 2],
                        tris_a[ja, 1, 0], tris_a[ja, 1, 1], tris_a[ja, 1, 2],
                        tris_a[ja, 2, 0], tris_a[ja, 2, 1], tris_a[ja, 2, 2],
                    )  # fmt: skip
                    alx, ahx, aly, ahy, alz, ahz = triangle_box(A)
                    # EXACT: comparisons only; 0 exactly when the closed boxes touch, which
                    # every crossing pair's do
                    g2 = _box_gap2(alx, ahx, aly, ahy, alz, ahz, blx, bhx, bly, bhy, blz, bhz)
                    touch = g2 == 0.0
                    if not measure:
                        if touch:
                            n_tri += 1
                            if tri_tri_intersect_tuples(A, B, tri_method):
                                found = WITHIN
                                break
                        continue
                    # the box gap is rounded: compared with a margin so it never drops a pair within thr
                    if g2 * (1.0 - 8.0 * _U) - slack * slack >= cut:
                        continue
                    if have_v:
                        sa = max(
                            v[0] * A[0] + v[1] * A[1] + v[2] * A[2],
                            max(v[0] * A[3] + v[1] * A[4] + v[2] * A[5], v[0] * A[6] + v[1] * A[7] + v[2] * A[8]),
                        )
                        gv = sb - sa - slack
                        if gv > 0.0 and gv * gv * (1.0 - 8.0 * _U) >= cut:
                            continue
                    if max(plane_gap2(A, B), plane_gap2(B, A)) >= cut:
                        continue
                    n_tri += 1
                    d2, x1, y1, z1, x2, y2, z2 = tri_tri_closest(A, B)
                    if math.sqrt(d2) <= thr:
                        found = WITHIN
                        break
                    if touch and tri_tri_intersect_tuples(A, B, tri_method):
                        found = WITHIN  # crossing triangles: distance 0
                        break
                    if d2 < closest:
                        closest = d2
                        have_v, v, w = _direction(d2, x1, y1, z1, x2, y2, z2, R)
                        if have_v:
                            sb = _min_dot(v, B)
                if found != APART:
                    break
            continue
        # inner nodes: as distance_task (two inner nodes split together, a leaf against an
        # inner node splits the inner one; children nearest on top)
        if not leaf_a and not leaf_b:
            ca0 = np.int64(topo_a[ia, 0])
            cna = np.int64(topo_a[ia, 1])
            cb0 = np.int64(topo_b[ib, 0])
            cnb = np.int64(topo_b[ib, 1])
        elif leaf_b:
            ca0 = np.int64(topo_a[ia, 0])
            cna = np.int64(topo_a[ia, 1])
            cb0 = ib
            cnb = np.int64(1)
        else:
            ca0 = ia
            cna = np.int64(1)
            cb0 = np.int64(topo_b[ib, 0])
            cnb = np.int64(topo_b[ib, 1])
        base = top
        for k in range(cna * cnb):
            na = ca0 + k // cnb
            nb = cb0 + k % cnb
            lc = _pair_lb2(kind, have_v, v, w, R, AbsR, t, bv_a, na, bv_b, nb, slack, cut)
            if lc >= cut:
                continue
            p = top
            while p > base and lbs[p - 1] <= lc:
                stack[p, 0] = stack[p - 1, 0]
                stack[p, 1] = stack[p - 1, 1]
                lbs[p] = lbs[p - 1]
                p -= 1
            stack[p, 0] = na
            stack[p, 1] = nb
            lbs[p] = lc
            top += 1
    stats[row, DSTAT_NODE_PAIRS] += n_pairs
    stats[row, DSTAT_TRI_PAIRS] += n_tri
    return found


@njit(cache=True, nogil=True)
def stack_rows(meta_a, meta_b):
    """Stack rows of ``within_task`` for any pair of trees of the pools ``meta_a``, ``meta_b``
    (``distance._stack_rows``' count with the deepest trees and widest fan-out): each pop, at
    most depth_a + depth_b on a path, replaces its pair by at most fanout**2 children."""
    da = np.int64(0)
    db = np.int64(0)
    f = np.int64(2)
    for i in range(meta_a.shape[0]):
        da = max(da, meta_a[i, META_DEPTH])
        f = max(f, meta_a[i, META_FANOUT])
    for i in range(meta_b.shape[0]):
        db = max(db, meta_b[i, META_DEPTH])
        f = max(f, meta_b[i, META_FANOUT])
    return (da + db) * (f * f - 1) + 2


@njit(cache=True, nogil=True)
def within_pooled(topo_a, bv_a, tris_a, meta_a, ta, Ta, topo_b, bv_b, tris_b, meta_b, tb, Tb, scale, kind, thr, stack, lbs, stats, row):
    """``within_task`` on tree ``ta`` of pool a and tree ``tb`` of pool b (``meta`` rows hold
    each tree's node and triangle offsets), sliced out of the pools."""
    na0 = meta_a[ta, META_NODE_OFF]
    na1 = na0 + meta_a[ta, META_NODES]
    fa0 = meta_a[ta, META_TRI_OFF]
    fa1 = fa0 + meta_a[ta, META_TRIS]
    nb0 = meta_b[tb, META_NODE_OFF]
    nb1 = nb0 + meta_b[tb, META_NODES]
    fb0 = meta_b[tb, META_TRI_OFF]
    fb1 = fb0 + meta_b[tb, META_TRIS]
    return within_task(
        topo_a[na0:na1], bv_a[na0:na1], tris_a[fa0:fa1], Ta,
        topo_b[nb0:nb1], bv_b[nb0:nb1], tris_b[fb0:fb1], Tb,
        scale, kind, thr, stack, lbs, stats, row,
    )  # fmt: skip


# PERF: the per-call entry keeps the GIL (as distance_one and intersect_one).
@njit(cache=True)
def within_one(topo_a, bv_a, tris_a, meta_a, Ta, topo_b, bv_b, tris_b, meta_b, Tb, scale, bv_kind, thr):
    """One pose pair of two single trees: WITHIN (1) or APART (0); a negative pose error,
    -(1 + code) for Ta, -(11 + code) for Tb (``linalg.pose_error``); or
    ``scaling.OUT_OF_BAND`` (nothing computed) when the pair must be prescaled."""
    ea = pose_error(Ta)
    if ea != 0:
        return -(1 + ea)
    eb = pose_error(Tb)
    if eb != 0:
        return -(11 + eb)
    if not in_band(scale, Ta, Tb):
        return OUT_OF_BAND
    n = stack_rows(meta_a, meta_b)
    stack = np.empty((n, 2), np.int64)
    lbs = np.empty(n)
    stats = np.zeros((1, 2), np.int64)
    return np.int64(within_task(topo_a, bv_a, tris_a, Ta, topo_b, bv_b, tris_b, Tb, scale, bv_kind, thr, stack, lbs, stats, np.int64(0)))


@njit(cache=True, nogil=True)
def _within_chunk(c, nchunks, topo_a, bv_a, tris_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, meta_b, scale_b, poses_b, tasks, kind, thr, out, stats):
    """Tasks c, c + nchunks, ...: row k of ``tasks`` (tree a, tree b, pose a, pose b) ->
    ``out[k]`` WITHIN, APART or OUT_BAND (poses validated by the caller)."""
    n = stack_rows(meta_a, meta_b)
    stack = np.empty((n, 2), np.int64)
    lbs = np.empty(n)
    for k in range(c, tasks.shape[0], nchunks):
        ta = tasks[k, 0]
        tb = tasks[k, 1]
        Ta = poses_a[tasks[k, 2]]
        Tb = poses_b[tasks[k, 3]]
        s = scale_a[ta] + scale_b[tb]
        if not in_band(s, Ta, Tb):
            out[k] = OUT_BAND
            continue
        out[k] = within_pooled(
            topo_a, bv_a, tris_a, meta_a, ta, Ta, topo_b, bv_b, tris_b, meta_b, tb, Tb, s, kind, thr, stack, lbs, stats, k
        )


@njit(cache=True, nogil=True)
def within_serial(topo_a, bv_a, tris_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, meta_b, scale_b, poses_b, tasks, kind, thr, out, stats, nchunks):
    """Every task on the calling thread: ``out`` (T,) int8, ``stats`` (T, 2) int64."""
    for c in range(nchunks):
        _within_chunk(
            c, nchunks, topo_a, bv_a, tris_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, meta_b, scale_b, poses_b,
            tasks, kind, thr, out, stats,
        )  # fmt: skip


@njit(cache=True, nogil=True, parallel=True)
def within_parallel(topo_a, bv_a, tris_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, meta_b, scale_b, poses_b, tasks, kind, thr, out, stats, nchunks):
    """``within_serial`` over numba threads (tasks interleaved over chunks)."""
    for c in prange(nchunks):
        _within_chunk(
            np.int64(c), nchunks, topo_a, bv_a, tris_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, meta_b, scale_b,
            poses_b, tasks, kind, thr, out, stats,
        )  # fmt: skip
