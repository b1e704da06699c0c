"""Bounding spheres: fitting (Ritter, minimal enclosing sphere), overlap, transform, merge.

Node row (constants.BV_SPHERE): centre(3), radius(1), in the mesh's frame.

* Ritter 1990 ("An efficient bounding sphere", Graphics Gems): start from the
  pair (y, z) where y is the point farthest from an arbitrary point and z the
  point farthest from y, then grow the sphere over every point left outside.
  Linear time, typically 5-20% larger than the minimal sphere.
* Minimal enclosing sphere: Welzl 1991 ("Smallest enclosing disks (balls and
  ellipsoids)") in Gaertner's move-to-front form (1999): the support set has at
  most four points, so the recursion is four nested loops (``_mb1`` .. ``_mb3``)
  and never deeper; each loop runs over a prefix of the (reordered) points.

NOTE: both fits end by setting the radius to the largest distance from the
chosen centre to any point, rounded up by a few units of roundoff, so the
sphere contains every point whatever the rounding inside Welzl's circumsphere
formulas did (they only decide how good the centre is).

Overlap (seed 001): |c_a - (R c_b + t)| <= r_a + r_b (+ slack), with b's
centre mapped into a's frame; the radius does not change under a rigid motion,
so no volume update is needed (like the AABB test, ``bv_updates`` stays 0).
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit, njit_internal
from ..core.linalg import rotate_vector

_U = 2.0**-53
#: A point counts as outside a candidate sphere only beyond this relative margin,
#: so Welzl's loops do not chase rounding noise (the final radius covers it).
_OUT = 1e-12


@njit_internal(nogil=True)
def _d2(ax, ay, az, bx, by, bz):
    dx = ax - bx
    dy = ay - by
    dz = az - bz
    return dx * dx + dy * dy + dz * dz


@njit_internal(nogil=True)
def _ball2(ax, ay, az, bx, by, bz):
    """Smallest sphere through two points: (cx, cy, cz, r2)."""
    cx = 0.5 * (ax + bx)
    cy = 0.5 * (ay + by)
    cz = 0.5 * (az + bz)
    return cx, cy, cz, 0.25 * _d2(ax, ay, az, bx, by, bz)


@njit_internal(nogil=True)
def circumcentre_offset(ux, uy, uz, vx, vy, vz, wx, wy, wz, u2, v2, w2):
    """Circumcentre of (a, a + u, a + v) minus a: (|u|^2 (v x w) + |v|^2 (w x u)) / (2 |w|^2),
    given w = u x v (non-zero), u2 = |u|^2, v2 = |v|^2, w2 = |w|^2 (float)."""
    # v x w and w x u
    p0 = vy * wz - vz * wy
    p1 = vz * wx - vx * wz
    p2 = vx * wy - vy * wx
    q0 = wy * uz - wz * uy
    q1 = wz * ux - wx * uz
    q2 = wx * uy - wy * ux
    s = 0.5 / w2
    return (u2 * p0 + v2 * q0) * s, (u2 * p1 + v2 * q1) * s, (u2 * p2 + v2 * q2) * s


@njit_internal(nogil=True)
def _ball3(ax, ay, az, bx, by, bz, cx, cy, cz):
    """Smallest sphere with three points on its boundary (their circumcircle).

    centre = a + (|u|^2 (v x w) + |v|^2 (w x u)) / (2 |w|^2), u = b - a,
    v = c - a, w = u x v. Nearly collinear points: the diametral sphere of the
    farthest pair (it contains the third point up to rounding).
    """
    ux = bx - ax
    uy = by - ay
    uz = bz - az
    vx = cx - ax
    vy = cy - ay
    vz = cz - az
    wx = uy * vz - uz * vy
    wy = uz * vx - ux * vz
    wz = ux * vy - uy * vx
    w2 = wx * wx + wy * wy + wz * wz
    u2 = ux * ux + uy * uy + uz * uz
    v2 = vx * vx + vy * vy + vz * vz
    if w2 <= 1e-24 * u2 * v2 or w2 == 0.0:
        best = _ball2(ax, ay, az, bx, by, bz)
        other = _ball2(ax, ay, az, cx, cy, cz)
        if other[3] > best[3]:
            best = other
        other = _ball2(bx, by, bz, cx, cy, cz)
        if other[3] > best[3]:
            best = other
        return best
    ox, oy, oz = circumcentre_offset(ux, uy, uz, vx, vy, vz, wx, wy, wz, u2, v2, w2)
    return ax + ox, ay + oy, az + oz, ox * ox + oy * oy + oz * oz


@njit_internal(nogil=True)
def _ball4(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz):
    """Sphere through four points (Cramer on 2 M y = |rows|^2, rows b-a, c-a, d-a);
    nearly coplanar points: the largest of the four circumcircles (a fallback
    only for tightness; the final radius makes it safe)."""
    ux = bx - ax
    uy = by - ay
    uz = bz - az
    vx = cx - ax
    vy = cy - ay
    vz = cz - az
    wx = dx - ax
    wy = dy - ay
    wz = dz - az
    det = ux * (vy * wz - vz * wy) - uy * (vx * wz - vz * wx) + uz * (vx * wy - vy * wx)
    u2 = ux * ux + uy * uy + uz * uz
    v2 = vx * vx + vy * vy + vz * vz
    w2 = wx * wx + wy * wy + wz * wz
    scale = np.sqrt(u2 * v2 * w2)
    if abs(det) <= 1e-12 * scale or det == 0.0:
        best = _ball3(ax, ay, az, bx, by, bz, cx, cy, cz)
        other = _ball3(ax, ay, az, bx, by, bz, dx, dy, dz)
        if other[3] > best[3]:
            best = other
        other = _ball3(ax, ay, az, cx, cy, cz, dx, dy, dz)
        if other[3] > best[3]:
            best = other
        other = _ball3(bx, by, bz, cx, cy, cz, dx, dy, dz)
        if other[3] > best[3]:
            best = other
        return best
    r0 = 0.5 * u2
    r1 = 0.5 * v2
    r2 = 0.5 * w2
    # Cramer's rule, columns replaced by (r0, r1, r2)
    ox = (r0 * (vy * wz - vz * wy) - uy * (r1 * wz - vz * r2) + uz * (r1 * wy - vy * r2)) / det
    oy = (ux * (r1 * wz - vz * r2) - r0 * (vx * wz - vz * wx) + uz * (vx * r2 - r1 * wx)) / det
    oz = (ux * (vy * r2 - r1 * wy) - uy * (vx * r2 - r1 * wx) + r0 * (vx * wy - vy * wx)) / det
    return ax + ox, ay + oy, az + oz, ox * ox + oy * oy + oz * oz


@njit_internal(nogil=True)
def _outside(pts, i, ball):
    d2 = _d2(pts[i, 0], pts[i, 1], pts[i, 2], ball[0], ball[1], ball[2])
    return d2 > ball[3] * (1.0 + _OUT) + 1e-300


@njit_internal(nogil=True)
def _to_front(pts, i):
    """Move row i to the front, shifting rows 0..i-1 down (move-to-front heuristic)."""
    x = pts[i, 0]
    y = pts[i, 1]
    z = pts[i, 2]
    for k in range(i, 0, -1):
        pts[k, 0] = pts[k - 1, 0]
        pts[k, 1] = pts[k - 1, 1]
        pts[k, 2] = pts[k - 1, 2]
    pts[0, 0] = x
    pts[0, 1] = y
    pts[0, 2] = z


@njit_internal(nogil=True)
def _mb3(pts, n, px, py, pz, qx, qy, qz, rx, ry, rz):
    """Smallest ball of pts[:n] with p, q, r on its boundary."""
    ball = _ball3(px, py, pz, qx, qy, qz, rx, ry, rz)
    for i in range(n):
        if _outside(pts, i, ball):
            ball = _ball4(px, py, pz, qx, qy, qz, rx, ry, rz, pts[i, 0], pts[i, 1], pts[i, 2])
            _to_front(pts, i)
    return ball


@njit_internal(nogil=True)
def _mb2(pts, n, px, py, pz, qx, qy, qz):
    ball = _ball2(px, py, pz, qx, qy, qz)
    for i in range(n):
        if _outside(pts, i, ball):
            ball = _mb3(pts, i, px, py, pz, qx, qy, qz, pts[i, 0], pts[i, 1], pts[i, 2])
            _to_front(pts, i)
    return ball


@njit_internal(nogil=True)
def _mb1(pts, n, px, py, pz):
    ball = (px, py, pz, 0.0)
    for i in range(n):
        if _outside(pts, i, ball):
            ball = _mb2(pts, i, px, py, pz, pts[i, 0], pts[i, 1], pts[i, 2])
            _to_front(pts, i)
    return ball


@njit(cache=True, nogil=True)
def minimal_sphere(pts, n):
    """Minimal enclosing sphere of pts[:n] (n >= 1; rows are reordered in place).

    Returns (cx, cy, cz, r) with r covering every point (see the module NOTE).
    """
    ball = (pts[0, 0], pts[0, 1], pts[0, 2], 0.0)
    for i in range(1, n):
        if _outside(pts, i, ball):
            ball = _mb1(pts, i, pts[i, 0], pts[i, 1], pts[i, 2])
            _to_front(pts, i)
    return _cover(pts, n, ball[0], ball[1], ball[2])


@njit(cache=True, nogil=True)
def ritter_sphere(pts, n):
    """Ritter's sphere of pts[:n] (n >= 1): (cx, cy, cz, r), r covering every point."""
    # y: farthest from pts[0]; z: farthest from y
    iy = 0
    best = -1.0
    for i in range(n):
        d = _d2(pts[i, 0], pts[i, 1], pts[i, 2], pts[0, 0], pts[0, 1], pts[0, 2])
        if d > best:
            best = d
            iy = i
    iz = 0
    best = -1.0
    for i in range(n):
        d = _d2(pts[i, 0], pts[i, 1], pts[i, 2], pts[iy, 0], pts[iy, 1], pts[iy, 2])
        if d > best:
            best = d
            iz = i
    cx, cy, cz, r2 = _ball2(pts[iy, 0], pts[iy, 1], pts[iy, 2], pts[iz, 0], pts[iz, 1], pts[iz, 2])
    r = np.sqrt(r2)
    for i in range(n):
        d2 = _d2(pts[i, 0], pts[i, 1], pts[i, 2], cx, cy, cz)
        if d2 > r * r:
            # grow: new sphere touches the far side of the old one and the point
            d = np.sqrt(d2)
            nr = 0.5 * (r + d)
            k = (nr - r) / d
            cx += (pts[i, 0] - cx) * k
            cy += (pts[i, 1] - cy) * k
            cz += (pts[i, 2] - cz) * k
            r = nr
    return _cover(pts, n, cx, cy, cz)


@njit_internal(nogil=True)
def _cover(pts, n, cx, cy, cz):
    """(cx, cy, cz, r) with r = the largest distance to pts[:n], rounded up."""
    m = 0.0
    for i in range(n):
        m = max(m, _d2(pts[i, 0], pts[i, 1], pts[i, 2], cx, cy, cz))
    r = np.sqrt(m)
    # sqrt and the squared distance each round by <= 2 ulps: 8 covers both.
    return cx, cy, cz, r * (1.0 + 8.0 * _U) + 1e-300


@njit_internal(nogil=True)
def fit_sphere(tris, idx, s, e, minimal, out, pts):
    """Sphere of the vertices of triangles idx[s:e] into out[0:4].

    ``pts`` is scratch of at least 3 * (e - s) rows; ``minimal`` (bool-valued
    int) picks Welzl over Ritter.
    """
    n = np.int64(0)  # not a literal: one signature for minimal_sphere / ritter_sphere
    for k in range(s, e):
        i = idx[k]
        for v in range(3):
            pts[n, 0] = tris[i, v, 0]
            pts[n, 1] = tris[i, v, 1]
            pts[n, 2] = tris[i, v, 2]
            n += 1
    if minimal != 0:
        ball = minimal_sphere(pts, n)
    else:
        ball = ritter_sphere(pts, n)
    out[0] = ball[0]
    out[1] = ball[1]
    out[2] = ball[2]
    out[3] = ball[3]


@njit_internal(nogil=True)
def overlap_sphere_sphere(R, t, bv_a, ia, bv_b, ib, slack):
    """Do a's sphere and b's sphere (centre mapped by R, t into a's frame) overlap?
    Conservative by ``slack`` (an absolute bound of the coordinate rounding)."""
    mx, my, mz = rotate_vector(R, bv_b[ib, 0], bv_b[ib, 1], bv_b[ib, 2])
    dx = mx + t[0] - bv_a[ia, 0]
    dy = my + t[1] - bv_a[ia, 1]
    dz = mz + t[2] - bv_a[ia, 2]
    reach = bv_a[ia, 3] + bv_b[ib, 3] + 2.0 * slack
    return dx * dx + dy * dy + dz * dz <= reach * reach


@njit(cache=True, nogil=True)
def transform_sphere(R, t, cx, cy, cz, r):
    """The sphere moved by the rigid motion (R row-major 9-tuple, t 3-tuple)."""
    return (
        R[0] * cx + R[1] * cy + R[2] * cz + t[0],
        R[3] * cx + R[4] * cy + R[5] * cz + t[1],
        R[6] * cx + R[7] * cy + R[8] * cz + t[2],
        r,
    )


@njit(cache=True, nogil=True)
def merge_spheres(ax, ay, az, ar, bx, by, bz, br):
    """Smallest sphere containing two spheres (exact for two balls), radius rounded up."""
    dx = bx - ax
    dy = by - ay
    dz = bz - az
    d = np.sqrt(dx * dx + dy * dy + dz * dz)
    if d + br <= ar:
        return ax, ay, az, ar
    if d + ar <= br:
        return bx, by, bz, br
    r = 0.5 * (d + ar + br)
    k = (r - ar) / d
    return ax + dx * k, ay + dy * k, az + dz * k, r * (1.0 + 8.0 * _U)
