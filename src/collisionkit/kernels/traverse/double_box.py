"""Traversal of two double hierarchies of outer and inner boxes (seed 003, section 6).

The seed's pseudo-code is garbled in the source (the leaf branch repeats one
line thirty times); this is our reconstruction, written down in
docs/seed-003.md:

    intersect(A, B):                         # both solids, b mapped into a's frame
        push (root_a, root_b)
        while stack:
            (x, y) = pop
            if outer(x) and outer(y) are disjoint:       -> skip   (fast reject)
            if inner(x) and inner(y) overlap (certainly): -> True   (fast accept)
            if x or y is INTERIOR: skip       # no original face in it: only its inner box could help
            if x and y are leaves: if some pair of their original triangles
                                   intersects (exact test): -> True
            else: push the children of the larger of x, y (the one that is not a leaf)
        # no surface contact and no inner-box overlap: one solid may contain the other
        return vertex of B in A or vertex of A in B      (exact, containment)

Node boxes are oriented boxes in the layout of ``bvh_traverse._obb_overlap``
(centre, axes rows, half extents). Outer tests are conservative (slack > 0:
err towards overlap); inner tests use a NEGATIVE slack (err towards "no
overlap"), and inner boxes are shrunk and verified inside the original solid
when built, so an inner acceptance is always a true collision. The answer is
therefore exactly the exact answer on the float64 vertices (closed solids
bounded by the hull triangles), the same as ``gjk.intersect_convex_convex``.

Decision codes (per pose): DECIDED_REJECT, DECIDED_INNER, DECIDED_FACES,
DECIDED_CONTAINED.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..core.jit import njit
from ..core.layout import STAT_BV_TESTS, STAT_NODE_PAIRS, STAT_TRI_TESTS
from ..core.linalg import map_triangle, relative_pose
from ..core.tri_rows import box_misses, mapped_box_row, pop_pair, pose_code, root_pair, tri_row
from ..core.unlinked import call_unlinked, njit_driver
from ..proximity.gjk import point_in_mapped_solid, point_in_solid
from ..triangle.tri_tri import tri_tri_intersect_tuples
from .descent import _obb_overlap

_U = 2.0**-53

# topo columns: first child (-1 at leaves), flags, first entry in tri_ids, count
NODE_CHILD = 0
NODE_FLAGS = 1
NODE_TRI_START = 2
NODE_TRI_COUNT = 3
FLAG_LEAF = 1
FLAG_INTERIOR = 2
FLAG_INNER = 4  # the node has a verified inner box

DECIDED_REJECT = 0
DECIDED_INNER = 1
DECIDED_FACES = 2
DECIDED_CONTAINED = 3


@njit(cache=True, nogil=True)
def double_box_task(
    topo_a, outer_a, inner_a, ids_a, tris_a, scale_a, Ta,
    topo_b, outer_b, inner_b, ids_b, tris_b, scale_b, Tb,
    tri_test, stack, stats, srow,
):
    """Decision code for one pose pair (see module docstring); counters into stats[srow]."""
    R, t = relative_pose(Ta, Tb)
    slack = 64.0 * _U * (scale_a + scale_b + abs(t[0]) + abs(t[1]) + abs(t[2]))
    n_bv = 0
    n_tri = 0
    n_pairs = 0
    decided = DECIDED_REJECT
    root_hit = False
    top = root_pair(stack)
    while top > 0:
        top, x, y = pop_pair(stack, top)
        n_pairs += 1
        n_bv += 1
        if not _obb_overlap(R, t, outer_a, x, outer_b, y, slack):
            continue
        if n_pairs == 1:
            root_hit = True
        fx = topo_a[x, NODE_FLAGS]
        fy = topo_b[y, NODE_FLAGS]
        if (fx & FLAG_INNER) != 0 and (fy & FLAG_INNER) != 0:
            n_bv += 1
            if _obb_overlap(R, t, inner_a, x, inner_b, y, -slack):
                decided = DECIDED_INNER
                break
        if (fx & FLAG_INTERIOR) != 0 or (fy & FLAG_INTERIOR) != 0:
            continue
        leaf_x = (fx & FLAG_LEAF) != 0
        leaf_y = (fy & FLAG_LEAF) != 0
        if leaf_x and leaf_y:
            hit = False
            s0 = topo_b[y, NODE_TRI_START]
            for q in range(s0, s0 + topo_b[y, NODE_TRI_COUNT]):
                jb = ids_b[q]
                B, blox, bhix, bloy, bhiy, bloz, bhiz = mapped_box_row(R, t, tris_b, jb)
                r0 = topo_a[x, NODE_TRI_START]
                for p in range(r0, r0 + topo_a[x, NODE_TRI_COUNT]):
                    A = tri_row(tris_a, ids_a[p])
                    if box_misses(A, blox, bhix, bloy, bhiy, bloz, bhiz):
                        continue
                    n_tri += 1
                    if tri_tri_intersect_tuples(A, B, tri_test):
                        hit = True
                        break
                if hit:
                    break
            if hit:
                decided = DECIDED_FACES
                break
            continue
        # descend the larger node that is not a leaf
        size_x = outer_a[x, 12] + outer_a[x, 13] + outer_a[x, 14]
        size_y = outer_b[y, 12] + outer_b[y, 13] + outer_b[y, 14]
        if leaf_y or (not leaf_x and size_x >= size_y):
            c = topo_a[x, NODE_CHILD]
            stack[top, 0] = c + 1
            stack[top, 1] = y
            stack[top + 1, 0] = c
            stack[top + 1, 1] = y
        else:
            c = topo_b[y, NODE_CHILD]
            stack[top, 0] = x
            stack[top, 1] = c + 1
            stack[top + 1, 0] = x
            stack[top + 1, 1] = c
        top += 2
    if decided == DECIDED_REJECT:
        # No surface contact found and no inner overlap: one solid may still
        # contain the other (exact test on one vertex each). A contained solid
        # has overlapping root boxes, so disjoint roots skip it.
        if root_hit:
            B0 = map_triangle(
                R, t, tris_b[0, 0, 0], tris_b[0, 0, 1], tris_b[0, 0, 2],
                tris_b[0, 0, 0], tris_b[0, 0, 1], tris_b[0, 0, 2],
                tris_b[0, 0, 0], tris_b[0, 0, 1], tris_b[0, 0, 2],
            )  # fmt: skip
            if point_in_solid(tris_a, B0[0], B0[1], B0[2]) or point_in_mapped_solid(
                tris_b, R, t, tris_a[0, 0, 0], tris_a[0, 0, 1], tris_a[0, 0, 2]
            ):
                decided = DECIDED_CONTAINED
    stats[srow, STAT_BV_TESTS] += n_bv
    stats[srow, STAT_TRI_TESTS] += n_tri
    stats[srow, STAT_NODE_PAIRS] += n_pairs
    return decided


@njit(cache=True)
def double_box_one(
    topo_a, outer_a, inner_a, ids_a, tris_a, scale_a, Ta,
    topo_b, outer_b, inner_b, ids_b, tris_b, scale_b, Tb, tri_test, stack_size, stats,
):
    """Per-call entry: decision code (>= 0), or a negative pose error like
    bvh_traverse.intersect_one; counters added to stats (1, 4)."""
    code = pose_code(Ta, Tb)
    if code != 0:
        return code
    stack = np.empty((stack_size, 2), np.int64)
    return double_box_task(
        topo_a, outer_a, inner_a, ids_a, tris_a, scale_a, Ta,
        topo_b, outer_b, inner_b, ids_b, tris_b, scale_b, Tb,
        tri_test, stack, stats, np.int64(0),
    )  # fmt: skip


@njit(cache=True, nogil=True)
def _double_box_chunk(
    c, nchunks,
    topo_a, outer_a, inner_a, ids_a, tris_a, scale_a, poses_a,
    topo_b, outer_b, inner_b, ids_b, tris_b, scale_b, poses_b,
    ia, ib, tri_test, stack_size, decided, stats,
):
    """Tasks c, c + nchunks, ... of ``double_box_serial``/``double_box_parallel``."""
    stack = np.empty((stack_size, 2), np.int64)
    for k in range(c, ia.shape[0], nchunks):
        decided[k] = double_box_task(
            topo_a, outer_a, inner_a, ids_a, tris_a, scale_a, poses_a[ia[k]],
            topo_b, outer_b, inner_b, ids_b, tris_b, scale_b, poses_b[ib[k]],
            tri_test, stack, stats, k,
        )  # fmt: skip


# NOTE: two drivers that call the chunk unlinked (kernels/core/unlinked.py); one driver with a
# serial branch linked the chunk's chain into its prange functions and its serial branch
@njit_driver(_double_box_chunk)
def double_box_serial(
    topo_a, outer_a, inner_a, ids_a, tris_a, scale_a, poses_a,
    topo_b, outer_b, inner_b, ids_b, tris_b, scale_b, poses_b,
    ia, ib, tri_test, stack_size, decided, stats, nchunks,
):
    """decided[k] for each task k (poses_a[ia[k]], poses_b[ib[k]]), serially."""
    args = (topo_a, outer_a, inner_a, ids_a, tris_a, scale_a, poses_a, topo_b, outer_b, inner_b, ids_b, tris_b, scale_b, poses_b, ia, ib, tri_test, stack_size, decided, stats)  # fmt: skip
    for c in range(nchunks):
        call_unlinked(_double_box_chunk, c, nchunks, args)  # kernels/core/unlinked.py


@njit_driver(_double_box_chunk, parallel=True)
def double_box_parallel(
    topo_a, outer_a, inner_a, ids_a, tris_a, scale_a, poses_a,
    topo_b, outer_b, inner_b, ids_b, tris_b, scale_b, poses_b,
    ia, ib, tri_test, stack_size, decided, stats, nchunks,
):
    """``double_box_serial`` over numba's threads, chunk c taking tasks c, c + nchunks, ..."""
    args = (topo_a, outer_a, inner_a, ids_a, tris_a, scale_a, poses_a, topo_b, outer_b, inner_b, ids_b, tris_b, scale_b, poses_b, ia, ib, tri_test, stack_size, decided, stats)  # fmt: skip
    for c in prange(nchunks):
        call_unlinked(_double_box_chunk, np.int64(c), nchunks, args)  # kernels/core/unlinked.py
