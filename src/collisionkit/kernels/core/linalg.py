"""Small fixed-size linear algebra for the kernels: poses, 3x3 symmetric eigenproblems.

Everything here is written out by hand on scalars: numba then keeps it in
registers, and the arithmetic order is fixed, so every strategy that maps a
point of b into a's frame gets bit-identical coordinates.
"""

from __future__ import annotations

import math

from ...constants import POSE_RIGIDITY_TOL
from .jit import njit, njit_internal

# Codes returned by pose_error (0 = valid).
POSE_OK = 0
POSE_NOT_FINITE = 1
POSE_NOT_RIGID = 2
POSE_BAD_LAST_ROW = 3


@njit(cache=True, nogil=True)
def pose_error(T):
    """Why the (4, 4) pose ``T`` is not a finite rigid transform (POSE_OK if it is)."""
    for i in range(4):
        for j in range(4):
            if not math.isfinite(T[i, j]):
                return POSE_NOT_FINITE
    if T[3, 0] != 0.0 or T[3, 1] != 0.0 or T[3, 2] != 0.0 or T[3, 3] != 1.0:
        return POSE_BAD_LAST_ROW
    for i in range(3):
        for j in range(3):
            s = T[0, i] * T[0, j] + T[1, i] * T[1, j] + T[2, i] * T[2, j]
            if i == j:
                s -= 1.0
            if abs(s) > POSE_RIGIDITY_TOL:
                return POSE_NOT_RIGID
    # A reflection (det = -1) is orthogonal but not a rigid motion.
    det = (
        T[0, 0] * (T[1, 1] * T[2, 2] - T[1, 2] * T[2, 1])
        - T[0, 1] * (T[1, 0] * T[2, 2] - T[1, 2] * T[2, 0])
        + T[0, 2] * (T[1, 0] * T[2, 1] - T[1, 1] * T[2, 0])
    )
    if det < 0.0:
        return POSE_NOT_RIGID
    return POSE_OK


@njit(cache=True, nogil=True)
def first_bad_pose(poses):
    """(index, code) of the first invalid pose of an (N, 4, 4) stack, or (-1, 0)."""
    for k in range(poses.shape[0]):
        code = pose_error(poses[k])
        if code != POSE_OK:
            return k, code
    return -1, POSE_OK


@njit(cache=True, nogil=True)
def relative_pose(Ta, Tb):
    """Pose of b in a's frame, ``inv(Ta) @ Tb``, as (R, t): a row-major 9-tuple and a 3-tuple.

    The rigid inverse is R_a^T, -R_a^T t_a: no general matrix inverse. This R, t
    *define* where b's vertices are for the exact triangle tests (see
    ARCHITECTURE.md, "Exactness"). Tuples, not arrays: no allocation per query.
    """
    dx = Tb[0, 3] - Ta[0, 3]
    dy = Tb[1, 3] - Ta[1, 3]
    dz = Tb[2, 3] - Ta[2, 3]
    R = (
        Ta[0, 0] * Tb[0, 0] + Ta[1, 0] * Tb[1, 0] + Ta[2, 0] * Tb[2, 0],
        Ta[0, 0] * Tb[0, 1] + Ta[1, 0] * Tb[1, 1] + Ta[2, 0] * Tb[2, 1],
        Ta[0, 0] * Tb[0, 2] + Ta[1, 0] * Tb[1, 2] + Ta[2, 0] * Tb[2, 2],
        Ta[0, 1] * Tb[0, 0] + Ta[1, 1] * Tb[1, 0] + Ta[2, 1] * Tb[2, 0],
        Ta[0, 1] * Tb[0, 1] + Ta[1, 1] * Tb[1, 1] + Ta[2, 1] * Tb[2, 1],
        Ta[0, 1] * Tb[0, 2] + Ta[1, 1] * Tb[1, 2] + Ta[2, 1] * Tb[2, 2],
        Ta[0, 2] * Tb[0, 0] + Ta[1, 2] * Tb[1, 0] + Ta[2, 2] * Tb[2, 0],
        Ta[0, 2] * Tb[0, 1] + Ta[1, 2] * Tb[1, 1] + Ta[2, 2] * Tb[2, 1],
        Ta[0, 2] * Tb[0, 2] + Ta[1, 2] * Tb[1, 2] + Ta[2, 2] * Tb[2, 2],
    )
    t = (
        Ta[0, 0] * dx + Ta[1, 0] * dy + Ta[2, 0] * dz,
        Ta[0, 1] * dx + Ta[1, 1] * dy + Ta[2, 1] * dz,
        Ta[0, 2] * dx + Ta[1, 2] * dy + Ta[2, 2] * dz,
    )
    return R, t


@njit_internal(nogil=True)
def triangle_box(T):
    """(lo_x, hi_x, lo_y, hi_y, lo_z, hi_z) of a triangle given as a 9-tuple
    (x0, y0, z0, x1, ..., z2), e.g. the one ``map_triangle`` returns."""
    return (
        min(T[0], min(T[3], T[6])), max(T[0], max(T[3], T[6])),
        min(T[1], min(T[4], T[7])), max(T[1], max(T[4], T[7])),
        min(T[2], min(T[5], T[8])), max(T[2], max(T[5], T[8])),
    )  # fmt: skip


@njit_internal(nogil=True)
def rotate_vector(R, x, y, z):
    """R (x, y, z) for the row-major 9-tuple R, as a 3-tuple (add t after it for a point:
    the operation order of ``map_triangle``)."""
    return (
        R[0] * x + R[1] * y + R[2] * z,
        R[3] * x + R[4] * y + R[5] * z,
        R[6] * x + R[7] * y + R[8] * z,
    )


@njit(cache=True, nogil=True)
def map_triangle(R, t, x0, y0, z0, x1, y1, z1, x2, y2, z2):
    """The triangle's vertices mapped by p -> R p + t, as a flat 9-tuple.

    R is a row-major 9-tuple, t a 3-tuple. The one place where b's coordinates
    enter a's frame: every strategy calls it, so all see the same float64
    coordinates (fixed operation order, no fused multiply-add).
    """
    return (
        R[0] * x0 + R[1] * y0 + R[2] * z0 + t[0],
        R[3] * x0 + R[4] * y0 + R[5] * z0 + t[1],
        R[6] * x0 + R[7] * y0 + R[8] * z0 + t[2],
        R[0] * x1 + R[1] * y1 + R[2] * z1 + t[0],
        R[3] * x1 + R[4] * y1 + R[5] * z1 + t[1],
        R[6] * x1 + R[7] * y1 + R[8] * z1 + t[2],
        R[0] * x2 + R[1] * y2 + R[2] * z2 + t[0],
        R[3] * x2 + R[4] * y2 + R[5] * z2 + t[1],
        R[6] * x2 + R[7] * y2 + R[8] * z2 + t[2],
    )


@njit_internal(nogil=True)
def _rotate_columns(a, p, q, c, s):
    """Columns p and q of the 3x3 ``a`` <- their rotation by (c, s) (one Jacobi step)."""
    for k in range(3):
        x = a[k, p]
        y = a[k, q]
        a[k, p] = c * x - s * y
        a[k, q] = s * x + c * y


@njit_internal(nogil=True)
def symmetric_eigen3(C, vecs, work):
    """Eigenvectors of a symmetric 3x3 matrix by cyclic Jacobi rotations.

    Writes the eigenvectors as the ROWS of ``vecs`` (3, 3), sorted by
    decreasing eigenvalue, forming a right-handed orthonormal frame. ``work``
    is scratch of at least 21 floats (no allocation: the tree builder calls
    this once per node). About 20x faster than LAPACK for one 3x3 matrix.
    """
    a = work[0:9].reshape((3, 3))
    v = work[9:18].reshape((3, 3))
    w = work[18:21]
    for i in range(3):
        for j in range(3):
            a[i, j] = C[i, j]
            v[i, j] = 1.0 if i == j else 0.0
    for _sweep in range(32):
        off = abs(a[0, 1]) + abs(a[0, 2]) + abs(a[1, 2])
        scale = abs(a[0, 0]) + abs(a[1, 1]) + abs(a[2, 2])
        if off <= 1e-300 or off <= 1e-15 * scale:
            break
        for p in range(2):
            for q in range(p + 1, 3):
                if a[p, q] == 0.0:
                    continue
                theta = (a[q, q] - a[p, p]) / (2.0 * a[p, q])
                tt = 1.0 / (abs(theta) + math.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    tt = -tt
                c = 1.0 / math.sqrt(tt * tt + 1.0)
                s = tt * c
                _rotate_columns(a, p, q, c, s)
                for k in range(3):  # the rows (a.T would compile a second signature)
                    apk = a[p, k]
                    aqk = a[q, k]
                    a[p, k] = c * apk - s * aqk
                    a[q, k] = s * apk + c * aqk
                _rotate_columns(v, p, q, c, s)
    for i in range(3):
        w[i] = a[i, i]
    # order the three eigenvalues, largest first (a 3-element sort by hand)
    i0, i1, i2 = 0, 1, 2
    if w[i1] > w[i0]:
        i0, i1 = i1, i0
    if w[i2] > w[i1]:
        i1, i2 = i2, i1
    if w[i1] > w[i0]:
        i0, i1 = i1, i0
    for k in range(3):
        vecs[0, k] = v[k, i0]
        vecs[1, k] = v[k, i1]
    # Third axis = first x second: a proper rotation, whatever Jacobi returned.
    vecs[2, 0] = vecs[0, 1] * vecs[1, 2] - vecs[0, 2] * vecs[1, 1]
    vecs[2, 1] = vecs[0, 2] * vecs[1, 0] - vecs[0, 0] * vecs[1, 2]
    vecs[2, 2] = vecs[0, 0] * vecs[1, 1] - vecs[0, 1] * vecs[1, 0]


@njit_internal(nogil=True)
def box_half_area(lo0, lo1, lo2, hi0, hi1, hi2):
    """Half the surface area of the box [lo, hi]: the SAH cost of the top-down and
    bottom-up builds and the insertion cost of the broad phase's dynamic tree."""
    return (hi0 - lo0) * (hi1 - lo1) + (hi1 - lo1) * (hi2 - lo2) + (hi2 - lo2) * (hi0 - lo0)
