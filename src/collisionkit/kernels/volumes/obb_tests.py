"""Three OBB-OBB overlap tests, with operation counters (seed 004 section 1.5 and 3, seed 001).

A box row is (centre(3), axes as rows(9), half extents(3)) in a common frame,
the layout of OBB tree nodes.

* ``OBB_TEST_SAT``: the separating-axis test over 15 axes (Gottschalk et al.
  1996; seed 004 Theorem 2, seed 001 "Separating Axis Theorem"), the test the
  trees use (kernels/volumes/box.py). Exact up to rounding.
* ``OBB_TEST_EDGE_FACE``: seed 004 Theorem 1: two polyhedra intersect without
  one containing the other iff an edge of one crosses a face of the other:
  2 x 6 faces x 12 edges = 144 edge/face tests, each solving
  (u, v, P1 - P2) (alpha, beta, lambda)^T = P1 - A by Cramer's rule (seed 004
  eq. 4) and checking 0 <= alpha, beta, lambda <= 1.
* ``OBB_TEST_FRONT_FACES``: seed 004's proposal: only the three faces of
  each box that face the other (cos of the angle between the centre-to-centre
  vector and the face normal > 0; six "operations"), and only the nine edges
  of those faces: 2 x 3 x 9 = 54 edge/face tests, 60 in all.

NOTE: Theorem 1 excludes containment: a box entirely inside the other crosses
no face, so both edge/face tests end with a containment check (is either
box's centre inside the other box; if one box contains the other it contains
its centre). The seed does not mention it; without it a box inside another
reads as "disjoint".

NOTE: an edge parallel to a face plane (det = 0) is skipped: in general
position some other edge crosses a face; touching configurations (measure
zero for random boxes) can differ from the SAT there.

Counters (per call, added to ``ops``): ops[0] = elementary tests (axis tests
for the SAT; edge/face solves, the six face-orientation cosines and the two
containment checks for the others), ops[1] = floating-point operations
(multiplications, additions, divisions, abs/compare counted one each, as
executed: early exits stop counting).
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit, njit_internal
from .box import boxes_overlap

OBB_TEST_SAT = 0
OBB_TEST_EDGE_FACE = 1
OBB_TEST_FRONT_FACES = 2
#: The two edge/face tests as the seed states them, without the containment check
#: (for the experiment that shows why it is needed).
OBB_TEST_EDGE_FACE_ONLY = 3
OBB_TEST_FRONT_FACES_ONLY = 4
OBB_TESTS = {"sat": OBB_TEST_SAT, "edge_face": OBB_TEST_EDGE_FACE, "front_faces": OBB_TEST_FRONT_FACES}

#: flops of the SAT set-up: R = A B^T (9 dots of 3: 45), |R| (9), d = cb - ca (3), t = A d (15)
_SAT_SETUP = 72
#: flops of each of the 15 axis tests in order (3 A faces, 3 B faces, 9 edge pairs)
_SAT_AXIS = (8, 8, 8, 13, 13, 13, 12, 12, 12, 12, 12, 12, 12, 12, 12)


@njit_internal(nogil=True)
def obb_overlap_sat(A, B, ops, count):
    """15-axis SAT for box rows A, B (no slack). With ``count``, ops[0] += axes
    tested (replayed after the fact, so timings are taken with count = False)."""
    # R[i, j] = A_i . B_j, t = A (cb - ca) in A's frame
    r00 = A[3] * B[3] + A[4] * B[4] + A[5] * B[5]
    r01 = A[3] * B[6] + A[4] * B[7] + A[5] * B[8]
    r02 = A[3] * B[9] + A[4] * B[10] + A[5] * B[11]
    r10 = A[6] * B[3] + A[7] * B[4] + A[8] * B[5]
    r11 = A[6] * B[6] + A[7] * B[7] + A[8] * B[8]
    r12 = A[6] * B[9] + A[7] * B[10] + A[8] * B[11]
    r20 = A[9] * B[3] + A[10] * B[4] + A[11] * B[5]
    r21 = A[9] * B[6] + A[10] * B[7] + A[11] * B[8]
    r22 = A[9] * B[9] + A[10] * B[10] + A[11] * B[11]
    dx = B[0] - A[0]
    dy = B[1] - A[1]
    dz = B[2] - A[2]
    t0 = A[3] * dx + A[4] * dy + A[5] * dz
    t1 = A[6] * dx + A[7] * dy + A[8] * dz
    t2 = A[9] * dx + A[10] * dy + A[11] * dz
    R = (r00, r01, r02, r10, r11, r12, r20, r21, r22)
    AbsR = (abs(r00), abs(r01), abs(r02), abs(r10), abs(r11), abs(r12), abs(r20), abs(r21), abs(r22))
    hit = boxes_overlap(t0, t1, t2, R, AbsR, A[12], A[13], A[14], B[12], B[13], B[14], 0.0)
    if not count:
        return hit
    # which axis separated: recount by replaying (only for the counters)
    n_axes = 15 if hit else _first_separating_axis(t0, t1, t2, R, AbsR, A[12], A[13], A[14], B[12], B[13], B[14]) + 1
    ops[0] += n_axes
    flops = _SAT_SETUP
    for k in range(n_axes):
        flops += _SAT_AXIS[k]
    ops[1] += flops
    return hit


@njit_internal(nogil=True)
def _first_separating_axis(t0, t1, t2, R, AbsR, a0, a1, a2, b0, b1, b2):
    """Index (0..14) of the first axis, in boxes_overlap's order, that separates."""
    t = (t0, t1, t2)
    a = (a0, a1, a2)
    b = (b0, b1, b2)
    for i in range(3):
        if abs(t[i]) > a[i] + b0 * AbsR[3 * i] + b1 * AbsR[3 * i + 1] + b2 * AbsR[3 * i + 2]:
            return i
    for j in range(3):
        if abs(t0 * R[j] + t1 * R[3 + j] + t2 * R[6 + j]) > a0 * AbsR[j] + a1 * AbsR[3 + j] + a2 * AbsR[6 + j] + b[j]:
            return 3 + j
    k = 6
    for i in range(3):
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        for j in range(3):
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            lhs = abs(t[i2] * R[3 * i1 + j] - t[i1] * R[3 * i2 + j])
            rhs = (
                a[i1] * AbsR[3 * i2 + j]
                + a[i2] * AbsR[3 * i1 + j]
                + b[j1] * AbsR[3 * i + j2]
                + b[j2] * AbsR[3 * i + j1]
            )
            if lhs > rhs:
                return k
            k += 1
    return 14


@njit_internal(nogil=True)
def _corners(X, out):
    """The 8 corners of box row X into out (8, 3); corner c has sign bit i of c on axis i."""
    for c in range(8):
        s0 = X[12] if c & 1 else -X[12]
        s1 = X[13] if c & 2 else -X[13]
        s2 = X[14] if c & 4 else -X[14]
        for d in range(3):
            out[c, d] = X[d] + s0 * X[3 + d] + s1 * X[6 + d] + s2 * X[9 + d]


@njit_internal(nogil=True)
def _edge_crosses_face(px, py, pz, qx, qy, qz, ax, ay, az, ux, uy, uz, vx, vy, vz, ops):
    """Does segment P..Q cross the parallelogram A + alpha u + beta v (0 <= alpha, beta <= 1)?

    Seed 004 eq. 4: (u, v, P - Q) (alpha, beta, lambda)^T = P - A by Cramer.
    """
    wx = px - qx
    wy = py - qy
    wz = pz - qz
    rx = px - ax
    ry = py - ay
    rz = pz - az
    det = ux * (vy * wz - vz * wy) - vx * (uy * wz - uz * wy) + wx * (uy * vz - uz * vy)
    ops[0] += 1
    ops[1] += 6 + 17
    if det == 0.0:
        return False
    inv = 1.0 / det
    alpha = (rx * (vy * wz - vz * wy) - vx * (ry * wz - rz * wy) + wx * (ry * vz - rz * vy)) * inv
    ops[1] += 1 + 18 + 2
    if alpha < 0.0 or alpha > 1.0:
        return False
    beta = (ux * (ry * wz - rz * wy) - rx * (uy * wz - uz * wy) + wx * (uy * rz - uz * ry)) * inv
    ops[1] += 18 + 2
    if beta < 0.0 or beta > 1.0:
        return False
    lam = (ux * (vy * rz - vz * ry) - vx * (uy * rz - uz * ry) + rx * (uy * vz - uz * vy)) * inv
    ops[1] += 18 + 2
    return 0.0 <= lam <= 1.0


#: The 12 edges of a box as corner pairs (corner bit i = + side of axis i).
_EDGES = np.array([[0, 1], [2, 3], [4, 5], [6, 7], [0, 2], [1, 3], [4, 6], [5, 7], [0, 4], [1, 5], [2, 6], [3, 7]])
#: Edges on each face: face 2 * axis + side (side 1 = + side); 4 edges each.
_FACE_EDGES = np.array(
    [
        [4, 6, 8, 10], [5, 7, 9, 11],  # x = -, x = +
        [0, 2, 8, 9], [1, 3, 10, 11],  # y
        [0, 1, 4, 5], [2, 3, 6, 7],  # z
    ]
)  # fmt: skip


@njit_internal(nogil=True)
def _face(X, C, axis, side):
    """Parallelogram of face (axis, side) of box X with corners C: origin corner, u, v."""
    a1 = (axis + 1) % 3
    a2 = (axis + 2) % 3
    o = (1 << axis) if side else 0
    c1 = o | (1 << a1)
    c2 = o | (1 << a2)
    return (
        C[o, 0], C[o, 1], C[o, 2],
        C[c1, 0] - C[o, 0], C[c1, 1] - C[o, 1], C[c1, 2] - C[o, 2],
        C[c2, 0] - C[o, 0], C[c2, 1] - C[o, 1], C[c2, 2] - C[o, 2],
    )  # fmt: skip


@njit_internal(nogil=True)
def _inside(X, px, py, pz, ops):
    """Is point p inside (or on) box X?"""
    dx = px - X[0]
    dy = py - X[1]
    dz = pz - X[2]
    ops[0] += 1
    ops[1] += 3
    for i in range(3):
        ops[1] += 7
        if abs(X[3 + 3 * i] * dx + X[4 + 3 * i] * dy + X[5 + 3 * i] * dz) > X[12 + i]:
            return False
    return True


@njit_internal(nogil=True)
def _faces_vs_edges(X, CX, Y, CY, front_only, ops):
    """Does an edge of Y cross a face of X? front_only: X's 3 faces towards Y,
    and only the 9 edges of Y's 3 faces towards X."""
    dx = Y[0] - X[0]
    dy = Y[1] - X[1]
    dz = Y[2] - X[2]
    edge_mask = 0xFFF  # bit e: test Y's edge e
    face_mask = 0x3F  # bit 2 * axis + side: test X's face
    if front_only:
        # seed 004 Def. 4: a face of X is front when cos(angle(O_X O_Y, n)) > 0; the
        # sign of the dot product decides it (3 per box: the seed's six operations,
        # counted when this runs with X = A, the call with X = B reuses them)
        edge_mask = 0
        face_mask = 0
        for i in range(3):
            xs = 1 if X[3 + 3 * i] * dx + X[4 + 3 * i] * dy + X[5 + 3 * i] * dz > 0.0 else 0
            face_mask |= 1 << (2 * i + xs)
            # Y's front face on its axis i faces X: normal against d
            ys = 1 if Y[3 + 3 * i] * dx + Y[4 + 3 * i] * dy + Y[5 + 3 * i] * dz < 0.0 else 0
            for q in range(4):
                edge_mask |= 1 << _FACE_EDGES[2 * i + ys, q]
        ops[1] += 6 * 5
    for axis in range(3):
        for side in range(2):
            if not (face_mask >> (2 * axis + side)) & 1:
                continue
            F = _face(X, CX, axis, side)
            for e in range(12):
                if not (edge_mask >> e) & 1:
                    continue
                p = _EDGES[e, 0]
                q = _EDGES[e, 1]
                if _edge_crosses_face(
                    CY[p, 0], CY[p, 1], CY[p, 2], CY[q, 0], CY[q, 1], CY[q, 2],
                    F[0], F[1], F[2], F[3], F[4], F[5], F[6], F[7], F[8], ops,
                ):  # fmt: skip
                    return True
    return False


@njit_internal(nogil=True)
def obb_overlap_edge_face(A, B, front_only, contain, ops, CA, CB):
    """Theorem 1 test (all 144 edge/face pairs, or seed 004's 60 with ``front_only``),
    then (with ``contain``) the containment check. CA, CB: (8, 3) corner scratch."""
    _corners(A, CA)
    _corners(B, CB)
    ops[1] += 2 * 8 * 18
    if front_only:
        ops[0] += 6  # the six face-orientation cosines
    if _faces_vs_edges(A, CA, B, CB, front_only, ops):
        return True
    if _faces_vs_edges(B, CB, A, CA, front_only, ops):
        return True
    if not contain:
        return False
    # containment (Theorem 1 excludes it): either centre inside the other box
    return _inside(A, B[0], B[1], B[2], ops) or _inside(B, A[0], A[1], A[2], ops)


@njit(cache=True, nogil=True)
def obb_overlap_batch(boxes_a, boxes_b, method, count, out, ops):
    """out[i] = do boxes_a[i] and boxes_b[i] overlap, by ``method`` (OBB_TEST_*);
    ops (2,) int64 accumulates the counters over the batch (the SAT counts only
    with ``count``)."""
    CA = np.empty((8, 3))
    CB = np.empty((8, 3))
    for i in range(boxes_a.shape[0]):
        A = boxes_a[i]
        B = boxes_b[i]
        if method == OBB_TEST_SAT:
            out[i] = obb_overlap_sat(A, B, ops, count)
        else:
            front = method == OBB_TEST_FRONT_FACES or method == OBB_TEST_FRONT_FACES_ONLY
            contain = method == OBB_TEST_EDGE_FACE or method == OBB_TEST_FRONT_FACES
            out[i] = obb_overlap_edge_face(A, B, front, contain, ops, CA, CB)


@njit(cache=True, nogil=True)
def random_boxes(n, seed, spread, out):
    """n random box rows (uniform random rotations by normalised quaternions, centres
    uniform in [-spread, spread]^3, half extents in [0.05, 1] with a long thin box
    one time in four) into out (n, 15)."""
    np.random.seed(seed)
    for i in range(n):
        while True:
            q0 = np.random.normal()
            q1 = np.random.normal()
            q2 = np.random.normal()
            q3 = np.random.normal()
            nq = np.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
            if nq > 1e-6:
                break
        w = q0 / nq
        x = q1 / nq
        y = q2 / nq
        z = q3 / nq
        rows = (
            1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
        )  # fmt: skip
        for d in range(3):
            out[i, d] = np.random.uniform(-spread, spread)
        for k in range(9):
            out[i, 3 + k] = rows[k]
        for d in range(3):
            out[i, 12 + d] = np.random.uniform(0.05, 1.0)
        if np.random.uniform(0.0, 1.0) < 0.25:
            out[i, 12 + np.random.randint(0, 3)] = np.random.uniform(2.0, 4.0)
