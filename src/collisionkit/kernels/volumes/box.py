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

from numba import njit


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
