"""Closest points between two triangles (and the pieces: segment-segment,
point-in-face), robust on parallel and degenerate input.

Triangles are flat 9-tuples (x0, y0, z0, x1, ..., z2), as in ``tri_tri``.

Method (Ericson 2005, "Real-Time Collision Detection", 5.1.9 and 5.1.5): for
two DISJOINT closed triangles one closest pair of points is either

* a closest pair of two edges (9 segment-segment problems), or
* a vertex of one triangle and its orthogonal projection onto the other,
  when that projection falls inside the other (6 vertex-face problems).

(If neither closest point is a vertex and both lie in the interiors, the
triangles would be parallel and then a vertex/edge pair is as close.) The
minimum over these 15 candidates is the distance. Whether the triangles
intersect is NOT decided here: callers decide that first with the exact test
(``tri_tri.tri_tri_intersect_tuples``) and report distance 0 then; this
module only measures pairs already known to be disjoint, where every
candidate is a float64 evaluation of a well-conditioned formula.

Robustness:

* Segment-segment follows Ericson's clamped parametric solution, with the
  denominator |d1 x d2|^2 formed from the cross product (no cancellation of
  a e - b^2) and the parallel and zero-length cases handled exactly (a zero
  length is tested with == 0.0, not an epsilon: a tiny segment is still a
  segment and the formulas stay finite).
* A zero-area triangle has no face: its vertex-face candidates are skipped
  (its edges, i.e. the segment it spans, carry the distance).
* A near-parallel pair may pick a different but equally close pair of
  points; the distance itself is the min over all candidates, each of which
  is an actual pair of points on the two triangles, so the reported value is
  never below the float64 distance of the points reported.

EXACT: no fastmath.
"""

from __future__ import annotations

import math

from ..core.jit import njit, njit_internal


# forceinline (kernels/core/jit.py): a comparison, 5 sites per segment pair (issue 16: tiny, per triangle pair).
@njit(cache=True, nogil=True, forceinline=True)
def _clamp01(x):
    if x < 0.0:
        return 0.0
    if x > 1.0:
        return 1.0
    return x


@njit_internal(nogil=True)
def seg_seg_closest(px, py, pz, qx, qy, qz, rx, ry, rz, sx, sy, sz):
    """Closest points of segments [p, q] and [r, s].

    Returns (d2, x1, y1, z1, x2, y2, z2): squared distance and the points on
    the first and second segment. Zero-length and parallel segments are fine.
    """
    d1x = qx - px
    d1y = qy - py
    d1z = qz - pz
    d2x = sx - rx
    d2y = sy - ry
    d2z = sz - rz
    wx = px - rx
    wy = py - ry
    wz = pz - rz
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * wx + d2y * wy + d2z * wz
    if a == 0.0 and e == 0.0:
        s = 0.0
        t = 0.0
    elif a == 0.0:
        s = 0.0
        t = _clamp01(f / e)
    else:
        c = d1x * wx + d1y * wy + d1z * wz
        if e == 0.0:
            t = 0.0
            s = _clamp01(-c / a)
        else:
            b = d1x * d2x + d1y * d2y + d1z * d2z
            # |d1 x d2|^2 = a e - b^2, formed without cancellation
            cx = d1y * d2z - d1z * d2y
            cy = d1z * d2x - d1x * d2z
            cz = d1x * d2y - d1y * d2x
            denom = cx * cx + cy * cy + cz * cz
            if denom > 0.0:
                s = _clamp01((b * f - c * e) / denom)
            else:
                s = 0.0  # parallel: any s works, t follows
            t = (b * s + f) / e
            if t < 0.0:
                t = 0.0
                s = _clamp01(-c / a)
            elif t > 1.0:
                t = 1.0
                s = _clamp01((b - c) / a)
    x1 = px + d1x * s
    y1 = py + d1y * s
    z1 = pz + d1z * s
    x2 = rx + d2x * t
    y2 = ry + d2y * t
    z2 = rz + d2z * t
    dx = x1 - x2
    dy = y1 - y2
    dz = z1 - z2
    return dx * dx + dy * dy + dz * dz, x1, y1, z1, x2, y2, z2


@njit_internal(nogil=True)
def point_face(px, py, pz, T):
    """Orthogonal projection of p onto triangle T's plane if it falls inside T.

    Returns (inside, d2, fx, fy, fz). ``inside`` is False for a zero-area T
    (its edges carry the distance) and when the projection is outside.
    """
    ax = T[0]
    ay = T[1]
    az = T[2]
    ux = T[3] - ax
    uy = T[4] - ay
    uz = T[5] - az
    vx = T[6] - ax
    vy = T[7] - ay
    vz = T[8] - az
    nx = uy * vz - uz * vy
    ny = uz * vx - ux * vz
    nz = ux * vy - uy * vx
    nn = nx * nx + ny * ny + nz * nz
    if not nn > 0.0:
        return False, 0.0, 0.0, 0.0, 0.0
    wx = px - ax
    wy = py - ay
    wz = pz - az
    # inside iff p lies on the inner side of the three edge planes (containing n)
    # edge 0: a -> b
    e0 = nx * (uy * wz - uz * wy) + ny * (uz * wx - ux * wz) + nz * (ux * wy - uy * wx)
    if e0 < 0.0:
        return False, 0.0, 0.0, 0.0, 0.0
    # edge 2: c -> a (vector -v), p - c
    cwx = px - T[6]
    cwy = py - T[7]
    cwz = pz - T[8]
    e2 = nx * (-vy * cwz + vz * cwy) + ny * (-vz * cwx + vx * cwz) + nz * (-vx * cwy + vy * cwx)
    if e2 < 0.0:
        return False, 0.0, 0.0, 0.0, 0.0
    # edge 1: b -> c, p - b
    bcx = T[6] - T[3]
    bcy = T[7] - T[4]
    bcz = T[8] - T[5]
    bwx = px - T[3]
    bwy = py - T[4]
    bwz = pz - T[5]
    e1 = nx * (bcy * bwz - bcz * bwy) + ny * (bcz * bwx - bcx * bwz) + nz * (bcx * bwy - bcy * bwx)
    if e1 < 0.0:
        return False, 0.0, 0.0, 0.0, 0.0
    k = (nx * wx + ny * wy + nz * wz) / nn
    fx = px - k * nx
    fy = py - k * ny
    fz = pz - k * nz
    dx = px - fx
    dy = py - fy
    dz = pz - fz
    return True, dx * dx + dy * dy + dz * dz, fx, fy, fz


# forceinline (kernels/core/jit.py): 15 sites per triangle pair (issue 16: tiny, per triangle pair).
@njit(cache=True, nogil=True, forceinline=True)
def _keep(best, cand):
    """The candidate (d2, points...) with the smaller d2 (the first on ties)."""
    if cand[0] < best[0]:
        return cand
    return best


@njit_internal(nogil=True)
def tri_tri_closest(A, B):
    """Closest points of two triangles KNOWN TO BE DISJOINT (9-tuples).

    Returns (d2, ax, ay, az, bx, by, bz): the squared distance and the closest
    point on A and on B. For intersecting triangles the value is meaningless
    (callers run the exact intersection test first).

    PERF: unrolled by hand (generated): indexing the tuples with a loop
    variable cost 4x (540 vs ~130 ns per call).
    """
    a0x, a0y, a0z, a1x, a1y, a1z, a2x, a2y, a2z = A
    b0x, b0y, b0z, b1x, b1y, b1z, b2x, b2y, b2z = B
    best = (math.inf, a0x, a0y, a0z, b0x, b0y, b0z)
    best = _keep(best, seg_seg_closest(a0x, a0y, a0z, a1x, a1y, a1z, b0x, b0y, b0z, b1x, b1y, b1z))
    best = _keep(best, seg_seg_closest(a0x, a0y, a0z, a1x, a1y, a1z, b1x, b1y, b1z, b2x, b2y, b2z))
    best = _keep(best, seg_seg_closest(a0x, a0y, a0z, a1x, a1y, a1z, b2x, b2y, b2z, b0x, b0y, b0z))
    best = _keep(best, seg_seg_closest(a1x, a1y, a1z, a2x, a2y, a2z, b0x, b0y, b0z, b1x, b1y, b1z))
    best = _keep(best, seg_seg_closest(a1x, a1y, a1z, a2x, a2y, a2z, b1x, b1y, b1z, b2x, b2y, b2z))
    best = _keep(best, seg_seg_closest(a1x, a1y, a1z, a2x, a2y, a2z, b2x, b2y, b2z, b0x, b0y, b0z))
    best = _keep(best, seg_seg_closest(a2x, a2y, a2z, a0x, a0y, a0z, b0x, b0y, b0z, b1x, b1y, b1z))
    best = _keep(best, seg_seg_closest(a2x, a2y, a2z, a0x, a0y, a0z, b1x, b1y, b1z, b2x, b2y, b2z))
    best = _keep(best, seg_seg_closest(a2x, a2y, a2z, a0x, a0y, a0z, b2x, b2y, b2z, b0x, b0y, b0z))
    inside, d2, fx, fy, fz = point_face(a0x, a0y, a0z, B)
    if inside and d2 < best[0]:
        best = (d2, a0x, a0y, a0z, fx, fy, fz)
    inside, d2, fx, fy, fz = point_face(b0x, b0y, b0z, A)
    if inside and d2 < best[0]:
        best = (d2, fx, fy, fz, b0x, b0y, b0z)
    inside, d2, fx, fy, fz = point_face(a1x, a1y, a1z, B)
    if inside and d2 < best[0]:
        best = (d2, a1x, a1y, a1z, fx, fy, fz)
    inside, d2, fx, fy, fz = point_face(b1x, b1y, b1z, A)
    if inside and d2 < best[0]:
        best = (d2, fx, fy, fz, b1x, b1y, b1z)
    inside, d2, fx, fy, fz = point_face(a2x, a2y, a2z, B)
    if inside and d2 < best[0]:
        best = (d2, a2x, a2y, a2z, fx, fy, fz)
    inside, d2, fx, fy, fz = point_face(b2x, b2y, b2z, A)
    if inside and d2 < best[0]:
        best = (d2, fx, fy, fz, b2x, b2y, b2z)
    return best


@njit_internal(nogil=True)
def tri_tri_distance(t1, t2):
    """Array form for tests: (3, 3) triangles known disjoint -> (d, point_a (3,), point_b (3,))."""
    A = (t1[0, 0], t1[0, 1], t1[0, 2], t1[1, 0], t1[1, 1], t1[1, 2], t1[2, 0], t1[2, 1], t1[2, 2])
    B = (t2[0, 0], t2[0, 1], t2[0, 2], t2[1, 0], t2[1, 1], t2[1, 2], t2[2, 0], t2[2, 1], t2[2, 2])
    d2, ax, ay, az, bx, by, bz = tri_tri_closest(A, B)
    return math.sqrt(d2), (ax, ay, az), (bx, by, bz)
