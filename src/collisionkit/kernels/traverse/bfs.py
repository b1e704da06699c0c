"""Breadth-first ("task queue") traversal of two S-AABB hierarchies, serial and parallel.

Seed 002 (Zhao, Tan & Li 2008), s.3.2 "WFS-Traversal": node pairs of the two
trees are tasks in a FIFO queue (LIVESET). A popped pair is first tested with
the nodes' spheres; if they overlap, the box of a node is also tested when its
sphere-to-box volume ratio reaches its level's threshold (column 10 of a saabb
row, ``kernels/volumes/saabb.py``): box-box when both boxes are respected, box-sphere
when one is, nothing more when neither is. Overlapping pairs split into
subtasks: both nodes inner -> every child pair (4 for binary trees), one leaf ->
the other's children; two leaves -> the exact triangle tests ("fundamental
algorithm"), with each triangle's underlying sphere as a pre-check.

A FIFO queue visits the task tree level by level, so it is run here as levels:
the frontier (the node pairs of one level) is processed in order and its
children form the next frontier. Each task pair has one parent pair, so every
leaf pair - and every triangle pair - is met at most once.

Seed 002, s.4.2 "Parallel-Traversal" (OpenMP there, numba threads here): a
level's frontier is cut into chunks processed in parallel. Chunk c writes its
children into its own slice of the next frontier (a node pair has at most
fan_a * fan_b children) and its leaf pairs into its own slice of a leaf list;
prefix sums over the chunks' counts then compact both, in chunk order, so the
parallel frontier is exactly the serial one. The leaf pairs are tested in
parallel chunks, each writing triangle-pair keys into its own slice of a
scratch buffer (sized by sum of count_a * count_b over its leaf pairs); the
keys are then copied out in chunk order. No two threads ever write the same
element. Boolean queries stop all work at the first hit: the hitting chunk sets
a shared stop flag, every chunk polls it before each leaf pair, and no later
level starts. (The flag is only ever set to 1; when a thread sees it does not
change any answer, only how much work is skipped.)

Exactness: identical to the default traversal (``kernels/traverse/descent.py``):
b's triangles are mapped by ``linalg.map_triangle`` with the relative pose from
``linalg.relative_pose``, decided by the same exact triangle test, and every
volume test (sphere-sphere, box-box, box-sphere) errs only towards overlap by
the same slack 64 u (scale_a + scale_b + |t|_1).

NOTE (seed 002 formula (3) is not used): the paper's box-sphere "distance"
sqrt(X0^2 + Y0^2 + Z0^2) - (R + H) * phi mixes a length with an angle and is
not a distance. Here the box-sphere test is the exact closest-point test
(Arvo 1990; Ericson, Real-Time Collision Detection, s.5.2.5): the squared
distance from the sphere's centre to the box, sum over axes of
max(0, |c_i - b_i| - h_i)^2, against (r + slack)^2.

Counters (seed 001's cost model): n_v counts every volume test (a sphere test
followed by a box test counts 2), n_p the exact triangle tests, node_pairs the
pairs taken from the queue; n_u = 0 (b's volumes never change shape: only
centres are mapped, as in the default AABB test).
"""

from __future__ import annotations

import numpy as np
from numba import prange, types

from ...constants import LEAF_FLAG, MODE_ALL, MODE_ANY
from ..core.jit import njit, njit_internal
from ..core.layout import (
    META_FACES,
    META_FANOUT,
    META_NODE_OFF,
    META_TRI_OFF,
    STAT_BV_TESTS,
    STAT_NODE_PAIRS,
    STAT_TRI_TESTS,
)
from ..core.linalg import relative_pose
from ..core.tri_rows import box_misses, box_outside_aabb, leaf_rows, map_point, mapped_box_row, tri_row
from ..core.unlinked import call_unlinked, njit_driver
from ..triangle.tri_tri import tri_tri_intersect_tuples
from .descent import _aabb_overlap
from .rows import place_rows

_U = 2.0**-53
#: Volume modes (constants.BFS_VOLUMES).
VOL_HYBRID = 0
VOL_AABB = 1
VOL_SPHERE = 2


# inline: the BFS strategy's node-pair test; as a call, contacts with strategy BFS ran
# 1.5-2.5x slower (issue 16).
@njit(cache=True, nogil=True, inline="always")
def _node_test(R, AbsR, t, bv_a, ia, bv_b, ib, slack, volumes, thr):
    """(overlap?, volume tests done) for node pair (ia, ib) of two saabb trees."""
    if volumes != VOL_AABB:
        # b's sphere centre in a's frame
        mx, my, mz = map_point(R, t, bv_b[ib, 6], bv_b[ib, 7], bv_b[ib, 8])
        dx = bv_a[ia, 6] - mx
        dy = bv_a[ia, 7] - my
        dz = bv_a[ia, 8] - mz
        rr = bv_a[ia, 9] + bv_b[ib, 9] + slack
        if dx * dx + dy * dy + dz * dz > rr * rr:
            return False, 1
        if volumes == VOL_SPHERE:
            return True, 1
        box_a = bv_a[ia, 10] >= thr
        box_b = bv_b[ib, 10] >= thr
        if box_a and box_b:
            pass  # box-box below
        elif box_a:
            # a's box against b's sphere (centre m in a's frame): exact closest point.
            ex = max(0.0, abs(mx - bv_a[ia, 0]) - bv_a[ia, 3])
            ey = max(0.0, abs(my - bv_a[ia, 1]) - bv_a[ia, 4])
            ez = max(0.0, abs(mz - bv_a[ia, 2]) - bv_a[ia, 5])
            r = bv_b[ib, 9] + slack
            return ex * ex + ey * ey + ez * ez <= r * r, 2
        elif box_b:
            # b's box against a's sphere: a's centre into b's frame, q = R^T (c - t).
            ux = bv_a[ia, 6] - t[0]
            uy = bv_a[ia, 7] - t[1]
            uz = bv_a[ia, 8] - t[2]
            qx = R[0] * ux + R[3] * uy + R[6] * uz
            qy = R[1] * ux + R[4] * uy + R[7] * uz
            qz = R[2] * ux + R[5] * uy + R[8] * uz
            ex = max(0.0, abs(qx - bv_b[ib, 0]) - bv_b[ib, 3])
            ey = max(0.0, abs(qy - bv_b[ib, 1]) - bv_b[ib, 4])
            ez = max(0.0, abs(qz - bv_b[ib, 2]) - bv_b[ib, 5])
            r = bv_a[ia, 9] + slack
            return ex * ex + ey * ey + ez * ez <= r * r, 2
        else:
            return True, 1
    # Box-box: b's AABB is an OBB in a's frame with axes R's columns (as kernels/traverse/descent.py).
    hit = _aabb_overlap(R, AbsR, t, bv_a, ia, bv_b, ib, slack)
    return hit, (1 if volumes == VOL_AABB else 2)


# inline: wraps the inlined _node_test (per node pair, 2 sites); as a plain call the optimised IR
# kept it out of line with four array arguments.
@njit(cache=True, nogil=True, inline="always")
def _node_pair(R, AbsR, t, topo_a, bv_a, ia, topo_b, bv_b, ib, slack, volumes, thr):
    """(hit, tests, leaf_a, leaf_b): ``_node_test`` of node pair (ia, ib) and whether each
    node is a leaf."""
    hit, tests = _node_test(R, AbsR, t, bv_a, ia, bv_b, ib, slack, volumes, thr)
    return hit, tests, (topo_a[ia, 2] & LEAF_FLAG) != 0, (topo_b[ib, 2] & LEAF_FLAG) != 0


# inline: per expanded node pair, 2 sites; as a plain call the optimised IR kept it out of line
# with four array arguments.
@njit(cache=True, nogil=True, inline="always")
def _children(nxt, k, cur, i, topo_a, ia, leaf_a, topo_b, ib, leaf_b):
    """Write the children pairs of node pair ``cur[i]`` (pool nodes ia, ib; not both leaves)
    to ``nxt[k ...]``: a leaf against an inner node splits the inner one, two inner nodes
    split together. Returns the next free row."""
    if leaf_a:
        c0 = topo_b[ib, 0]
        for c in range(c0, c0 + topo_b[ib, 1]):
            nxt[k, 0] = cur[i, 0]
            nxt[k, 1] = c
            k += 1
    elif leaf_b:
        c0 = topo_a[ia, 0]
        for c in range(c0, c0 + topo_a[ia, 1]):
            nxt[k, 0] = c
            nxt[k, 1] = cur[i, 1]
            k += 1
    else:
        a0 = topo_a[ia, 0]
        b0 = topo_b[ib, 0]
        for ca in range(a0, a0 + topo_a[ia, 1]):
            for cb in range(b0, b0 + topo_b[ib, 1]):
                nxt[k, 0] = ca
                nxt[k, 1] = cb
                k += 1
    return k


# inline: the BFS strategy's leaf-pair loop, with the node test above (issue 16).
@njit(cache=True, nogil=True, inline="always")
def _leaf_pair(
    ia, ib, topo_a, bv_a, tris_a, ids_a, sph_a, ta0, topo_b, tris_b, ids_b, sph_b, tb0, faces_b,
    R, t, slack, tri_spheres, tri_test, keys, kpos, kroom, limit,
):
    """Exact tests of leaf pair (ia, ib) (pool node indices). Keys of intersecting
    triangle pairs go to keys[kpos + i] for i < kroom; stops after ``limit`` pairs.
    Returns (pairs found, exact tests run)."""
    found = 0
    n_tri = 0
    fa0, fa1 = leaf_rows(topo_a, ia, ta0)
    fb0, fb1 = leaf_rows(topo_b, ib, tb0)
    for jb in range(fb0, fb1):
        B, blox, bhix, bloy, bhiy, bloz, bhiz = mapped_box_row(R, t, tris_b, jb)
        if box_outside_aabb(bv_a, ia, blox, bhix, bloy, bhiy, bloz, bhiz, slack):
            continue  # b's triangle misses a's leaf box
        mx = 0.0
        my = 0.0
        mz = 0.0
        rb = 0.0
        if tri_spheres:
            mx, my, mz = map_point(R, t, sph_b[jb, 0], sph_b[jb, 1], sph_b[jb, 2])
            rb = sph_b[jb, 3] + slack
        for ja in range(fa0, fa1):
            A = tri_row(tris_a, ja)
            # Exact box rejection on the very coordinates the exact test uses.
            if box_misses(A, blox, bhix, bloy, bhiy, bloz, bhiz):
                continue
            if tri_spheres:
                # Seed 002's underlying spheres as a pre-check (conservative by slack).
                dx = sph_a[ja, 0] - mx
                dy = sph_a[ja, 1] - my
                dz = sph_a[ja, 2] - mz
                rr = sph_a[ja, 3] + rb
                if dx * dx + dy * dy + dz * dz > rr * rr:
                    continue
            n_tri += 1
            if not tri_tri_intersect_tuples(A, B, tri_test):
                continue
            if found < kroom:
                keys[kpos + found] = np.int64(ids_a[ja]) * faces_b + ids_b[jb]
            found += 1
            if found >= limit:
                return found, n_tri
    return found, n_tri


@njit(cache=True, nogil=True)
def _setup(meta_a, scale_a, tree_a, Ta, meta_b, scale_b, tree_b, Tb):
    R, t = relative_pose(Ta, Tb)
    AbsR = (abs(R[0]), abs(R[1]), abs(R[2]), abs(R[3]), abs(R[4]), abs(R[5]), abs(R[6]), abs(R[7]), abs(R[8]))
    slack = 64.0 * _U * (scale_a[tree_a] + scale_b[tree_b] + abs(t[0]) + abs(t[1]) + abs(t[2]))
    grow = max(1, meta_a[tree_a, META_FANOUT]) * max(1, meta_b[tree_b, META_FANOUT])
    return R, AbsR, t, slack, grow


@njit_internal(nogil=True)
def bfs_task_serial(
    topo_a, bv_a, tris_a, ids_a, sph_a, meta_a, scale_a, tree_a, Ta,
    topo_b, bv_b, tris_b, ids_b, sph_b, meta_b, scale_b, tree_b, Tb,
    volumes, thr, tri_spheres, tri_test, mode, max_pairs,
    keys, wpos, wcap, stats, srow,
):
    """Breadth-first traversal of one (tree a, tree b) pair on one thread (seed 002's SCDA).

    Same contract as ``bvh_traverse.collide_task``: returns the pairs found
    (0/1 for MODE_ANY / MODE_FIRST; max_pairs + 1 when a cap stopped the search),
    writes keys face_a * faces_b + face_b to keys[wpos : wpos + wcap] while room
    lasts (in discovery order; the caller sorts), adds counters to stats[srow].
    """
    R, AbsR, t, slack, grow = _setup(meta_a, scale_a, tree_a, Ta, meta_b, scale_b, tree_b, Tb)
    na0 = meta_a[tree_a, META_NODE_OFF]
    ta0 = meta_a[tree_a, META_TRI_OFF]
    nb0 = meta_b[tree_b, META_NODE_OFF]
    tb0 = meta_b[tree_b, META_TRI_OFF]
    faces_b = meta_b[tree_b, META_FACES]
    n_bv = 0
    n_tri = 0
    n_pairs = 0
    found = 0
    cur = np.empty((64, 2), np.int32)
    nxt = np.empty((64 * grow, 2), np.int32)
    cur[0, 0] = 0
    cur[0, 1] = 0
    m = 1
    done = False
    while m > 0 and not done:
        if nxt.shape[0] < m * grow:
            nxt = np.empty((2 * m * grow, 2), np.int32)
        k = 0
        for i in range(m):
            ia = na0 + cur[i, 0]
            ib = nb0 + cur[i, 1]
            n_pairs += 1
            hit, tests, leaf_a, leaf_b = _node_pair(R, AbsR, t, topo_a, bv_a, ia, topo_b, bv_b, ib, slack, volumes, thr)
            n_bv += tests
            if not hit:
                continue
            if leaf_a and leaf_b:
                if mode == MODE_ALL:
                    limit = max_pairs + 1 - found if max_pairs >= 0 else np.int64(1) << 62
                else:
                    limit = 1
                got, nt = _leaf_pair(
                    ia, ib, topo_a, bv_a, tris_a, ids_a, sph_a, ta0, topo_b, tris_b, ids_b, sph_b, tb0, faces_b,
                    R, t, slack, tri_spheres, tri_test, keys, wpos + found, max(0, wcap - found), limit,
                )
                n_tri += nt
                found += got
                if got >= limit:
                    done = True
                    break
                continue
            k = _children(nxt, k, cur, i, topo_a, ia, leaf_a, topo_b, ib, leaf_b)
        tmp = cur
        cur = nxt
        nxt = tmp
        m = k
    stats[srow, STAT_BV_TESTS] += n_bv
    stats[srow, STAT_TRI_TESTS] += n_tri
    stats[srow, STAT_NODE_PAIRS] += n_pairs
    if mode == MODE_ANY:
        return min(found, 1)
    return found


@njit_internal(nogil=True)
def _expand_chunk(
    c, nch, cur, m, nxt, grow, leaves, cnt, cstats,
    topo_a, bv_a, na0, topo_b, bv_b, nb0, R, AbsR, t, slack, volumes, thr,
):
    """Level step of chunk c of nch over cur[0:m]: children into nxt[grow * i0 ...],
    overlapping leaf pairs into leaves[i0 ...]; counts into cnt[c, 0:2]."""
    i0 = (c * m) // nch
    i1 = ((c + 1) * m) // nch
    k = grow * i0
    nl = i0
    n_bv = 0
    for i in range(i0, i1):
        ia = na0 + cur[i, 0]
        ib = nb0 + cur[i, 1]
        hit, tests, leaf_a, leaf_b = _node_pair(R, AbsR, t, topo_a, bv_a, ia, topo_b, bv_b, ib, slack, volumes, thr)
        n_bv += tests
        if not hit:
            continue
        if leaf_a and leaf_b:
            leaves[nl, 0] = cur[i, 0]
            leaves[nl, 1] = cur[i, 1]
            nl += 1
        else:
            k = _children(nxt, k, cur, i, topo_a, ia, leaf_a, topo_b, ib, leaf_b)
    cnt[c, 0] = k - grow * i0
    cnt[c, 1] = nl - i0
    cstats[c, STAT_BV_TESTS] += n_bv
    cstats[c, STAT_NODE_PAIRS] += i1 - i0


@njit_internal(nogil=True)
def _compact_chunk(c, nch, m, grow, src, src_leaves, cnt, off, dst, dst_leaves):
    """Copy chunk c's children and leaf pairs to their compacted places (off[c, 0:2])."""
    i0 = (c * m) // nch
    s = grow * i0
    d = off[c, 0]
    for k in range(cnt[c, 0]):
        dst[d + k, 0] = src[s + k, 0]
        dst[d + k, 1] = src[s + k, 1]
    d = off[c, 1]
    for k in range(cnt[c, 1]):
        dst_leaves[d + k, 0] = src_leaves[i0 + k, 0]
        dst_leaves[d + k, 1] = src_leaves[i0 + k, 1]


@njit_internal(nogil=True)
def _leaf_chunk(
    c, lch, ll, nl, koff, scratch, kf, cstats, stop,
    topo_a, bv_a, tris_a, ids_a, sph_a, na0, ta0, topo_b, tris_b, ids_b, sph_b, nb0, tb0, faces_b,
    R, t, slack, tri_spheres, tri_test, mode, max_pairs,
):
    """Exact tests of leaf pairs ll[j0:j1] (chunk c of lch): keys into
    scratch[koff[c] ...], count into kf[c]. Boolean modes poll/set ``stop``."""
    j0 = (c * nl) // lch
    j1 = ((c + 1) * nl) // lch
    found = 0
    n_tri = 0
    for j in range(j0, j1):
        if mode != MODE_ALL:
            if stop[0] != 0:
                break
            limit = 1
        elif max_pairs >= 0:
            # No chunk needs more than max_pairs + 1 keys: the output keeps the
            # first max_pairs + 1 in chunk order.
            limit = max_pairs + 1 - found
        else:
            limit = np.int64(1) << 62
        got, nt = _leaf_pair(
            na0 + ll[j, 0], nb0 + ll[j, 1], topo_a, bv_a, tris_a, ids_a, sph_a, ta0,
            topo_b, tris_b, ids_b, sph_b, tb0, faces_b,
            R, t, slack, tri_spheres, tri_test, scratch, koff[c] + found, koff[c + 1] - koff[c] - found, limit,
        )
        n_tri += nt
        found += got
        if got >= limit:
            if mode != MODE_ALL:
                stop[0] = 1
            break
    kf[c] = found
    cstats[c, STAT_TRI_TESTS] += n_tri


# The level steps' argument types from ``bfs_query_frontier``'s (its chunks are called through
# slots: ``core/unlinked.py``); the driver's own arrays and ``_setup``'s pose terms.
_I32_2 = types.Array(types.int32, 2, "C")
_I64_1 = types.Array(types.int64, 1, "C")
_I64_2 = types.Array(types.int64, 2, "C")
_F9 = types.UniTuple(types.float64, 9)
_F3 = types.UniTuple(types.float64, 3)
_INT = types.int64


def _expand_types(*a: types.Type) -> tuple:
    """``_expand_chunk``'s arguments less (c, nch), from the driver's argument types ``a``."""
    return (_I32_2, _INT, _I32_2, _INT, _I32_2, _I64_2, _I64_2, a[0], a[1], _INT, a[8], a[9], _INT, _F9, _F9, _F3,
            types.float64, a[17], a[18])  # fmt: skip


def _compact_types(*a: types.Type) -> tuple:
    """``_compact_chunk``'s arguments less (c, nch)."""
    return (_INT, _INT, _I32_2, _I32_2, _I64_2, _I64_2, _I32_2, _I32_2)


def _leaf_types(*a: types.Type) -> tuple:
    """``_leaf_chunk``'s arguments less (c, lch)."""
    return (_I32_2, _INT, _I64_1, _I64_1, _I64_1, _I64_2, _I64_1, a[0], a[1], a[2], a[3], a[4], _INT, _INT, a[8],
            a[10], a[11], a[12], _INT, _INT, _INT, _F9, _F3, types.float64, a[19], a[20], a[21], a[22])  # fmt: skip


# LENGTH (~140 lines): the four phases of one frontier level (expand, compact, leaf tests,
# keys out in serial order) are chunk kernels already; what stays is the level loop: its
# prange launches and the serial steps between them that size the shared buffers, which a
# split would pass around as a dozen array arguments per level.
# NOTE: a driver of three chunk steps (the level's volume tests, its compaction, its leaf
# pairs), each called through a slot: linked, numba optimised and generated each chunk's
# whole chain again in the driver and in each of its three parallel loops (the bfs warm-up
# group's largest compile, issue 32)
@njit_driver(
    _expand_chunk, _expand_types, more_chunks=((_compact_chunk, _compact_types), (_leaf_chunk, _leaf_types)),
    parallel=True,
)
def bfs_query_frontier(
    topo_a, bv_a, tris_a, ids_a, sph_a, meta_a, scale_a, poses_a,
    topo_b, bv_b, tris_b, ids_b, sph_b, meta_b, scale_b, poses_b,
    tasks, volumes, thr, tri_spheres, tri_test, mode, max_pairs,
    keys, starts, counts, stats, max_chunks, min_frontier,
):
    """Tasks one after another, each with its levels processed in parallel (seed 002's PCDA).

    Levels with fewer than ``min_frontier`` node pairs (and leaf lists with
    fewer than min_frontier / 4 pairs) run on one chunk without a parallel
    launch. Keys of task k go to keys[starts[k] : starts[k] + counts[k]]
    (sorted) when they fit in the rest of ``keys``; else starts[k] = -1 (the
    caller reruns it with room). Results are identical to ``bfs_task_serial``
    (same frontier order, same first pairs under a cap).
    """
    cap = keys.shape[0]
    cursor = 0
    zero = np.int64(0)  # not literals: one signature per helper
    one = np.int64(1)
    for task in range(tasks.shape[0]):
        tree_a = tasks[task, 0]
        tree_b = tasks[task, 1]
        R, AbsR, t, slack, grow = _setup(meta_a, scale_a, tree_a, poses_a[tasks[task, 2]], meta_b, scale_b, tree_b, poses_b[tasks[task, 3]])
        na0 = meta_a[tree_a, META_NODE_OFF]
        ta0 = meta_a[tree_a, META_TRI_OFF]
        nb0 = meta_b[tree_b, META_NODE_OFF]
        tb0 = meta_b[tree_b, META_TRI_OFF]
        faces_b = meta_b[tree_b, META_FACES]
        room = cap - cursor
        found = 0
        cur = np.empty((64, 2), np.int32)
        nxt = np.empty((64 * grow, 2), np.int32)
        leaves = np.empty((64, 2), np.int32)
        ll = np.empty((64, 2), np.int32)
        scratch = np.empty(64, np.int64)
        # NOTE: np.empty and plain loops, not np.zeros: in a parallel=True function
        # numba may fuse an np.zeros allocation into the following prange and give
        # each thread its own copy (measured: a stop flag set inside the prange
        # read back as 0 after it).
        cstats = np.empty((max_chunks, 4), np.int64)
        cnt = np.empty((max_chunks, 2), np.int64)
        off = np.empty((max_chunks, 2), np.int64)
        koff = np.empty(max_chunks + 1, np.int64)
        kf = np.empty(max_chunks, np.int64)
        stop = np.empty(1, np.int64)
        stop[0] = 0
        koff[max_chunks] = 0
        for c in range(max_chunks):
            kf[c] = 0
            koff[c] = 0
            for q in range(2):
                cnt[c, q] = 0
                off[c, q] = 0
            for q in range(4):
                cstats[c, q] = 0
        cur[0, 0] = 0
        cur[0, 1] = 0
        m = one  # int64 values, never literals: one signature per helper
        done = False
        while m > 0 and not done:
            if nxt.shape[0] < m * grow:
                nxt = np.empty((2 * m * grow, 2), np.int32)
            if leaves.shape[0] < m:
                leaves = np.empty((2 * m, 2), np.int32)
            # -- 1. volume tests of the level, children and leaf pairs per chunk
            nch = one
            if m >= min_frontier:
                nch = min(max_chunks, max(2, -(-m // 64)))
            # NOTE: each call builds its argument tuple (a tuple made before a prange is passed
            # to the parallel loop's body as one argument, which numba's gufuncs refuse)
            if nch == 1:
                call_unlinked(_expand_chunk, zero, one, (
                    cur, m, nxt, grow, leaves, cnt, cstats, topo_a, bv_a, na0, topo_b, bv_b, nb0, R, AbsR, t, slack,
                    volumes, thr))  # fmt: skip
            else:
                for c in prange(nch):
                    call_unlinked(_expand_chunk, np.int64(c), nch, (
                        cur, m, nxt, grow, leaves, cnt, cstats, topo_a, bv_a, na0, topo_b, bv_b, nb0, R, AbsR, t, slack,
                        volumes, thr))  # fmt: skip
            # -- 2. prefix sums, then compaction in chunk order
            nn = zero
            nl = zero
            for c in range(nch):
                off[c, 0] = nn
                off[c, 1] = nl
                nn += cnt[c, 0]
                nl += cnt[c, 1]
            if nch == 1:
                tmp = cur
                cur = nxt
                nxt = tmp
                tmp = ll
                ll = leaves
                leaves = tmp
            else:
                if cur.shape[0] < nn:
                    cur = np.empty((2 * nn, 2), np.int32)
                if ll.shape[0] < nl:
                    ll = np.empty((2 * nl, 2), np.int32)
                for c in prange(nch):
                    call_unlinked(_compact_chunk, np.int64(c), nch, (m, grow, nxt, leaves, cnt, off, cur, ll))
            m = nn
            if nl == 0:
                continue
            # -- 3. exact tests of the level's leaf pairs, per chunk
            lch = one
            if 4 * nl >= min_frontier:
                lch = min(max_chunks, max(2, -(-nl // 16)))
            koff[0] = 0
            for c in range(lch):
                j0 = (c * nl) // lch
                j1 = ((c + 1) * nl) // lch
                bound = 0
                for j in range(j0, j1):
                    bound += topo_a[na0 + ll[j, 0], 1] * topo_b[nb0 + ll[j, 1], 1]
                if mode != MODE_ALL:
                    bound = min(bound, 1)
                elif max_pairs >= 0:
                    bound = min(bound, max_pairs + 1)
                koff[c + 1] = koff[c] + bound
            if scratch.shape[0] < koff[lch]:
                scratch = np.empty(2 * koff[lch], np.int64)
            if lch == 1:
                call_unlinked(_leaf_chunk, zero, one, (
                    ll, nl, koff, scratch, kf, cstats, stop, topo_a, bv_a, tris_a, ids_a, sph_a, na0, ta0, topo_b, tris_b,
                    ids_b, sph_b, nb0, tb0, faces_b, R, t, slack, tri_spheres, tri_test, mode, max_pairs))  # fmt: skip
            else:
                for c in prange(lch):
                    call_unlinked(_leaf_chunk, np.int64(c), lch, (
                        ll, nl, koff, scratch, kf, cstats, stop, topo_a, bv_a, tris_a, ids_a, sph_a, na0, ta0, topo_b,
                        tris_b, ids_b, sph_b, nb0, tb0, faces_b, R, t, slack, tri_spheres, tri_test, mode, max_pairs))  # fmt: skip
            # -- 4. keys out in chunk order (the serial discovery order)
            for c in range(lch):
                for i in range(kf[c]):
                    if found < room:
                        keys[cursor + found] = scratch[koff[c] + i]
                    found += 1
                    if mode != MODE_ALL or (max_pairs >= 0 and found > max_pairs):
                        done = True
                        break
                if done:
                    break
        for c in range(max_chunks):
            for s in range(4):
                stats[task, s] += cstats[c, s]
        cursor = place_rows(keys, cursor, room, found, mode, max_pairs, starts, counts, task)


@njit_internal(nogil=True)
def _bfs_run_chunk(
    c, nchunks,
    topo_a, bv_a, tris_a, ids_a, sph_a, meta_a, scale_a, poses_a,
    topo_b, bv_b, tris_b, ids_b, sph_b, meta_b, scale_b, poses_b,
    tasks, volumes, thr, tri_spheres, tri_test, mode, max_pairs,
    keys, chunk_cap, starts, counts, stats,
):
    """Tasks c, c + nchunks, ... (serial traversal each) into keys[c*chunk_cap:(c+1)*chunk_cap]."""
    cursor = c * chunk_cap
    end = cursor + chunk_cap
    for k in range(c, tasks.shape[0], nchunks):
        room = end - cursor
        found = bfs_task_serial(
            topo_a, bv_a, tris_a, ids_a, sph_a, meta_a, scale_a, tasks[k, 0], poses_a[tasks[k, 2]],
            topo_b, bv_b, tris_b, ids_b, sph_b, meta_b, scale_b, tasks[k, 1], poses_b[tasks[k, 3]],
            volumes, thr, tri_spheres, tri_test, mode, max_pairs,
            keys, cursor, room, stats, k,
        )
        cursor = place_rows(keys, cursor, room, found, mode, max_pairs, starts, counts, k)


@njit_driver(_bfs_run_chunk)
def bfs_query_serial(
    topo_a, bv_a, tris_a, ids_a, sph_a, meta_a, scale_a, poses_a,
    topo_b, bv_b, tris_b, ids_b, sph_b, meta_b, scale_b, poses_b,
    tasks, volumes, thr, tri_spheres, tri_test, mode, max_pairs,
    keys, chunk_cap, starts, counts, stats, nchunks,
):
    """Batch, one thread: the same chunk layout as bfs_query_poses."""
    args = (topo_a, bv_a, tris_a, ids_a, sph_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, ids_b, sph_b, meta_b, scale_b, poses_b, tasks, volumes, thr, tri_spheres, tri_test, mode, max_pairs, keys, chunk_cap, starts, counts, stats)  # fmt: skip
    for c in range(nchunks):
        call_unlinked(_bfs_run_chunk, c, nchunks, args)  # kernels/core/unlinked.py


@njit_driver(_bfs_run_chunk, parallel=True)
def bfs_query_poses(
    topo_a, bv_a, tris_a, ids_a, sph_a, meta_a, scale_a, poses_a,
    topo_b, bv_b, tris_b, ids_b, sph_b, meta_b, scale_b, poses_b,
    tasks, volumes, thr, tri_spheres, tri_test, mode, max_pairs,
    keys, chunk_cap, starts, counts, stats, nchunks,
):
    """Batch parallel over poses (tasks interleaved over chunks, as the default
    strategy's ``query_parallel``), each task traversed serially."""
    args = (topo_a, bv_a, tris_a, ids_a, sph_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, ids_b, sph_b, meta_b, scale_b, poses_b, tasks, volumes, thr, tri_spheres, tri_test, mode, max_pairs, keys, chunk_cap, starts, counts, stats)  # fmt: skip
    for c in prange(nchunks):
        call_unlinked(_bfs_run_chunk, np.int64(c), nchunks, args)  # kernels/core/unlinked.py
