"""Box-box overlap by the separating-axis theorem (seed 001, "Separating Axis Theorem").

Both AABB and OBB trees reduce a node-pair test to one call: box A is
axis-aligned in its own frame with half extents a; box B has half extents b,
axes given by the columns of R (its rotation in A's frame) and centre t in A's
frame. With the 15 candidate axes (3 of A, 3 of B, 9 edge-edge cross
products) A and B are disjoint iff one axis separates them (seed 001,
Korollar "Spezialfall OBBs"); the test reuses R and |R| and needs no
division or square root. Formulas as in Gottschalk et al. 1996 / Ericson 2005.

NOTE: ``slack`` (>= 0, in length units) is added to every projected radius sum,
so rounding can only turn "disjoint" into "overlapping", never the reverse:
callers pass an upper bound of the absolute rounding error of the float64
box arithmetic (constants.BV_SLACK_ULPS units of roundoff of the scene size).
For the same reason the edge-edge axes need no epsilon on |R|: a near-zero
cross product is caught by the slack.
"""

from __future__ import annotations

from ..core.jit import njit
from ..core.linalg import rotate_vector


# inline: the 15-axis test of every node pair in the traversal; LLVM did not inline
# it and the default (AABB) batch ran 11% slower as a call (issue 16).
@njit(cache=True, nogil=True, inline="always")
def boxes_overlap(t0, t1, t2, R, AbsR, a0, a1, a2, b0, b1, b2, slack):
    """True unless one of the 15 axes separates the boxes (conservative by ``slack``).

    R and AbsR are row-major 9-tuples (R[3 * i + j] = A_i . B_j), not arrays.
    PERF: an array argument costs an atomic incref/decref per call, which in
    a traversal loop cost more than the test itself.
    """
    # A's face axes
    if abs(t0) > a0 + b0 * AbsR[0] + b1 * AbsR[1] + b2 * AbsR[2] + slack:
        return False
    if abs(t1) > a1 + b0 * AbsR[3] + b1 * AbsR[4] + b2 * AbsR[5] + slack:
        return False
    if abs(t2) > a2 + b0 * AbsR[6] + b1 * AbsR[7] + b2 * AbsR[8] + slack:
        return False
    # B's face axes
    if abs(t0 * R[0] + t1 * R[3] + t2 * R[6]) > (
        a0 * AbsR[0] + a1 * AbsR[3] + a2 * AbsR[6] + b0 + slack
    ):
        return False
    if abs(t0 * R[1] + t1 * R[4] + t2 * R[7]) > (
        a0 * AbsR[1] + a1 * AbsR[4] + a2 * AbsR[7] + b1 + slack
    ):
        return False
    if abs(t0 * R[2] + t1 * R[5] + t2 * R[8]) > (
        a0 * AbsR[2] + a1 * AbsR[5] + a2 * AbsR[8] + b2 + slack
    ):
        return False
    # A_i x B_j
    if abs(t2 * R[3] - t1 * R[6]) > (
        a1 * AbsR[6] + a2 * AbsR[3] + b1 * AbsR[2] + b2 * AbsR[1] + slack
    ):
        return False
    if abs(t2 * R[4] - t1 * R[7]) > (
        a1 * AbsR[7] + a2 * AbsR[4] + b0 * AbsR[2] + b2 * AbsR[0] + slack
    ):
        return False
    if abs(t2 * R[5] - t1 * R[8]) > (
        a1 * AbsR[8] + a2 * AbsR[5] + b0 * AbsR[1] + b1 * AbsR[0] + slack
    ):
        return False
    if abs(t0 * R[6] - t2 * R[0]) > (
        a0 * AbsR[6] + a2 * AbsR[0] + b1 * AbsR[5] + b2 * AbsR[4] + slack
    ):
        return False
    if abs(t0 * R[7] - t2 * R[1]) > (
        a0 * AbsR[7] + a2 * AbsR[1] + b0 * AbsR[5] + b2 * AbsR[3] + slack
    ):
        return False
    if abs(t0 * R[8] - t2 * R[2]) > (
        a0 * AbsR[8] + a2 * AbsR[2] + b0 * AbsR[4] + b1 * AbsR[3] + slack
    ):
        return False
    if abs(t1 * R[0] - t0 * R[3]) > (
        a0 * AbsR[3] + a1 * AbsR[0] + b1 * AbsR[8] + b2 * AbsR[7] + slack
    ):
        return False
    if abs(t1 * R[1] - t0 * R[4]) > (
        a0 * AbsR[4] + a1 * AbsR[1] + b0 * AbsR[8] + b2 * AbsR[6] + slack
    ):
        return False
    if abs(t1 * R[2] - t0 * R[5]) > (
        a0 * AbsR[5] + a1 * AbsR[2] + b0 * AbsR[7] + b1 * AbsR[6] + slack
    ):
        return False
    return True


# inline: the first half of every oriented node test (OBB overlap, the OBB distance bound,
# the RSS test); a call there would cost what obb_overlap's note measured (15-50%)
@njit(cache=True, nogil=True, inline="always")
def frame_in_frame(R, t, bv_a, ia, bv_b, ib):
    """b's oriented frame in a's: rows of both hold a centre (cols 0-2) and three axes as rows
    (cols 3-11); b is moved by (R, t) into a's tree frame. Returns (t0, t1, t2, Rab, Aab):
    b's centre in a's axes and Rab[3 i + j] = A_i . B_j (9-tuples, Aab the absolute values),
    as ``boxes_overlap`` and ``distance.box_lower_bound2`` take them."""
    mx, my, mz = rotate_vector(R, bv_b[ib, 0], bv_b[ib, 1], bv_b[ib, 2])
    cx = mx + t[0] - bv_a[ia, 0]
    cy = my + t[1] - bv_a[ia, 1]
    cz = mz + t[2] - bv_a[ia, 2]
    a00 = bv_a[ia, 3]
    a01 = bv_a[ia, 4]
    a02 = bv_a[ia, 5]
    a10 = bv_a[ia, 6]
    a11 = bv_a[ia, 7]
    a12 = bv_a[ia, 8]
    a20 = bv_a[ia, 9]
    a21 = bv_a[ia, 10]
    a22 = bv_a[ia, 11]
    # axis j of b in a's frame: u_j = R @ (row j of b's axes)
    u0x, u0y, u0z = rotate_vector(R, bv_b[ib, 3], bv_b[ib, 4], bv_b[ib, 5])
    u1x, u1y, u1z = rotate_vector(R, bv_b[ib, 6], bv_b[ib, 7], bv_b[ib, 8])
    u2x, u2y, u2z = rotate_vector(R, bv_b[ib, 9], bv_b[ib, 10], bv_b[ib, 11])
    r00 = a00 * u0x + a01 * u0y + a02 * u0z
    r01 = a00 * u1x + a01 * u1y + a02 * u1z
    r02 = a00 * u2x + a01 * u2y + a02 * u2z
    r10 = a10 * u0x + a11 * u0y + a12 * u0z
    r11 = a10 * u1x + a11 * u1y + a12 * u1z
    r12 = a10 * u2x + a11 * u2y + a12 * u2z
    r20 = a20 * u0x + a21 * u0y + a22 * u0z
    r21 = a20 * u1x + a21 * u1y + a22 * u1z
    r22 = a20 * u2x + a21 * u2y + a22 * u2z
    Rab = (r00, r01, r02, r10, r11, r12, r20, r21, r22)
    Aab = (abs(r00), abs(r01), abs(r02), abs(r10), abs(r11), abs(r12), abs(r20), abs(r21), abs(r22))
    t0 = a00 * cx + a01 * cy + a02 * cz
    t1 = a10 * cx + a11 * cy + a12 * cz
    t2 = a20 * cx + a21 * cy + a22 * cz
    return t0, t1, t2, Rab, Aab


# inline: the per-node-pair test of the traversal; as a call, OBB queries ran 15-50%
# slower (issue 16, benchmarks micro: intersects/contacts with bv="obb").
@njit(cache=True, nogil=True, inline="always")
def obb_overlap(R, t, bv_a, ia, bv_b, ib, slack):
    """OBB node pair: move b's box into a's frame, express it in a's box frame, SAT
    (rows: centre, axes as rows, half extents; ``bv_a[ia]`` and ``bv_b[ib]``). Shared by the
    intersection descent, the threshold descent (``slack`` widened by the threshold) and the
    robot checker's local boxes.

    R is the row-major 9-tuple of b's rotation in a's frame, t its translation (tuple).
    """
    t0, t1, t2, Rab, Aab = frame_in_frame(R, t, bv_a, ia, bv_b, ib)
    return boxes_overlap(
        t0, t1, t2, Rab, Aab,
        bv_a[ia, 12], bv_a[ia, 13], bv_a[ia, 14],
        bv_b[ib, 12], bv_b[ib, 13], bv_b[ib, 14], slack,
    )
