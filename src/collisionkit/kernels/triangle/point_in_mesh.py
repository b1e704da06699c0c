"""Point-in-mesh by the generalized winding number.

The winding number of a closed, consistently oriented triangle mesh around a
point p is the sum of the signed solid angles its triangles subtend at p,
divided by 4 pi: 1 inside (outward orientation), 0 outside, whatever the
mesh's shape (Jacobson et al. 2013, "Robust inside-outside segmentation
using generalized winding numbers"). Each solid angle is Van Oosterom &
Strackee's (1983) formula

    tan(Omega / 2) = a . (b x c) / (|a||b||c| + (a.b)|c| + (a.c)|b| + (b.c)|a|)

with a, b, c the triangle's vertices minus p, evaluated with atan2 so every
orientation is covered. Robustness: the sum is a continuous function of p
away from the surface and jumps by 1 across it, so rounding matters only
for points within roundoff of the surface; callers classify with the
threshold 0.5 and use it only for points known to be off the other surface
(containment tests run when the surfaces do not intersect; the
touching/penetrating witness test uses 0.75, see query.classify). For open
or inconsistently oriented meshes the value is the generalized winding
number (a soft inside-ness), not an integer.

Cost: O(F) per point, points in parallel (``prange``).
"""

from __future__ import annotations

import math

from numba import prange

from ..core.jit import njit, njit_internal


@njit_internal(nogil=True)
def winding_number(tris, px, py, pz):
    """Winding number of the (F, 3, 3) triangles around point p."""
    total = 0.0
    for f in range(tris.shape[0]):
        ax = tris[f, 0, 0] - px
        ay = tris[f, 0, 1] - py
        az = tris[f, 0, 2] - pz
        bx = tris[f, 1, 0] - px
        by = tris[f, 1, 1] - py
        bz = tris[f, 1, 2] - pz
        cx = tris[f, 2, 0] - px
        cy = tris[f, 2, 1] - py
        cz = tris[f, 2, 2] - pz
        la = math.sqrt(ax * ax + ay * ay + az * az)
        lb = math.sqrt(bx * bx + by * by + bz * bz)
        lc = math.sqrt(cx * cx + cy * cy + cz * cz)
        det = ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx)
        den = la * lb * lc + (ax * bx + ay * by + az * bz) * lc + (ax * cx + ay * cy + az * cz) * lb
        den += (bx * cx + by * cy + bz * cz) * la
        total += 2.0 * math.atan2(det, den)
    return total / (4.0 * math.pi)


@njit(cache=True, nogil=True, parallel=True)
def winding_numbers(tris, points, out):
    """out[i] = winding number of ``tris`` (F, 3, 3) around points[i] (same frame)."""
    for i in prange(points.shape[0]):
        out[i] = winding_number(tris, points[i, 0], points[i, 1], points[i, 2])


@njit(cache=True, nogil=True, parallel=True)
def winding_numbers_posed(tris, pose_mesh, pose_pts, local_pts, query_mesh_pose, query_pts_pose, out):
    """Winding numbers of mesh ``tris`` (its object frame) around points given in
    another object's frame: query q, point i -> out[q, i].

    Point p (in its object frame) goes to the world by pose_pts[query_pts_pose[q]]
    and into the mesh's frame by the rigid inverse of pose_mesh[query_mesh_pose[q]].
    """
    nq = out.shape[0]
    npt = local_pts.shape[0]
    for k in prange(nq * npt):
        q = k // npt
        i = k % npt
        Tp = pose_pts[query_pts_pose[q]]
        Tm = pose_mesh[query_mesh_pose[q]]
        x = local_pts[i, 0]
        y = local_pts[i, 1]
        z = local_pts[i, 2]
        wx = Tp[0, 0] * x + Tp[0, 1] * y + Tp[0, 2] * z + Tp[0, 3] - Tm[0, 3]
        wy = Tp[1, 0] * x + Tp[1, 1] * y + Tp[1, 2] * z + Tp[1, 3] - Tm[1, 3]
        wz = Tp[2, 0] * x + Tp[2, 1] * y + Tp[2, 2] * z + Tp[2, 3] - Tm[2, 3]
        mx = Tm[0, 0] * wx + Tm[1, 0] * wy + Tm[2, 0] * wz
        my = Tm[0, 1] * wx + Tm[1, 1] * wy + Tm[2, 1] * wz
        mz = Tm[0, 2] * wx + Tm[1, 2] * wy + Tm[2, 2] * wz
        out[q, i] = winding_number(tris, mx, my, mz)
