"""Minimum distance between two meshes by a pruned descent of their BVHs.

Depth-first simultaneous descent that keeps the best squared distance found
so far and drops every node pair whose *lower bound* is not below it (branch
and bound; Larsen et al. 1999, "Fast proximity queries with swept sphere
volumes", and Ericson 2005, 6.6, use the same scheme with other volumes). Two
inner nodes are split together (every pair of their children bounded), a leaf
against an inner node splits the inner one; children pairs are visited nearest
first so the bound tightens early.

Lower bound of a node pair (both tree kinds): b's box is an oriented box in
a's frame (AABB trees: axes = columns of R, only the centre moves; OBB trees:
b's box moved into a's box frame). The distance between two boxes is at
least the distance between A and the axis-aligned box around B in A's frame,
sqrt(sum_i max(0, |t_i| - a_i - e_i)^2) with e_i = sum_j b_j |R_ij|, and
likewise in B's frame; we take the larger. Every gap is reduced by the
volume slack (``constants.BV_SLACK_ULPS`` units of roundoff of the scene
size), so rounding can only lower the bound, never prune a pair that holds
the minimum.

Leaf pairs: b's triangle is mapped into a's frame with ``linalg.map_triangle``
(bit-identical to the intersection queries). For each triangle pair the
exact squared gap between their coordinate boxes is a lower bound; pairs
whose boxes touch are decided by the exact intersection test first
(``tri_tri``): an intersecting pair ends the search with distance 0, so the
distance is 0 exactly when ``intersects`` says True. Disjoint pairs are
measured by ``tri_distance.tri_tri_closest``.

Counters per query: node pairs popped and triangle pairs measured.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange, types

from ...constants import BV_OBB
from ..core.jit import njit, njit_borrowing, njit_internal
from ..core.layout import BV_T, META_DEPTH, META_FANOUT, POSE_T, TOPO_T, TRIS_T
from ..core.lazy import njit_lazy
from ..core.linalg import relative_pose, triangle_box
from ..core.scaling import OUT_OF_BAND, in_band
from ..core.tri_rows import box_misses, leaf_pair, mapped_box_row, mapped_row, pop_pair, pose_code, root_pair, tri_row
from ..core.unlinked import call_unlinked, njit_driver
from ..triangle.tri_distance import tri_tri_closest
from ..triangle.tri_segment import tri_tri_segment
from ..triangle.tri_tri import tri_tri_guigue_tuples
from ..volumes.access import node_extent, node_size
from ..volumes.box import frame_in_frame

_U = 2.0**-53

#: columns of the per-query stats of distance queries
DSTAT_NODE_PAIRS = 0
DSTAT_TRI_PAIRS = 1
N_DSTATS = 2


# forceinline (kernels/core/jit.py): one line, 9 uses per bound (issue 16).
@njit_borrowing(nogil=True, forceinline=True)
def _gap(x, r, slack):
    g = abs(x) - r - slack
    return g if g > 0.0 else 0.0

@njit_internal(nogil=True)
def _edge_gap2(g, r, best):
    """``best`` raised to the squared gap ``g`` along an edge-edge axis A_i x B_j, normalised by
    |A_i x B_j|^2 = 1 - R_ij^2 (``r`` = R_ij; enlarged by 1e-5: poses are rigid only to 1e-6,
    so the bound stays a lower bound); near-parallel pairs (covered by the face axes) skipped."""
    if g > 0.0:
        w = 1.0 - r * r
        if w > 1e-4:
            c = g * g / (w + 1e-5)
            if c > best:
                return c
    return best


@njit_internal(nogil=True)
def _edge_row(best, tq, tp, P0, P1, P2, Q0, Q1, Q2, AP0, AP1, AP2, AQ0, AQ1, AQ2, ap, aq,
              r0, r1, r2, A0, A1, A2, b0, b1, b2, slack):  # fmt: skip
    """``best`` raised by the three edge-edge axes A_i x B_j (j = 0, 1, 2) of box_lower_bound2:
    P, Q the rows p, q != i of R (AP, AQ of |R|), tp, tq and ap, aq the matching components
    of t and a's half extents (axis gap |tq P_j - tp Q_j|), r, A row i of R and |R|."""
    best = _edge_gap2(abs(tq * P0 - tp * Q0) - (ap * AQ0 + aq * AP0 + b1 * A2 + b2 * A1) - slack, r0, best)
    best = _edge_gap2(abs(tq * P1 - tp * Q1) - (ap * AQ1 + aq * AP1 + b0 * A2 + b2 * A0) - slack, r1, best)
    return _edge_gap2(abs(tq * P2 - tp * Q2) - (ap * AQ2 + aq * AP2 + b0 * A1 + b1 * A0) - slack, r2, best)


@njit_internal(nogil=True)
def tri_edges(T):
    """(u, v, n) of triangle T (9-tuple), 9 floats: its edges u = T1 - T0, v = T2 - T0 and
    the (unnormalised) normal n = u x v."""
    ux, uy, uz, vx, vy, vz = T[3] - T[0], T[4] - T[1], T[5] - T[2], T[6] - T[0], T[7] - T[1], T[8] - T[2]
    return ux, uy, uz, vx, vy, vz, uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx


@njit_internal(nogil=True)
def centre_offset(R, t, ea, eb):
    """Centre of b's node (extent ``eb``, b's frame) mapped by (R, t) into a's frame, less the
    centre of a's node (extent ``ea``): 3 floats (extents as ``volumes.access.node_extent``)."""
    cx = eb[0]
    cy = eb[1]
    cz = eb[2]
    return (
        R[0] * cx + R[1] * cy + R[2] * cz + t[0] - ea[0],
        R[3] * cx + R[4] * cy + R[5] * cz + t[1] - ea[1],
        R[6] * cx + R[7] * cy + R[8] * cz + t[2] - ea[2],
    )


# forceinline (kernels/core/jit.py): into node_lower_bound2 only; the per-node-pair bound
# (issue 16: distance 1.6-2x slower with the chain as calls). _pair_lb2 has one site, so
# this compiles once there.
@njit_borrowing(nogil=True, forceinline=True)
def box_lower_bound2(t0, t1, t2, R, AbsR, a0, a1, a2, b0, b1, b2, slack):
    """Squared lower bound of the distance between box A (axis-aligned, half
    extents a, at the origin) and box B (centre t, axes = columns of R, half
    extents b). R, AbsR are row-major 9-tuples."""
    g0 = _gap(t0, a0 + b0 * AbsR[0] + b1 * AbsR[1] + b2 * AbsR[2], slack)
    g1 = _gap(t1, a1 + b0 * AbsR[3] + b1 * AbsR[4] + b2 * AbsR[5], slack)
    g2 = _gap(t2, a2 + b0 * AbsR[6] + b1 * AbsR[7] + b2 * AbsR[8], slack)
    la = g0 * g0 + g1 * g1 + g2 * g2
    h0 = _gap(t0 * R[0] + t1 * R[3] + t2 * R[6], a0 * AbsR[0] + a1 * AbsR[3] + a2 * AbsR[6] + b0, slack)
    h1 = _gap(t0 * R[1] + t1 * R[4] + t2 * R[7], a0 * AbsR[1] + a1 * AbsR[4] + a2 * AbsR[7] + b1, slack)
    h2 = _gap(t0 * R[2] + t1 * R[5] + t2 * R[8], a0 * AbsR[2] + a1 * AbsR[5] + a2 * AbsR[8] + b2, slack)
    lb = h0 * h0 + h1 * h1 + h2 * h2
    best = la if la > lb else lb
    # the 9 edge-edge axes A_i x B_j (as in bv_box.boxes_overlap), one row of A's axes a call
    best = _edge_row(best, t2, t1, R[3], R[4], R[5], R[6], R[7], R[8], AbsR[3], AbsR[4], AbsR[5],
                     AbsR[6], AbsR[7], AbsR[8], a1, a2, R[0], R[1], R[2], AbsR[0], AbsR[1], AbsR[2], b0, b1, b2, slack)
    best = _edge_row(best, t0, t2, R[6], R[7], R[8], R[0], R[1], R[2], AbsR[6], AbsR[7], AbsR[8],
                     AbsR[0], AbsR[1], AbsR[2], a2, a0, R[3], R[4], R[5], AbsR[3], AbsR[4], AbsR[5], b0, b1, b2, slack)
    best = _edge_row(best, t1, t0, R[0], R[1], R[2], R[3], R[4], R[5], AbsR[0], AbsR[1], AbsR[2],
                     AbsR[3], AbsR[4], AbsR[5], a0, a1, R[6], R[7], R[8], AbsR[6], AbsR[7], AbsR[8], b0, b1, b2, slack)
    return best


# forceinline (kernels/core/jit.py): into _pair_lb2, distance_task (the root), first_contact
# and toi._pair_step (one copy each), see above.
@njit_borrowing(nogil=True, forceinline=True)
def node_lower_bound2(kind, R, AbsR, t, bv_a, ia, bv_b, ib, slack):
    """Squared lower bound of the distance between node ia of a and node ib of b
    (trees of volume ``kind``; every kind but OBB is read as its enclosing box)."""
    if kind != BV_OBB:
        ea = node_extent(kind, bv_a, ia)
        eb = node_extent(kind, bv_b, ib)
        t0, t1, t2 = centre_offset(R, t, ea, eb)
        return box_lower_bound2(t0, t1, t2, R, AbsR, ea[3], ea[4], ea[5], eb[3], eb[4], eb[5], slack)
    t0, t1, t2, Rab, Aab = frame_in_frame(R, t, bv_a, ia, bv_b, ib)
    return box_lower_bound2(
        t0, t1, t2, Rab, Aab,
        bv_a[ia, 12], bv_a[ia, 13], bv_a[ia, 14], bv_b[ib, 12], bv_b[ib, 13], bv_b[ib, 14], slack,
    )  # fmt: skip


@njit_internal(nogil=True)
def _box_gap2(alx, ahx, aly, ahy, alz, ahz, blx, bhx, bly, bhy, blz, bhz):
    """Squared distance between two axis-aligned boxes given by min/max (exact
    comparisons; the value is rounded but only used as a bound with slack)."""
    gx = blx - ahx if blx > ahx else (alx - bhx if alx > bhx else 0.0)
    gy = bly - ahy if bly > ahy else (aly - bhy if aly > bhy else 0.0)
    gz = blz - ahz if blz > ahz else (alz - bhz if alz > bhz else 0.0)
    return gx * gx + gy * gy + gz * gz


# forceinline (kernels/core/jit.py): per triangle pair, 2 sites in distance_task (issue 16).
@njit(cache=True, nogil=True, forceinline=True)
def plane_gap2(T, P):
    """Lower bound of the squared distance between triangles T and P: their gap
    along T's (float) normal n, min n.P - max n.T (or the mirror), which bounds
    the distance for ANY direction n; less a bound on the rounding of the dot
    products (8 units of roundoff of |n|_1 times the largest coordinate
    difference). 0 when they overlap along n."""
    ux, uy, uz, vx, vy, vz, nx, ny, nz = tri_edges(T)
    nn = nx * nx + ny * ny + nz * nz
    if not nn > 0.0:
        return 0.0
    p0x = P[0] - T[0]
    p0y = P[1] - T[1]
    p0z = P[2] - T[2]
    p1x = P[3] - T[0]
    p1y = P[4] - T[1]
    p1z = P[5] - T[2]
    p2x = P[6] - T[0]
    p2y = P[7] - T[1]
    p2z = P[8] - T[2]
    s0 = nx * p0x + ny * p0y + nz * p0z
    s1 = nx * p1x + ny * p1y + nz * p1z
    s2 = nx * p2x + ny * p2y + nz * p2z
    t1 = nx * ux + ny * uy + nz * uz
    t2 = nx * vx + ny * vy + nz * vz
    lo_p = min(s0, min(s1, s2))
    hi_p = max(s0, max(s1, s2))
    lo_t = min(0.0, min(t1, t2))
    hi_t = max(0.0, max(t1, t2))
    if lo_p > hi_t:
        g = lo_p - hi_t
    elif lo_t > hi_p:
        g = lo_t - hi_p
    else:
        return 0.0
    m = max(
        max(abs(p0x), max(abs(p0y), abs(p0z))),
        max(max(abs(p1x), max(abs(p1y), abs(p1z))), max(abs(p2x), max(abs(p2y), abs(p2z)))),
    )
    m = max(m, max(max(abs(ux), max(abs(uy), abs(uz))), max(abs(vx), max(abs(vy), abs(vz)))))
    g -= 8.0 * _U * (abs(nx) + abs(ny) + abs(nz)) * m
    if g <= 0.0:
        return 0.0
    return g * g / nn * (1.0 - 4.0 * _U)


# forceinline (kernels/core/jit.py): per triangle of a leaf pair, 2 sites (issue 16).
@njit_borrowing(nogil=True, forceinline=True)
def _min_dot(v, B):
    return min(
        v[0] * B[0] + v[1] * B[1] + v[2] * B[2],
        min(v[0] * B[3] + v[1] * B[4] + v[2] * B[5], v[0] * B[6] + v[1] * B[7] + v[2] * B[8]),
    )


@njit_internal(nogil=True)
def _max_dot(v, A):
    """Largest projection of triangle A's vertices on v (the mirror of ``_min_dot``)."""
    return max(
        v[0] * A[0] + v[1] * A[1] + v[2] * A[2],
        max(v[0] * A[3] + v[1] * A[4] + v[2] * A[5], v[0] * A[6] + v[1] * A[7] + v[2] * A[8]),
    )


# forceinline (kernels/core/jit.py): per b triangle of a leaf pair, 2 sites (distance_task,
# within_task); as a plain call the optimised IR kept it out of line (an array argument:
# refcounts per call, see traverse/rows.py).
@njit_borrowing(nogil=True, forceinline=True)
def _b_leaf_row(R, t, tris_b, jb, v):
    """(B, box (6), sb): b's triangle jb mapped into a's frame (``mapped_box_row``) and its
    smallest projection on v (``_min_dot``), the start of every row of a leaf pair."""
    B, blx, bhx, bly, bhy, blz, bhz = mapped_box_row(R, t, tris_b, jb)
    return B, blx, bhx, bly, bhy, blz, bhz, _min_dot(v, B)


# forceinline (kernels/core/jit.py): per improvement of distance_task (via _improved) and
# within_task (issue 16).
@njit(cache=True, nogil=True, forceinline=True)
def _direction(d2, x1, y1, z1, x2, y2, z2, R):
    """(ok, v, R^T v): the unit direction from (x1, y1, z1) to (x2, y2, z2), d2 apart."""
    if not d2 > 0.0:
        return False, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    il = 1.0 / math.sqrt(d2)
    v = ((x2 - x1) * il, (y2 - y1) * il, (z2 - z1) * il)
    w = (
        R[0] * v[0] + R[3] * v[1] + R[6] * v[2],
        R[1] * v[0] + R[4] * v[1] + R[7] * v[2],
        R[2] * v[0] + R[5] * v[1] + R[8] * v[2],
    )
    return True, v, w


@njit_internal(nogil=True)
def _improved(d2, x1, y1, z1, x2, y2, z2, R, shrink):
    """distance_task's state after a measured pair beat the best: (best, cut, pa (3), pb (3),
    have_v, v, w) with d2 the new best, pa, pb its closest points and v, w its direction
    (``_direction``)."""
    have_v, v, w = _direction(d2, x1, y1, z1, x2, y2, z2, R)
    return d2, d2 * shrink, x1, y1, z1, x2, y2, z2, have_v, v, w


# forceinline (kernels/core/jit.py): per triangle of a leaf pair, 1 site (issue 16).
@njit_borrowing(nogil=True, forceinline=True)
def _tri_leaf_gap2(kind, have_v, v, bv_a, ia, blx, bhx, bly, bhy, blz, bhz, sb, slack):
    """Squared lower bound of the distance between a's node ia and a triangle of b
    (a's frame) with coordinate box [bl, bh] and smallest projection sb on v: the
    gap between the boxes (AABB trees) and the gap along v (when have_v)."""
    g2 = 0.0
    is_obb = kind == BV_OBB
    ea = node_extent(kind, bv_a, ia)
    if not is_obb:
        gx = max(blx - (ea[0] + ea[3]), (ea[0] - ea[3]) - bhx) - slack
        gy = max(bly - (ea[1] + ea[4]), (ea[1] - ea[4]) - bhy) - slack
        gz = max(blz - (ea[2] + ea[5]), (ea[2] - ea[5]) - bhz) - slack
        gx = gx if gx > 0.0 else 0.0
        gy = gy if gy > 0.0 else 0.0
        gz = gz if gz > 0.0 else 0.0
        g2 = (gx * gx + gy * gy + gz * gz) * (1.0 - 8.0 * _U)
    if have_v:
        hi = v[0] * ea[0] + v[1] * ea[1] + v[2] * ea[2]
        if not is_obb:
            hi += abs(v[0]) * ea[3] + abs(v[1]) * ea[4] + abs(v[2]) * ea[5]
        else:
            hi += (
                bv_a[ia, 12] * abs(v[0] * bv_a[ia, 3] + v[1] * bv_a[ia, 4] + v[2] * bv_a[ia, 5])
                + bv_a[ia, 13] * abs(v[0] * bv_a[ia, 6] + v[1] * bv_a[ia, 7] + v[2] * bv_a[ia, 8])
                + bv_a[ia, 14] * abs(v[0] * bv_a[ia, 9] + v[1] * bv_a[ia, 10] + v[2] * bv_a[ia, 11])
            )
        g = sb - hi - slack
        if g > 0.0:
            g = g * g * (1.0 - 8.0 * _U)
            if g > g2:
                g2 = g
    return g2


# forceinline (kernels/core/jit.py): into _pair_lb2 only (issue 16).
@njit_borrowing(nogil=True, forceinline=True)
def dir_gap2(kind, v, w, R, t, bv_a, ia, bv_b, ib, slack):
    """Squared lower bound of the distance between node ia of a and node ib of b
    from their gap along the unit direction v (a's frame; w = R^T v): projection
    onto a unit vector never increases distances. 0 when they overlap along v."""
    ea = node_extent(kind, bv_a, ia)
    eb = node_extent(kind, bv_b, ib)
    d0, d1, d2 = centre_offset(R, t, ea, eb)
    c = v[0] * d0 + v[1] * d1 + v[2] * d2
    if kind != BV_OBB:
        ra = abs(v[0]) * ea[3] + abs(v[1]) * ea[4] + abs(v[2]) * ea[5]
        rb = abs(w[0]) * eb[3] + abs(w[1]) * eb[4] + abs(w[2]) * eb[5]
    else:
        ra = (
            bv_a[ia, 12] * abs(v[0] * bv_a[ia, 3] + v[1] * bv_a[ia, 4] + v[2] * bv_a[ia, 5])
            + bv_a[ia, 13] * abs(v[0] * bv_a[ia, 6] + v[1] * bv_a[ia, 7] + v[2] * bv_a[ia, 8])
            + bv_a[ia, 14] * abs(v[0] * bv_a[ia, 9] + v[1] * bv_a[ia, 10] + v[2] * bv_a[ia, 11])
        )
        rb = (
            bv_b[ib, 12] * abs(w[0] * bv_b[ib, 3] + w[1] * bv_b[ib, 4] + w[2] * bv_b[ib, 5])
            + bv_b[ib, 13] * abs(w[0] * bv_b[ib, 6] + w[1] * bv_b[ib, 7] + w[2] * bv_b[ib, 8])
            + bv_b[ib, 14] * abs(w[0] * bv_b[ib, 9] + w[1] * bv_b[ib, 10] + w[2] * bv_b[ib, 11])
        )
    # v is unit only to rounding: the (1 - 8u) factor and the slack keep it a lower bound
    g = c - ra - rb - slack
    if g <= 0.0:
        return 0.0
    return g * g * (1.0 - 8.0 * _U)


# forceinline (kernels/core/jit.py): one site, distance_task's child loop (issue 16: as a
# call, distance ran 8-10% slower, CPU time per query); the loop gives it one copy where the
# six sites gave six.
@njit_borrowing(nogil=True, forceinline=True)
def _pair_lb2(kind, have_v, v, w, R, AbsR, t, bv_a, ia, bv_b, ib, slack, cut):
    """Node pair lower bound: the cheap directional gap first (it settles most pruned
    pairs), else the box bound."""
    if have_v:
        d = dir_gap2(kind, v, w, R, t, bv_a, ia, bv_b, ib, slack)
        if d >= cut:
            return d
    return node_lower_bound2(kind, R, AbsR, t, bv_a, ia, bv_b, ib, slack)


@njit(cache=True, nogil=True)
def first_contact(topo_a, bv_a, tris_a, topo_b, bv_b, tris_b, R, AbsR, t, kind, slack, stack):
    """Overlap-only descent: the first intersecting triangle pair (leaf order), or (-1, -1).

    Visits every node pair whose boxes overlap within the slack and tests every
    triangle pair whose exact coordinate boxes touch with the exact test, so
    (-1, -1) proves the meshes disjoint. Returns (ja, jb, node pairs, triangle tests).
    PERF: a distance query on touching meshes would otherwise measure many
    triangle pairs (their lower bounds are all 0) before meeting a crossing pair.
    """
    n_pairs = np.int64(0)
    n_tri = np.int64(0)
    top = root_pair(stack)
    while top > 0:
        top, ia, ib = pop_pair(stack, top)
        n_pairs += 1
        if node_lower_bound2(kind, R, AbsR, t, bv_a, ia, bv_b, ib, slack) > 0.0:
            continue
        leaf_a, leaf_b, fa0, fa1, fb0, fb1 = leaf_pair(topo_a, ia, np.int64(0), topo_b, ib, np.int64(0))
        if leaf_a and leaf_b:
            for jb in range(fb0, fb1):
                B, blx, bhx, bly, bhy, blz, bhz = mapped_box_row(R, t, tris_b, jb)
                for ja in range(fa0, fa1):
                    A = tri_row(tris_a, ja)
                    if box_misses(A, blx, bhx, bly, bhy, blz, bhz):
                        continue
                    n_tri += 1
                    if tri_tri_guigue_tuples(A, B):
                        return ja, jb, n_pairs, n_tri
            continue
        if leaf_b or (
            not leaf_a
            and node_size(kind, bv_a, ia) >= node_size(kind, bv_b, ib)
        ):
            c0 = topo_a[ia, 0]
            for c in range(c0, c0 + topo_a[ia, 1]):
                stack[top, 0] = c
                stack[top, 1] = ib
                top += 1
        else:
            c0 = topo_b[ib, 0]
            for c in range(c0, c0 + topo_b[ib, 1]):
                stack[top, 0] = ia
                stack[top, 1] = c
                top += 1
    return np.int64(-1), np.int64(-1), n_pairs, n_tri


@njit_internal(nogil=True)
def child_pairs(topo_a, ia, leaf_a, topo_b, ib, leaf_b):
    """(ca0, cna, cb0, cnb), int64: a popped node pair (ia, ib), not both leaves, is replaced
    by the pairs (ca0 + i, cb0 + j), i < cna, j < cnb: two inner nodes split together, a
    leaf against an inner node splits the inner one."""
    if not leaf_a and not leaf_b:
        return np.int64(topo_a[ia, 0]), np.int64(topo_a[ia, 1]), np.int64(topo_b[ib, 0]), np.int64(topo_b[ib, 1])
    if leaf_b:
        return np.int64(topo_a[ia, 0]), np.int64(topo_a[ia, 1]), np.int64(ib), np.int64(1)
    return np.int64(ia), np.int64(1), np.int64(topo_b[ib, 0]), np.int64(topo_b[ib, 1])


# LENGTH (~250 lines): one best-first descent whose state (the best pair and distance, the
# cut, warm-start seeds, stack, counters) lives in locals and changes at every leaf; the
# node-pair bound is one inlined call site (_pair_lb2, issue 16) and the triangle distance a
# call. Split further, the loop would pass that state through arrays on every node pair.
# Called through a slot (kernels/core/lazy.py, not cold): its callers (the chunks, the
# per-call entry, the robot's clearance, time of impact) do not each compile it again.
_TREE_T = (TOPO_T, BV_T, TRIS_T, POSE_T)  # one tree's arguments
_F64, _I64, _F2D = types.float64, types.int64, types.Array(types.float64, 2, "C")
_STATS_T = types.Array(types.int64, 2, "C")


@njit_lazy(
    _F64(
        *_TREE_T, *_TREE_T, _F64, _I64, _F64, _F64, _I64, _I64,
        _STATS_T, types.Array(types.float64, 1, "C"), _F2D, _F2D, _STATS_T, _I64,
    ),
    cold=False,
    nogil=True,
)  # fmt: skip
def distance_task(
    topo_a,
    bv_a,
    tris_a,
    Ta,
    topo_b,
    bv_b,
    tris_b,
    Tb,
    scale,
    bv_kind,
    upper2,
    shrink,
    seed_a,
    seed_b,
    stack,
    lbs,
    buf,
    out,
    stats,
    row,
):
    """Minimum distance between tree a (pose Ta) and tree b (pose Tb); one tree per pool.

    Searches below ``upper2`` (squared); with ``shrink`` < 1 it prunes every
    pair whose squared lower bound is at least shrink * best (relative-error
    mode: the pair found is within a factor 1/sqrt(shrink) of the minimum)
    and out[row, 11] receives a squared LOWER bound of the true distance
    (min of best and every pruned bound); shrink = 1 is exact. ``seed_a``, ``seed_b`` (leaf-order
    triangle indices, -1 for none) are measured first to start with a bound.
    Writes out[row] = (d2, pa (3, a's frame), pb (3, a's frame), ja, jb) with
    ja, jb leaf-order triangle indices as floats (-1 when nothing is below
    upper2). Returns d2 (inf when nothing is below upper2). When the meshes
    intersect, pa = pb = the midpoint of the first intersecting pair's
    intersection segment (``tri_segment``); ``buf`` is its (24, 3) scratch, or
    (0, 3) for a caller that reads no points (NaN then: the robot's edge search,
    which so never compiles the segment code).
    """
    R, t = relative_pose(Ta, Tb)
    AbsR = (abs(R[0]), abs(R[1]), abs(R[2]), abs(R[3]), abs(R[4]), abs(R[5]), abs(R[6]), abs(R[7]), abs(R[8]))
    slack = 64.0 * _U * (scale + abs(t[0]) + abs(t[1]) + abs(t[2]))
    kind = bv_kind
    best = upper2
    cut = upper2 * shrink  # prune at or above this (shrink < 1: relative-error mode)
    lower = math.inf  # smallest lower bound of anything pruned below best
    bja = -1
    bjb = -1
    pax = math.nan
    pay = math.nan
    paz = math.nan
    pbx = math.nan
    pby = math.nan
    pbz = math.nan
    n_pairs = np.int64(0)
    n_tri = np.int64(0)
    done = False
    # unit direction from a's to b's closest point of the best pair so far (have_v):
    # the gap along it bounds every pair's distance from below and, near the minimum,
    # settles most triangle pairs that the box and plane gaps cannot
    have_v = False
    v = (0.0, 0.0, 0.0)
    w = (0.0, 0.0, 0.0)
    if seed_a >= 0 and seed_b >= 0:
        B = mapped_row(R, t, tris_b, seed_b)
        A = tri_row(tris_a, seed_a)
        n_tri += 1
        if not tri_tri_guigue_tuples(A, B):
            d2, x1, y1, z1, x2, y2, z2 = tri_tri_closest(A, B)
            if d2 < best:
                best, cut, pax, pay, paz, pbx, pby, pbz, have_v, v, w = _improved(d2, x1, y1, z1, x2, y2, z2, R, shrink)
                bja = seed_a
                bjb = seed_b
    top = np.int64(0)
    lb0 = node_lower_bound2(kind, R, AbsR, t, bv_a, np.int64(0), bv_b, np.int64(0), slack)
    if lb0 <= 0.0:
        ja, jb, np0, nt0 = first_contact(topo_a, bv_a, tris_a, topo_b, bv_b, tris_b, R, AbsR, t, kind, slack, stack)
        n_pairs += np0
        n_tri += nt0
        if ja >= 0:
            best = 0.0
            bja = ja
            bjb = jb
            done = True
    if lb0 < cut and not done:
        stack[0, 0] = 0
        stack[0, 1] = 0
        lbs[0] = lb0
        top = np.int64(1)
    elif not done:
        # EXACT: a root pruned (after a seed, or at upper2 * shrink) bounds the rest: its
        # bound belongs in ``lower`` like every other pruned pair's
        lower = min(lower, lb0)
    while top > 0 and not done:
        top, ia, ib = pop_pair(stack, top)
        if lbs[top] >= cut:
            lower = min(lower, lbs[top])
            continue
        n_pairs += 1
        leaf_a, leaf_b, fa0, fa1, fb0, fb1 = leaf_pair(topo_a, ia, np.int64(0), topo_b, ib, np.int64(0))
        if leaf_a and leaf_b:
            for jb in range(fb0, fb1):
                B, blx, bhx, bly, bhy, blz, bhz, sb = _b_leaf_row(R, t, tris_b, jb, v)
                # b's triangle against a's whole leaf first: skips its row of pairs
                lg = _tri_leaf_gap2(kind, have_v, v, bv_a, ia, blx, bhx, bly, bhy, blz, bhz, sb, slack)
                if lg >= cut:
                    lower = min(lower, lg)
                    continue
                for ja in range(fa0, fa1):
                    A = tri_row(tris_a, ja)
                    alx, ahx, aly, ahy, alz, ahz = triangle_box(A)
                    # first_contact found no crossing pair: every pair here is disjoint
                    g2 = _box_gap2(alx, ahx, aly, ahy, alz, ahz, blx, bhx, bly, bhy, blz, bhz)
                    # the box gap is rounded: compare with a margin so it never prunes the minimum
                    g2 = g2 * (1.0 - 8.0 * _U) - slack * slack
                    if g2 >= cut:
                        lower = min(lower, g2)
                        continue
                    if have_v:
                        sa = _max_dot(v, A)
                        gv = sb - sa - slack
                        if gv > 0.0:
                            gv = gv * gv * (1.0 - 8.0 * _U)
                            if gv >= cut:
                                lower = min(lower, gv)
                                continue
                    pg = max(plane_gap2(A, B), plane_gap2(B, A))
                    if pg >= cut:
                        lower = min(lower, pg)
                        continue
                    n_tri += 1
                    d2, x1, y1, z1, x2, y2, z2 = tri_tri_closest(A, B)
                    if d2 < best:
                        best, cut, pax, pay, paz, pbx, pby, pbz, have_v, v, w = _improved(d2, x1, y1, z1, x2, y2, z2, R, shrink)
                        bja = ja
                        bjb = jb
                        if have_v:
                            sb = _min_dot(v, B)
            continue
        # Two inner nodes: both split, every child pair bounded (PERF: issue 15 item 6, per
        # call duck-teddy -9%, bunny -13%: fewer node pairs popped, 1008 -> 869 and 423 -> 293,
        # as most of them survive their bound anyway). A leaf against an inner node: the inner
        # one split. The children pairs k = 0 .. cna * cnb - 1 run through one loop so the
        # node-pair bound keeps a single (inlined) site.
        ca0, cna, cb0, cnb = child_pairs(topo_a, ia, leaf_a, topo_b, ib, leaf_b)
        base = top
        for k in range(cna * cnb):
            na = ca0 + k // cnb
            nb = cb0 + k % cnb
            lc = _pair_lb2(kind, have_v, v, w, R, AbsR, t, bv_a, na, bv_b, nb, slack, cut)
            if lc >= cut:
                lower = min(lower, lc)
                continue
            # insertion: lbs[base:top] in decreasing order, the nearest pair on top (popped
            # first); on equal bounds the earlier pair k is popped first. The bounds do not
            # depend on the order (cut is fixed here).
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
    if done and buf.shape[0] > 0:
        A = tri_row(tris_a, bja)
        B = mapped_row(R, t, tris_b, bjb)
        _flag, x0, y0, z0, x1, y1, z1 = tri_tri_segment(A, B, buf)
        pax = 0.5 * (x0 + x1)
        pay = 0.5 * (y0 + y1)
        paz = 0.5 * (z0 + z1)
        pbx, pby, pbz = pax, pay, paz
    out[row, 11] = min(best, lower)
    out[row, 0] = best
    out[row, 1] = pax
    out[row, 2] = pay
    out[row, 3] = paz
    out[row, 4] = pbx
    out[row, 5] = pby
    out[row, 6] = pbz
    out[row, 7] = bja
    out[row, 8] = bjb
    stats[row, DSTAT_NODE_PAIRS] += n_pairs
    stats[row, DSTAT_TRI_PAIRS] += n_tri
    return best


@njit(cache=True, nogil=True)
def _stack_rows(meta_a, meta_b):
    """Stack rows of distance_task's descent: each pop (at most depth_a + depth_b on a path)
    replaces its pair by at most fanout**2 children pairs."""
    f = max(meta_a[0, META_FANOUT], meta_b[0, META_FANOUT])
    return (meta_a[0, META_DEPTH] + meta_b[0, META_DEPTH]) * (f * f - 1) + 2


@njit_internal(nogil=True)
def _distance_chunk(
    c, nchunks, topo_a, bv_a, tris_a, ids_a, meta_a, poses_a, topo_b, bv_b, tris_b,
    ids_b, meta_b, poses_b, ia, ib, scale, bv_kind, upper2, seeds, out, stats,
):  # fmt: skip
    """Queries c, c + nchunks, ...; rows of ``out`` leave in the WORLD frame with face ids:
    (d, pa (3), pb (3), face_a, face_b, leaf_a, leaf_b, lower bound d2)."""
    n = _stack_rows(meta_a, meta_b)
    stack = np.empty((n, 2), np.int64)
    lbs = np.empty(n)
    buf = np.empty((24, 3))
    for k in range(c, ia.shape[0], nchunks):
        Ta = poses_a[ia[k]]
        d2 = distance_task(
            topo_a, bv_a, tris_a, Ta,
            topo_b, bv_b, tris_b, poses_b[ib[k]],
            scale, bv_kind, upper2, 1.0, seeds[k, 0], seeds[k, 1], stack, lbs, buf, out, stats, k,
        )  # fmt: skip
        _finish_row(out, k, d2, Ta, ids_a, ids_b)


@njit_internal(nogil=True)
def _finish_row(out, k, d2, Ta, ids_a, ids_b):
    """Row k of distance_task's output -> world frame, face ids, distance (not squared)."""
    ja = np.int64(out[k, 7])
    jb = np.int64(out[k, 8])
    out[k, 9] = ja
    out[k, 10] = jb
    if ja < 0:
        out[k, 0] = math.inf
        out[k, 7] = -1.0
        out[k, 8] = -1.0
        return
    out[k, 0] = math.sqrt(d2)
    out[k, 7] = ids_a[ja]
    out[k, 8] = ids_b[jb]
    for e in range(2):
        px = out[k, 1 + 3 * e]
        py = out[k, 2 + 3 * e]
        pz = out[k, 3 + 3 * e]
        for d in range(3):
            out[k, 1 + 3 * e + d] = Ta[d, 0] * px + Ta[d, 1] * py + Ta[d, 2] * pz + Ta[d, 3]


# PERF: the per-call entry keeps the GIL (as bvh_traverse.intersect_one) and takes
# the fewest arguments that suffice: dispatch costs per argument.
@njit(cache=True)
def distance_one(
    topo_a, bv_a, tris_a, ids_a, meta_a, Ta, topo_b, bv_b,
    tris_b, ids_b, meta_b, Tb, scale, bv_kind, upper2, out, stats,
):  # fmt: skip
    """One pose pair: out[0] as _distance_chunk writes it. Returns 0, or a negative
    pose error: -(1 + code) for Ta, -(11 + code) for Tb (codes from linalg.pose_error),
    or ``scaling.OUT_OF_BAND`` (nothing computed) when the pair must be prescaled."""
    code = pose_code(Ta, Tb)
    if code != 0:
        return code
    if not in_band(scale, Ta, Tb):
        return OUT_OF_BAND
    n = _stack_rows(meta_a, meta_b)
    stack = np.empty((n, 2), np.int64)
    lbs = np.empty(n)
    buf = np.empty((24, 3))
    row = np.int64(0)
    none = np.int64(-1)
    d2 = distance_task(
        topo_a, bv_a, tris_a, Ta, topo_b, bv_b, tris_b, Tb,
        scale, bv_kind, upper2, 1.0, none, none, stack, lbs, buf, out, stats, row,
    )  # fmt: skip
    _finish_row(out, row, d2, Ta, ids_a, ids_b)
    return 0


@njit_driver(_distance_chunk)
def distance_serial(topo_a, bv_a, tris_a, ids_a, meta_a, poses_a, topo_b, bv_b, tris_b, ids_b, meta_b, poses_b, ia, ib, scale, bv_kind, upper2, seeds, out, stats, nchunks):
    """Distance for each query k (poses_a[ia[k]], poses_b[ib[k]]); ``out`` (N, 12) rows as in _distance_chunk."""
    args = (topo_a, bv_a, tris_a, ids_a, meta_a, poses_a, topo_b, bv_b, tris_b, ids_b, meta_b, poses_b, ia, ib, scale, bv_kind, upper2, seeds, out, stats)  # fmt: skip
    for c in range(nchunks):
        call_unlinked(_distance_chunk, c, nchunks, args)  # kernels/core/unlinked.py


@njit_driver(_distance_chunk, parallel=True)
def distance_parallel(topo_a, bv_a, tris_a, ids_a, meta_a, poses_a, topo_b, bv_b, tris_b, ids_b, meta_b, poses_b, ia, ib, scale, bv_kind, upper2, seeds, out, stats, nchunks):
    """distance_serial over numba threads (queries interleaved over chunks)."""
    args = (topo_a, bv_a, tris_a, ids_a, meta_a, poses_a, topo_b, bv_b, tris_b, ids_b, meta_b, poses_b, ia, ib, scale, bv_kind, upper2, seeds, out, stats)  # fmt: skip
    for c in prange(nchunks):
        call_unlinked(_distance_chunk, np.int64(c), nchunks, args)
