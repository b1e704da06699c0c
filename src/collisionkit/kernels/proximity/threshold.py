"""Are two meshes within distance ``thr`` of each other? A threshold descent of their BVHs
(issue 30 item 2: the margin queries), without the full distance.

The descent of ``proximity.distance`` with a fixed threshold instead of a shrinking best,
and no bound values: a node pair is dropped when one of the 15 axes of the two boxes
separates them by more than ``thr`` plus the volume slack (the intersection descent's
overlap test, ``node_near``: a separation over ``thr`` on an axis at most unit long is a
distance over ``thr``), a triangle against a leaf or a triangle pair when a lower bound of
its squared distance (the triangle-box, plane and directional gaps of the distance descent,
less their rounding allowances) reaches the cut, a little above thr**2. A pair farther than
``thr`` must be exhausted whatever the order, so children are pushed unsorted. The search
stops at the first triangle pair that is within ``thr``:

* ``thr > 0``: the triangles cross (where their coordinate boxes touch, the exact
  intersection test, ``tri_tri``, Guigue-Devillers: distance 0), or their closest points
  (``tri_distance.tri_tri_closest``) are at most ``thr`` apart, ``sqrt(d2) <= thr``. So "within" is exactly ``collisionkit.distance(...).distance <= thr`` on
  the same trees and poses (the distance query reports the same ``sqrt(d2)`` values and 0
  exactly when the exact test finds a crossing pair); the cut is the square of a float a
  little above ``thr``, as the distance query searching below ``nextafter(thr)`` prunes.
* ``thr == 0``: only the exact intersection test counts (a rounded ``d2`` of 0 between
  disjoint triangles never does): the answer is ``intersects``'.

The unit direction between the closest points measured so far (as the distance descent's
best pair; from the start when the caller has a warm-start pair, ``seed_a``, ``seed_b``)
gives one more lower bound for every later node and triangle pair (projection onto a unit
vector never lengthens a distance), which settles most pairs near the threshold.

Counters (``distance.DSTAT_*`` columns): node pairs popped, triangle pairs tested.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ...constants import BV_OBB
from ..core.jit import njit, njit_borrowing, njit_internal
from ..core.layout import META_DEPTH, META_FANOUT
from ..core.linalg import relative_pose, triangle_box
from ..core.scaling import in_band
from ..core.tri_rows import leaf_pair, mapped_row, pop_pair, pose_code, tree_rows, tri_row
from ..core.unlinked import call_unlinked, njit_driver
from ..triangle.tri_distance import tri_tri_closest
from ..triangle.tri_tri import tri_tri_guigue_tuples
from ..volumes.access import node_extent
from ..volumes.box import boxes_overlap, obb_overlap
from .distance import (
    DSTAT_NODE_PAIRS,
    DSTAT_TRI_PAIRS,
    _b_leaf_row,
    _box_gap2,
    _direction,
    _max_dot,
    _min_dot,
    _tri_leaf_gap2,
    centre_offset,
    child_pairs,
    dir_gap2,
    plane_gap2,
)

_U = 2.0**-53

#: answers of ``within_task`` and the batch rows
WITHIN = 1
APART = 0
#: a batch row whose pair lies outside the kernel's band of scales (nothing computed: the
#: caller prescales, ``query/scaling.py``)
OUT_BAND = -1
#: ``within_one``'s answer for such a pair (NOTE: not ``scaling.OUT_OF_BAND``, which is 1,
#: WITHIN; pose errors are -1 .. -20)
ONE_OUT_OF_BAND = -1000


@njit_internal(nogil=True)
def threshold_cut(thr):
    """The squared cut of threshold ``thr`` >= 0: a pair whose squared lower bound reaches it
    is farther than ``thr``. Slightly above thr**2 (the square of a float past ``thr``,
    rounded up), never 0, so rounding never prunes a pair within ``thr``."""
    c = thr * thr * (1.0 + 16.0 * _U)
    return c if c > 0.0 else 5e-324


#: relative widening of the threshold in the node tests: poses are rigid only to
#: ``POSE_RIGIDITY_TOL`` (1e-6), so an axis of b's box may be 1e-6 longer than unit and a
#: projected gap that much larger than the true one
_RIGID_WIDEN = 1e-5


# forceinline (kernels/core/jit.py): the one per-node-pair test of within_task (one site); as a call each node pair
# would pay a call with the row tuples.
@njit_borrowing(nogil=True, forceinline=True)
def node_near(kind, R, AbsR, t, bv_a, ia, bv_b, ib, gap):
    """False when node ia of a and node ib of b (b's in a's frame by R, t) are separated by
    more than ``gap`` along one of the 15 axes of their boxes (every kind but OBB read as its
    enclosing box, ``node_extent``), which proves them more than ``gap`` apart (a face axis is
    unit, a cross axis at most unit long). PERF: the overlap test of the intersection
    descent with its slack widened, exiting at the first separating axis; a threshold
    question needs no bound value (``distance.node_lower_bound2`` computes all 15 axes)."""
    if kind == BV_OBB:
        return obb_overlap(R, t, bv_a, ia, bv_b, ib, gap)
    ea = node_extent(kind, bv_a, ia)
    eb = node_extent(kind, bv_b, ib)
    t0, t1, t2 = centre_offset(R, t, ea, eb)
    return boxes_overlap(t0, t1, t2, R, AbsR, ea[3], ea[4], ea[5], eb[3], eb[4], eb[5], gap)


# LENGTH (~150 lines): one descent whose state (stack, the direction of the closest pair
# measured so far, counters) lives in locals and changes at every leaf, as distance_task.
@njit_internal(nogil=True)
def within_task(topo_a, bv_a, tris_a, Ta, topo_b, bv_b, tris_b, Tb, scale, bv_kind, thr, seed_a, seed_b, stack, stats, row):
    """(answer, ja, jb): WITHIN (1) when tree a at pose Ta and tree b at pose Tb (one tree
    each, volume kind ``bv_kind``, ``scale`` their largest coordinates summed) are at most
    ``thr`` >= 0 apart, else APART (0); ja, jb (leaf-order triangle indices) the pair found
    within, or else the closest pair measured (-1, -1: none), a warm start for a later call.

    ``seed_a``, ``seed_b`` (leaf-order triangle indices, -1: none; thr > 0 only) are
    measured first: within, the search ends there; otherwise the direction between their
    closest points bounds every node and triangle pair from the start (PERF: the answer
    never depends on the seeds, only the work). ``stack`` (rows, 2) int64 scratch
    (``stack_rows``); ``stats[row]`` gains node pairs and triangle pairs."""
    R, t = relative_pose(Ta, Tb)
    AbsR = (abs(R[0]), abs(R[1]), abs(R[2]), abs(R[3]), abs(R[4]), abs(R[5]), abs(R[6]), abs(R[7]), abs(R[8]))
    slack = 64.0 * _U * (scale + abs(t[0]) + abs(t[1]) + abs(t[2]))
    kind = bv_kind
    cut = threshold_cut(thr)
    measure = thr > 0.0
    n_pairs = np.int64(0)
    n_tri = np.int64(0)
    found = APART
    closest = math.inf  # the smallest d2 measured so far: its direction bounds the rest
    have_v = False
    v = (0.0, 0.0, 0.0)
    w = (0.0, 0.0, 0.0)
    bja = np.int64(-1)
    bjb = np.int64(-1)
    gap = slack + thr * (1.0 + _RIGID_WIDEN)
    root = node_near(kind, R, AbsR, t, bv_a, np.int64(0), bv_b, np.int64(0), gap)
    if root and measure and seed_a >= 0 and seed_b >= 0:
        A = tri_row(tris_a, seed_a)
        B = mapped_row(R, t, tris_b, seed_b)
        n_tri += 1
        d2, x1, y1, z1, x2, y2, z2 = tri_tri_closest(A, B)
        bja = np.int64(seed_a)
        bjb = np.int64(seed_b)
        if math.sqrt(d2) <= thr or tri_tri_guigue_tuples(A, B):
            found = WITHIN
        else:
            closest = d2
            have_v, v, w = _direction(d2, x1, y1, z1, x2, y2, z2, R)
    top = np.int64(0)
    if root and found == APART:
        stack[0, 0] = 0
        stack[0, 1] = 0
        top = np.int64(1)
    while top > 0 and found == APART:
        top, ia, ib = pop_pair(stack, top)
        n_pairs += 1
        leaf_a, leaf_b, fa0, fa1, fb0, fb1 = leaf_pair(topo_a, ia, np.int64(0), topo_b, ib, np.int64(0))
        if leaf_a and leaf_b:
            for jb in range(fb0, fb1):
                B, blx, bhx, bly, bhy, blz, bhz, sb = _b_leaf_row(R, t, tris_b, jb, v)
                # b's triangle against a's whole leaf first: skips its row of pairs
                if _tri_leaf_gap2(kind, have_v, v, bv_a, ia, blx, bhx, bly, bhy, blz, bhz, sb, slack) >= cut:
                    continue
                for ja in range(fa0, fa1):
                    A = tri_row(tris_a, ja)
                    alx, ahx, aly, ahy, alz, ahz = triangle_box(A)
                    # EXACT: comparisons only; 0 exactly when the closed boxes touch, which
                    # every crossing pair's do
                    g2 = _box_gap2(alx, ahx, aly, ahy, alz, ahz, blx, bhx, bly, bhy, blz, bhz)
                    touch = g2 == 0.0
                    if touch:
                        # the exact test first where the boxes touch: a crossing pair is within
                        # any threshold (PERF: its filter is cheaper than the closest points)
                        n_tri += 1
                        if tri_tri_guigue_tuples(A, B):
                            found = WITHIN
                            bja = np.int64(ja)
                            bjb = np.int64(jb)
                            break
                    if not measure:
                        continue
                    # the box gap is rounded: compared with a margin so it never drops a pair within thr
                    if not touch and g2 * (1.0 - 8.0 * _U) - slack * slack >= cut:
                        continue
                    if have_v:
                        sa = _max_dot(v, A)
                        gv = sb - sa - slack
                        if gv > 0.0 and gv * gv * (1.0 - 8.0 * _U) >= cut:
                            continue
                    if max(plane_gap2(A, B), plane_gap2(B, A)) >= cut:
                        continue
                    n_tri += 1
                    d2, x1, y1, z1, x2, y2, z2 = tri_tri_closest(A, B)
                    if math.sqrt(d2) <= thr:
                        found = WITHIN
                        bja = np.int64(ja)
                        bjb = np.int64(jb)
                        break
                    if d2 < closest:
                        closest = d2
                        bja = np.int64(ja)
                        bjb = np.int64(jb)
                        have_v, v, w = _direction(d2, x1, y1, z1, x2, y2, z2, R)
                        if have_v:
                            sb = _min_dot(v, B)
                if found != APART:
                    break
            continue
        # inner nodes: as distance_task (two inner nodes split together, a leaf against an
        # inner node splits the inner one); every near child pair pushed, unsorted: a pair
        # farther than thr must be exhausted whatever the order
        ca0, cna, cb0, cnb = child_pairs(topo_a, ia, leaf_a, topo_b, ib, leaf_b)
        for k in range(cna * cnb):
            na = ca0 + k // cnb
            nb = cb0 + k % cnb
            # the directional gap first (cheap; it settles most pairs near the threshold)
            if have_v and dir_gap2(kind, v, w, R, t, bv_a, na, bv_b, nb, slack) >= cut:
                continue
            if node_near(kind, R, AbsR, t, bv_a, na, bv_b, nb, gap):
                stack[top, 0] = na
                stack[top, 1] = nb
                top += 1
    stats[row, DSTAT_NODE_PAIRS] += n_pairs
    stats[row, DSTAT_TRI_PAIRS] += n_tri
    return found, bja, bjb


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


@njit_internal(nogil=True)
def within_pooled(topo_a, bv_a, tris_a, meta_a, ta, Ta, topo_b, bv_b, tris_b, meta_b, tb, Tb, scale, kind, thr, seed_a, seed_b, stack, stats, row):
    """``within_task`` on tree ``ta`` of pool a and tree ``tb`` of pool b (``meta`` rows hold
    each tree's node and triangle offsets), sliced out of the pools (seeds and the pair it
    returns: indices local to the trees)."""
    na0, na1, fa0, fa1 = tree_rows(meta_a, ta)
    nb0, nb1, fb0, fb1 = tree_rows(meta_b, tb)
    return within_task(
        topo_a[na0:na1], bv_a[na0:na1], tris_a[fa0:fa1], Ta,
        topo_b[nb0:nb1], bv_b[nb0:nb1], tris_b[fb0:fb1], Tb,
        scale, kind, thr, seed_a, seed_b, stack, stats, row,
    )  # fmt: skip


# PERF: the per-call entry keeps the GIL (as distance_one and intersect_one).
@njit(cache=True)
def within_one(topo_a, bv_a, tris_a, meta_a, Ta, topo_b, bv_b, tris_b, meta_b, Tb, scale, bv_kind, thr):
    """One pose pair of two single trees: WITHIN (1) or APART (0); a negative pose error,
    -(1 + code) for Ta, -(11 + code) for Tb (``linalg.pose_error``); or
    ``ONE_OUT_OF_BAND`` (nothing computed) when the pair must be prescaled."""
    code = pose_code(Ta, Tb)
    if code != 0:
        return code
    if not in_band(scale, Ta, Tb):
        return np.int64(ONE_OUT_OF_BAND)
    n = stack_rows(meta_a, meta_b)
    stack = np.empty((n, 2), np.int64)
    stats = np.zeros((1, 2), np.int64)
    none = np.int64(-1)
    found, _, _ = within_task(
        topo_a, bv_a, tris_a, Ta, topo_b, bv_b, tris_b, Tb, scale, bv_kind, thr, none, none, stack, stats, np.int64(0)
    )
    return np.int64(found)


@njit_internal(nogil=True)
def _within_chunk(c, nchunks, topo_a, bv_a, tris_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, meta_b, scale_b, poses_b, tasks, kind, thr, out, stats):
    """Tasks c, c + nchunks, ...: row k of ``tasks`` (tree a, tree b, pose a, pose b) ->
    ``out[k]`` WITHIN, APART or OUT_BAND (poses validated by the caller). A task on the same
    two trees as the chunk's previous one starts from the pair that one measured (PERF:
    the poses of a batch are often near each other)."""
    n = stack_rows(meta_a, meta_b)
    stack = np.empty((n, 2), np.int64)
    last_a = np.int64(-1)
    last_b = np.int64(-1)
    ja = np.int64(-1)
    jb = np.int64(-1)
    for k in range(c, tasks.shape[0], nchunks):
        ta = tasks[k, 0]
        tb = tasks[k, 1]
        Ta = poses_a[tasks[k, 2]]
        Tb = poses_b[tasks[k, 3]]
        s = scale_a[ta] + scale_b[tb]
        if not in_band(s, Ta, Tb):
            out[k] = OUT_BAND
            continue
        if ta != last_a or tb != last_b:
            ja = np.int64(-1)
            jb = np.int64(-1)
        found, ja, jb = within_pooled(
            topo_a, bv_a, tris_a, meta_a, ta, Ta, topo_b, bv_b, tris_b, meta_b, tb, Tb, s, kind, thr, ja, jb, stack, stats, k
        )
        out[k] = found
        last_a = ta
        last_b = tb


@njit_driver(_within_chunk)
def within_serial(topo_a, bv_a, tris_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, meta_b, scale_b, poses_b, tasks, kind, thr, out, stats, nchunks):
    """Every task on the calling thread: ``out`` (T,) int8, ``stats`` (T, 2) int64."""
    args = (topo_a, bv_a, tris_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, meta_b, scale_b, poses_b, tasks, kind, thr, out, stats)  # fmt: skip
    for c in range(nchunks):
        call_unlinked(_within_chunk, c, nchunks, args)  # kernels/core/unlinked.py


@njit_driver(_within_chunk, parallel=True)
def within_parallel(topo_a, bv_a, tris_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, meta_b, scale_b, poses_b, tasks, kind, thr, out, stats, nchunks):
    """``within_serial`` over numba threads (tasks interleaved over chunks)."""
    args = (topo_a, bv_a, tris_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, meta_b, scale_b, poses_b, tasks, kind, thr, out, stats)  # fmt: skip
    for c in prange(nchunks):
        call_unlinked(_within_chunk, np.int64(c), nchunks, args)  # kernels/core/unlinked.py
