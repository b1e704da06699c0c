"""Triangle rows as 9-tuples: the leaf step every traversal shares.

A mesh's triangles are a (n, 3, 3) float64 array (row j: vertex, coordinate).
Every leaf pair of every strategy reads a's triangle j as a flat 9-tuple
(x0, y0, z0, x1, ..., z2), maps b's into a's frame with ``linalg.map_triangle``
and rejects pairs whose coordinate boxes miss by exact comparisons before the
exact test. These helpers are that step, written once.

PERF: plain calls; LLVM inlines them (scalars and tuples out, no allocation), and the
array arguments' reference counts cancel in the caller's loop (checked in the optimised IR
of every traversal: no call to them is left in the loops).
"""

from __future__ import annotations

import numpy as np

from ...constants import LEAF_FLAG
from .jit import njit_internal
from .layout import META_NODE_OFF, META_NODES, META_TRI_OFF, META_TRIS
from .linalg import POSE_OK, map_triangle, pose_error, triangle_box


@njit_internal(nogil=True)
def tri_row(tris, j):
    """Triangle ``j`` of ``tris`` (n, 3, 3) as a 9-tuple (x0, y0, z0, ..., z2)."""
    return (
        tris[j, 0, 0], tris[j, 0, 1], tris[j, 0, 2],
        tris[j, 1, 0], tris[j, 1, 1], tris[j, 1, 2],
        tris[j, 2, 0], tris[j, 2, 1], tris[j, 2, 2],
    )  # fmt: skip


@njit_internal(nogil=True)
def map_point(R, t, x, y, z):
    """Point (x, y, z) mapped by p -> R p + t, the operation order of ``linalg.map_triangle``
    (a vertex mapped here and the same vertex mapped in a triangle agree to the bit)."""
    return (
        R[0] * x + R[1] * y + R[2] * z + t[0],
        R[3] * x + R[4] * y + R[5] * z + t[1],
        R[6] * x + R[7] * y + R[8] * z + t[2],
    )


@njit_internal(nogil=True)
def row_offset(R, t, bv_a, ia, bv_b, ib):
    """Centre of node row ``ib`` of b (cols 0-2 of ``bv_b``) mapped by (R, t) into a's frame,
    less the centre of node row ``ia`` of a: 3 floats (``map_point``'s operation order)."""
    cx, cy, cz = map_point(R, t, bv_b[ib, 0], bv_b[ib, 1], bv_b[ib, 2])
    return cx - bv_a[ia, 0], cy - bv_a[ia, 1], cz - bv_a[ia, 2]


@njit_internal(nogil=True)
def mapped_row(R, t, tris, j):
    """Triangle ``j`` of ``tris`` (n, 3, 3) mapped by p -> R p + t (``linalg.map_triangle``:
    R a row-major 9-tuple, t a 3-tuple), as a 9-tuple."""
    return map_triangle(
        R, t,
        tris[j, 0, 0], tris[j, 0, 1], tris[j, 0, 2],
        tris[j, 1, 0], tris[j, 1, 1], tris[j, 1, 2],
        tris[j, 2, 0], tris[j, 2, 1], tris[j, 2, 2],
    )  # fmt: skip


@njit_internal(nogil=True)
def leaf_rows(topo, i, off):
    """(first, end) triangle rows of leaf node ``i``: ``off + topo[i, 0]`` and ``topo[i, 1]`` more
    (``off`` the tree's first triangle in its pool, 0 for a single tree)."""
    f0 = off + topo[i, 0]
    return f0, f0 + topo[i, 1]


@njit_internal(nogil=True)
def mapped_box_row(R, t, tris, j):
    """(B, lx, hx, ly, hy, lz, hz): ``mapped_row`` and its coordinate box (``linalg.triangle_box``)."""
    B = mapped_row(R, t, tris, j)
    lx, hx, ly, hy, lz, hz = triangle_box(B)
    return B, lx, hx, ly, hy, lz, hz


@njit_internal(nogil=True)
def root_pair(stack):
    """Start a descent: the root pair (0, 0) as the only entry of ``stack``; returns top = 1."""
    stack[0, 0] = 0
    stack[0, 1] = 0
    return np.int64(1)


@njit_internal(nogil=True)
def pop_pair(stack, top):
    """(top - 1, i, j): the node pair on top of a (rows, 2) descent stack, popped."""
    top -= 1
    return top, stack[top, 0], stack[top, 1]


@njit_internal(nogil=True)
def leaf_pair(topo_a, ia, off_a, topo_b, ib, off_b):
    """(leaf_a, leaf_b, fa0, fa1, fb0, fb1) of node pair (ia, ib): whether each node is a leaf
    (``LEAF_FLAG`` in topo column 2) and, for a leaf, its triangle rows (``leaf_rows``)."""
    fa0, fa1 = leaf_rows(topo_a, ia, off_a)
    fb0, fb1 = leaf_rows(topo_b, ib, off_b)
    return (topo_a[ia, 2] & LEAF_FLAG) != 0, (topo_b[ib, 2] & LEAF_FLAG) != 0, fa0, fa1, fb0, fb1


@njit_internal(nogil=True)
def tree_rows(meta, k):
    """(n0, n1, f0, f1): the node rows n0:n1 and triangle rows f0:f1 of tree ``k`` of a pool
    (its ``meta`` row, ``core.layout``), the slices that make one tree of the pool's arrays."""
    n0 = meta[k, META_NODE_OFF]
    f0 = meta[k, META_TRI_OFF]
    return n0, n0 + meta[k, META_NODES], f0, f0 + meta[k, META_TRIS]


@njit_internal(nogil=True)
def box_misses(A, lx, hx, ly, hy, lz, hz):
    """True when the coordinate box of triangle ``A`` (9-tuple) misses the box [l, h] along
    some axis. EXACT: comparisons only, on the very coordinates the exact test uses."""
    if max(A[0], max(A[3], A[6])) < lx or min(A[0], min(A[3], A[6])) > hx:
        return True
    if max(A[1], max(A[4], A[7])) < ly or min(A[1], min(A[4], A[7])) > hy:
        return True
    return max(A[2], max(A[5], A[8])) < lz or min(A[2], min(A[5], A[8])) > hz


@njit_internal(nogil=True)
def box_outside_aabb(bv, i, lx, hx, ly, hy, lz, hz, slack):
    """True when the box [l, h] lies outside AABB row ``i`` of ``bv`` (centre 0:3, half
    extents 3:6) widened by ``slack``: no triangle in that box meets the node."""
    return (
        lx > bv[i, 0] + bv[i, 3] + slack
        or hx < bv[i, 0] - bv[i, 3] - slack
        or ly > bv[i, 1] + bv[i, 4] + slack
        or hy < bv[i, 1] - bv[i, 4] - slack
        or lz > bv[i, 2] + bv[i, 5] + slack
        or hz < bv[i, 2] - bv[i, 5] - slack
    )


# PERF: a plain call, once per per-call entry (it stays out of line around its two pose_error
# calls); inline="always" measured +4-6% on the per-call miss (benchmarks.versions,
# miss-overhead intersects per call: 1.75 -> 1.85 us), as a call 0.998-1.005 of the old code.
@njit_internal(nogil=True)
def pose_code(Ta, Tb):
    """0 when both (4, 4) poses are finite rigid transforms, else the per-call entries' error
    return: -(1 + code) for Ta, -(11 + code) for Tb (codes of ``linalg.pose_error``)."""
    ea = pose_error(Ta)
    if ea != POSE_OK:
        return -(1 + ea)
    eb = pose_error(Tb)
    if eb != POSE_OK:
        return -(11 + eb)
    return POSE_OK
