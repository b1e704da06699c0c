"""The intersection of two intersecting triangles, as a segment.

Two closed triangles that intersect (decided exactly by ``tri_tri``) meet in
a convex set: a segment or a point when their planes cross, a convex polygon
(up to six vertices) when they are coplanar. This module collects the
*candidate points* that can be vertices of that set and reports the two
farthest apart:

* an edge of one triangle crossing the other's plane strictly (exact
  orient3d signs of its ends) at a point inside the other triangle (exact
  orient3d signs against the three edges of the other): the crossing point,
  interpolated in float64 from the two signed plane distances;
* a vertex of one triangle lying on the other's plane (exact) inside the
  other triangle (exact orient2d in the projection that keeps the other's
  area);
* when both ends of an edge lie on the other's plane (coplanar contact): the
  proper crossings of that edge with the other's edges (exact orient2d), the
  crossing point interpolated in float64.

Every vertex of the intersection set is one of these points, so for crossing
planes the two farthest candidates are the ends of the intersection segment
(they coincide when the triangles touch at one point). For coplanar overlap
the set is a polygon: we report its two farthest vertices (a diameter of the
polygon, the "segment") and flag the pair as coplanar; callers that need the
whole polygon can clip themselves. Decisions are exact; only the coordinates
of crossing points are rounded (a few units of roundoff of the triangle
size). Points are never snapped to vertices or merged across pairs.

A zero-area (degenerate) triangle has no plane: its edges, i.e. the segment
it spans, are tested against the other triangle (which finds every point of
the intersection when the other one has an area). When BOTH are degenerate
the intersection is a segment-segment contact: we report the closest points
of the two spanned segments (equal up to rounding), flagged degenerate.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types

from ..core.jit import njit, njit_internal
from ..core.lazy import njit_lazy
from ..core.linalg import map_triangle, relative_pose
from ..core.predicates import TRI_TUPLE, normal_products, orient2d, orient3d
from .tri_distance import seg_seg_closest
from .tri_tri import injective_axis

#: flags of a segment result
SEG_OK = 0
SEG_COPLANAR = 1
SEG_DEGENERATE = 2
SEG_EMPTY = 3  # no candidate found (the triangles do not intersect)


# inline: a tuple read, 7 sites per triangle pair (issue 16: tiny).
@njit(cache=True, nogil=True, inline="always")
def _pt(T, i):
    return T[3 * i], T[3 * i + 1], T[3 * i + 2]


@njit_internal(nogil=True)
def _row_triangles(tris_a, tris_b, fa, fb, R, t):
    """(A, B): a's face fa and b's face fb mapped by (R, t) into a's frame, as 9-tuples."""
    A = (
        tris_a[fa, 0, 0], tris_a[fa, 0, 1], tris_a[fa, 0, 2],
        tris_a[fa, 1, 0], tris_a[fa, 1, 1], tris_a[fa, 1, 2],
        tris_a[fa, 2, 0], tris_a[fa, 2, 1], tris_a[fa, 2, 2],
    )  # fmt: skip
    B = map_triangle(
        R, t,
        tris_b[fb, 0, 0], tris_b[fb, 0, 1], tris_b[fb, 0, 2],
        tris_b[fb, 1, 0], tris_b[fb, 1, 1], tris_b[fb, 1, 2],
        tris_b[fb, 2, 0], tris_b[fb, 2, 1], tris_b[fb, 2, 2],
    )  # fmt: skip
    return A, B


@njit_internal(nogil=True)
def _add_crossing(buf, n, px, py, pz, qx, qy, qz, fp, fq):
    """buf[n] <- p + (q - p) w, where the linear function with values fp at p and fq at q
    vanishes (w = fp / (fp - fq) clamped to [0, 1]; 0.5 when fp == fq). Returns n + 1."""
    den = fp - fq
    w = fp / den if den != 0.0 else 0.5
    w = min(1.0, max(0.0, w))
    buf[n, 0] = px + (qx - px) * w
    buf[n, 1] = py + (qy - py) * w
    buf[n, 2] = pz + (qz - pz) * w
    return n + 1


# Cold entries (kernels/core/lazy.py): a vertex on the other's plane and an edge in it
# need exact 2-D tests that crossing planes never reach.
@njit_lazy(types.boolean(TRI_TUPLE, types.int64, types.float64, types.float64, types.float64), nogil=True)
def _in_tri_2d(T, k, px, py, pz):
    """Closed point-in-triangle, exact, for p on T's plane, projected along axis k."""
    i = (k + 1) % 3
    j = (k + 2) % 3
    p = (px, py, pz)
    o0 = orient2d(T[i], T[j], T[3 + i], T[3 + j], p[i], p[j])
    o1 = orient2d(T[3 + i], T[3 + j], T[6 + i], T[6 + j], p[i], p[j])
    o2 = orient2d(T[6 + i], T[6 + j], T[i], T[j], p[i], p[j])
    return (o0 >= 0.0 and o1 >= 0.0 and o2 >= 0.0) or (o0 <= 0.0 and o1 <= 0.0 and o2 <= 0.0)


@njit_internal(nogil=True)
def _edges_vs_triangle(E, T, k, buf, n):
    """Candidates from the three edges of E against triangle T (T has an area,
    projected along k). Appends to buf[n:], returns the new count."""
    # plane of T, float (for interpolation only)
    m1, m2, m3, m4, m5, m6 = normal_products(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8])
    nx = m1 - m2
    ny = m3 - m4
    nz = m5 - m6
    s = (
        orient3d(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], E[0], E[1], E[2]),
        orient3d(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], E[3], E[4], E[5]),
        orient3d(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], E[6], E[7], E[8]),
    )
    for v in range(3):
        if s[v] == 0.0:
            px, py, pz = _pt(E, v)
            if _in_tri_2d(T, k, px, py, pz):
                buf[n, 0] = px
                buf[n, 1] = py
                buf[n, 2] = pz
                n += 1
    for e in range(3):
        e1 = (e + 1) % 3
        px, py, pz = _pt(E, e)
        qx, qy, qz = _pt(E, e1)
        sp = s[e]
        sq = s[e1]
        if (sp > 0.0 and sq < 0.0) or (sp < 0.0 and sq > 0.0):
            # crossing the plane strictly; inside T iff the edge line passes T's edges consistently
            o0 = orient3d(px, py, pz, qx, qy, qz, T[0], T[1], T[2], T[3], T[4], T[5])
            o1 = orient3d(px, py, pz, qx, qy, qz, T[3], T[4], T[5], T[6], T[7], T[8])
            o2 = orient3d(px, py, pz, qx, qy, qz, T[6], T[7], T[8], T[0], T[1], T[2])
            if (o0 >= 0.0 and o1 >= 0.0 and o2 >= 0.0) or (o0 <= 0.0 and o1 <= 0.0 and o2 <= 0.0):
                dp = nx * (px - T[0]) + ny * (py - T[1]) + nz * (pz - T[2])
                dq = nx * (qx - T[0]) + ny * (qy - T[1]) + nz * (qz - T[2])
                n = _add_crossing(buf, n, px, py, pz, qx, qy, qz, dp, dq)
        elif sp == 0.0 and sq == 0.0:
            n = _in_plane_crossings(T, k, px, py, pz, qx, qy, qz, buf, n)
    return n


@njit_lazy(
    types.int64(TRI_TUPLE, types.int64, *[types.float64] * 6, types.float64[:, ::1], types.int64), nogil=True
)
def _in_plane_crossings(T, k, px, py, pz, qx, qy, qz, buf, n):
    """Edge [p, q] in T's plane: its proper crossings with T's edges (2-D along axis k, exact
    decisions), appended to buf[n:]; returns the new count."""
    i2 = (k + 1) % 3
    j2 = (k + 2) % 3
    a2 = (px, py, pz)
    b2 = (qx, qy, qz)
    for f in range(3):
        f1 = (f + 1) % 3
        cx, cy, cz = _pt(T, f)
        dx, dy, dz = _pt(T, f1)
        c2 = (cx, cy, cz)
        d2 = (dx, dy, dz)
        oc = orient2d(a2[i2], a2[j2], b2[i2], b2[j2], c2[i2], c2[j2])
        od = orient2d(a2[i2], a2[j2], b2[i2], b2[j2], d2[i2], d2[j2])
        if not ((oc > 0.0 and od < 0.0) or (oc < 0.0 and od > 0.0)):
            continue
        oa = orient2d(c2[i2], c2[j2], d2[i2], d2[j2], a2[i2], a2[j2])
        ob = orient2d(c2[i2], c2[j2], d2[i2], d2[j2], b2[i2], b2[j2])
        if not ((oa > 0.0 and ob < 0.0) or (oa < 0.0 and ob > 0.0)):
            continue
        # float parameter along [p, q] from 2-D cross products
        ca = (d2[i2] - c2[i2]) * (a2[j2] - c2[j2]) - (d2[j2] - c2[j2]) * (a2[i2] - c2[i2])
        cb = (d2[i2] - c2[i2]) * (b2[j2] - c2[j2]) - (d2[j2] - c2[j2]) * (b2[i2] - c2[i2])
        n = _add_crossing(buf, n, px, py, pz, qx, qy, qz, ca, cb)
    return n


@njit_internal(nogil=True)
def _extreme_pair(T):
    """Ends (i, j) of the segment a degenerate triangle spans (farthest vertex pair)."""
    best = -1.0
    bi = 0
    bj = 0
    for i in range(3):
        for j in range(i + 1, 3):
            dx = T[3 * i] - T[3 * j]
            dy = T[3 * i + 1] - T[3 * j + 1]
            dz = T[3 * i + 2] - T[3 * j + 2]
            d = dx * dx + dy * dy + dz * dz
            if d > best:
                best = d
                bi = i
                bj = j
    return bi, bj


# PERF: called through a slot (kernels/core/lazy.py), compiled on its first call: the distance
# family reaches it only for an intersecting pair's contact point, so a first distance query
# of separate shapes (a robot's clearance, a certified edge) no longer compiles it (issue 32,
# compile time). Not cold: generic inputs reach it (contacts call it on every row, an
# indirect call beside an exact segment), so the groups that call it compile it.
@njit_lazy(
    types.Tuple((types.int64, *[types.float64] * 6))(TRI_TUPLE, TRI_TUPLE, types.float64[:, ::1]), cold=False, nogil=True
)
def tri_tri_segment(A, B, buf):
    """Intersection segment of two intersecting triangles (9-tuples, same frame).

    ``buf`` is scratch of shape (>= 24, 3). Returns
    (flag, x0, y0, z0, x1, y1, z1): flag SEG_OK (crossing planes: the exact
    intersection segment, possibly a point), SEG_COPLANAR (a diameter of the
    overlap polygon), SEG_DEGENERATE (both zero-area: closest points of the
    spanned segments) or SEG_EMPTY (no candidate: the triangles do not meet).
    """
    ka = injective_axis(A)
    kb = injective_axis(B)
    n = np.int64(0)  # not a literal: _edges_vs_triangle keeps one signature
    if ka < 0 and kb < 0:
        ai, aj = _extreme_pair(A)
        bi, bj = _extreme_pair(B)
        d2, x1, y1, z1, x2, y2, z2 = seg_seg_closest(
            A[3 * ai], A[3 * ai + 1], A[3 * ai + 2], A[3 * aj], A[3 * aj + 1], A[3 * aj + 2],
            B[3 * bi], B[3 * bi + 1], B[3 * bi + 2], B[3 * bj], B[3 * bj + 1], B[3 * bj + 2],
        )  # fmt: skip
        mx = 0.5 * (x1 + x2)
        my = 0.5 * (y1 + y2)
        mz = 0.5 * (z1 + z2)
        return SEG_DEGENERATE, mx, my, mz, mx, my, mz
    if kb >= 0:
        n = _edges_vs_triangle(A, B, kb, buf, n)
    if ka >= 0:
        n = _edges_vs_triangle(B, A, ka, buf, n)
    if n == 0:
        return SEG_EMPTY, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan
    coplanar = False
    if ka >= 0 and kb >= 0:
        coplanar = (
            orient3d(A[0], A[1], A[2], A[3], A[4], A[5], A[6], A[7], A[8], B[0], B[1], B[2]) == 0.0
            and orient3d(A[0], A[1], A[2], A[3], A[4], A[5], A[6], A[7], A[8], B[3], B[4], B[5]) == 0.0
            and orient3d(A[0], A[1], A[2], A[3], A[4], A[5], A[6], A[7], A[8], B[6], B[7], B[8]) == 0.0
        )
    bi = 0
    bj = 0
    best = -1.0
    for i in range(n):
        for j in range(i, n):
            dx = buf[i, 0] - buf[j, 0]
            dy = buf[i, 1] - buf[j, 1]
            dz = buf[i, 2] - buf[j, 2]
            d = dx * dx + dy * dy + dz * dz
            if d > best:
                best = d
                bi = i
                bj = j
    flag = SEG_COPLANAR if coplanar else SEG_OK
    return flag, buf[bi, 0], buf[bi, 1], buf[bi, 2], buf[bj, 0], buf[bj, 1], buf[bj, 2]


@njit(cache=True, nogil=True)
def contact_geometry(tris_a, tris_b, poses_a, poses_b, pose_of_row, ia, ib, face_a, face_b, seg, normal, flags):
    """Segments and normals of contact rows, in the WORLD frame.

    Row r is triangle face_a[r] of a and face_b[r] of b under query
    pose_of_row[r] (poses_a[ia[q]], poses_b[ib[q]]). b's triangle is mapped
    into a's frame exactly as the queries map it (linalg.relative_pose +
    map_triangle), the segment computed there and moved to the world by a's
    pose. ``normal`` is a's face normal (its winding's right-hand normal,
    outward for an outward-oriented closed mesh: from a towards b), or the
    reverse of b's when a's triangle has zero area, or 0 when both have none.
    """
    buf = np.empty((24, 3))
    for r in range(face_a.shape[0]):
        q = pose_of_row[r]
        Ta = poses_a[ia[q]]
        Tb = poses_b[ib[q]]
        R, t = relative_pose(Ta, Tb)
        A, B = _row_triangles(tris_a, tris_b, face_a[r], face_b[r], R, t)
        flag, x0, y0, z0, x1, y1, z1 = tri_tri_segment(A, B, buf)
        flags[r] = flag
        # a's frame -> world
        for e in range(2):
            px = x0 if e == 0 else x1
            py = y0 if e == 0 else y1
            pz = z0 if e == 0 else z1
            for d in range(3):
                seg[r, e, d] = Ta[d, 0] * px + Ta[d, 1] * py + Ta[d, 2] * pz + Ta[d, 3]
        nx, ny, nz = _unit_normal(A)
        if nx == 0.0 and ny == 0.0 and nz == 0.0:
            mx, my, mz = _unit_normal(B)
            nx = -mx
            ny = -my
            nz = -mz
        for d in range(3):
            normal[r, d] = Ta[d, 0] * nx + Ta[d, 1] * ny + Ta[d, 2] * nz


@njit_internal(nogil=True)
def _unit_normal(T):
    m1, m2, m3, m4, m5, m6 = normal_products(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8])
    nx = m1 - m2
    ny = m3 - m4
    nz = m5 - m6
    # scale first: the squared length of a tiny or huge normal would under/overflow
    m = max(abs(nx), max(abs(ny), abs(nz)))
    if not m > 0.0:
        return 0.0, 0.0, 0.0
    nx /= m
    ny /= m
    nz /= m
    L = math.sqrt(nx * nx + ny * ny + nz * nz)
    return nx / L, ny / L, nz / L


@njit_internal(nogil=True)
def _edge_pierces_interior(E, T):
    """Some edge of E has its ends strictly on both sides of T's plane and crosses
    T's plane strictly inside T (all exact orient3d signs non-zero)."""
    s0 = orient3d(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], E[0], E[1], E[2])
    s1 = orient3d(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], E[3], E[4], E[5])
    s2 = orient3d(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], E[6], E[7], E[8])
    s = (s0, s1, s2)
    for e in range(3):
        e1 = (e + 1) % 3
        if not ((s[e] > 0.0 and s[e1] < 0.0) or (s[e] < 0.0 and s[e1] > 0.0)):
            continue
        px, py, pz = _pt(E, e)
        qx, qy, qz = _pt(E, e1)
        o0 = orient3d(px, py, pz, qx, qy, qz, T[0], T[1], T[2], T[3], T[4], T[5])
        o1 = orient3d(px, py, pz, qx, qy, qz, T[3], T[4], T[5], T[6], T[7], T[8])
        o2 = orient3d(px, py, pz, qx, qy, qz, T[6], T[7], T[8], T[0], T[1], T[2])
        if (o0 > 0.0 and o1 > 0.0 and o2 > 0.0) or (o0 < 0.0 and o1 < 0.0 and o2 < 0.0):
            return True
    return False


@njit(cache=True, nogil=True)
def strict_piercings(tris_a, tris_b, poses_a, poses_b, pose_of_row, ia, ib, face_a, face_b, out):
    """out[r] = True when, in contact row r, an edge of one triangle pierces the open
    interior of the other transversally (exact): the surfaces cross there, so
    for closed meshes the interiors overlap (see query.classify)."""
    for r in range(face_a.shape[0]):
        q = pose_of_row[r]
        R, t = relative_pose(poses_a[ia[q]], poses_b[ib[q]])
        A, B = _row_triangles(tris_a, tris_b, face_a[r], face_b[r], R, t)
        out[r] = _edge_pierces_interior(A, B) or _edge_pierces_interior(B, A)
