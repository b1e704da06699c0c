"""Rectangle swept spheres (RSS): the volume kind added through the volume contract.

An RSS is every point within ``r`` of a rectangle: centre ``c``, in-plane unit axes
``u``, ``v`` (half lengths ``a``, ``b``) and normal ``w = u x v``. Larsen, Gottschalk,
Lin and Manocha introduced it for distance queries (PQP, 1999): thin as an OBB across a
flat patch, rounded where an OBB has corners.

Row (``constants.BV_WIDTH[BV_RSS]`` = 15, the OBB's layout with a radius in place of the
third half extent): centre (cols 0-2), axes ``u, v, w`` as rows (cols 3-11), ``a``, ``b``
(cols 12-13), ``r`` (col 14).

The contract every kind beyond AABB/OBB provides (``kernels/volumes/dispatch.py`` routes
to it by volume code; registration is one line per contract function there, the code and
width in ``constants``, and the Python-side layout in ``bvh/volumes.py``):

* ``fit_rss``: the volume of triangles idx[s:e] into a row (builders, refits);
* ``overlap_rss``: a conservative node-pair test with b's node moved by (R, t);
* ``rss_extent``: a box in the tree's frame enclosing the node (distance and time of
  impact read every non-OBB kind through it: ``kernels/volumes/access.node_extent``);
* ``rss_size``: the descent's "which node is larger" measure.

Overlap test (why it is sound): for a unit axis L, the gap between the projections of the
two rectangles is a lower bound of their distance (projection onto a unit vector does not
increase distances), so the two RSS are disjoint when that gap exceeds ``ra + rb``. The 15
axes of the box test (``box.boxes_overlap``) on the rectangles as boxes of zero thickness
are unit (faces) or shorter than unit (the cross products ``A_i x B_j``, |L| <= 1), and
there the test compares the unnormalised gap with ``(ra + rb)`` rather than
``(ra + rb) |L|``: a smaller claim of separation, never a wrong one. So the test is
``boxes_overlap`` with half extents (a, b, 0) and slack ``slack + ra + rb``.

NOTE: PQP computes the exact rectangle-rectangle distance; this file keeps the test to the
separating axes (conservative, a little looser across edge-edge configurations) so the
kind reuses the box test the descent already trusts.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit, njit_internal
from ..core.linalg import symmetric_eigen3
from .box import boxes_overlap, frame_in_frame

_U = 2.0**-53


@njit_internal(nogil=True)
def fit_rss(tris, idx, s, e, out, work):
    """RSS of triangles idx[s:e] into the row ``out`` (``work``: >= 45 floats of scratch).

    Frame: the principal axes of the vertices (largest variance first: ``u``, ``v`` span
    the rectangle, ``w`` its normal). The rectangle is the vertices' box in that frame,
    shrunk by the half thickness along ``u`` and ``v``; the radius is then the largest
    distance of a vertex to that rectangle, rounded up, so every vertex (and, the RSS being
    convex, every triangle) lies inside.
    """
    n = 3 * (e - s)
    m = work[0:3]
    m[:] = 0.0
    for k in range(s, e):
        i = idx[k]
        for v in range(3):
            for d in range(3):
                m[d] += tris[i, v, d]
    for d in range(3):
        m[d] /= n
    C = work[3:12].reshape((3, 3))
    C[:, :] = 0.0
    for k in range(s, e):
        i = idx[k]
        for v in range(3):
            for p in range(3):
                dp = tris[i, v, p] - m[p]
                for q in range(p, 3):
                    C[p, q] += dp * (tris[i, v, q] - m[q])
    for p in range(3):
        for q in range(p + 1, 3):
            C[q, p] = C[p, q]
    axes = work[12:21].reshape((3, 3))
    symmetric_eigen3(C, axes, work[21:45])
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    for k in range(s, e):
        i = idx[k]
        for v in range(3):
            x, y, z = tris[i, v, 0], tris[i, v, 1], tris[i, v, 2]
            p0 = axes[0, 0] * x + axes[0, 1] * y + axes[0, 2] * z
            p1 = axes[1, 0] * x + axes[1, 1] * y + axes[1, 2] * z
            p2 = axes[2, 0] * x + axes[2, 1] * y + axes[2, 2] * z
            lo0, hi0 = min(lo0, p0), max(hi0, p0)
            lo1, hi1 = min(lo1, p1), max(hi1, p1)
            lo2, hi2 = min(lo2, p2), max(hi2, p2)
    c0, c1, c2 = 0.5 * (lo0 + hi0), 0.5 * (lo1 + hi1), 0.5 * (lo2 + hi2)
    half_w = 0.5 * (hi2 - lo2)
    a = max(0.5 * (hi0 - lo0) - half_w, 0.0)
    b = max(0.5 * (hi1 - lo1) - half_w, 0.0)
    r2 = 0.0
    for k in range(s, e):
        i = idx[k]
        for v in range(3):
            x, y, z = tris[i, v, 0], tris[i, v, 1], tris[i, v, 2]
            du = max(abs(axes[0, 0] * x + axes[0, 1] * y + axes[0, 2] * z - c0) - a, 0.0)
            dv = max(abs(axes[1, 0] * x + axes[1, 1] * y + axes[1, 2] * z - c1) - b, 0.0)
            dw = axes[2, 0] * x + axes[2, 1] * y + axes[2, 2] * z - c2
            r2 = max(r2, du * du + dv * dv + dw * dw)
    # EXACT enough: the projections and the centre are rounded; pad the radius by their
    # roundoff relative to the coordinates (as the OBB fit pads its half extents)
    mag = max(max(abs(lo0), abs(hi0)), max(max(abs(lo1), abs(hi1)), max(abs(lo2), abs(hi2))))
    r = np.sqrt(r2) * (1.0 + 4.0 * _U) + 16.0 * _U * mag
    for d in range(3):
        out[d] = axes[0, d] * c0 + axes[1, d] * c1 + axes[2, d] * c2
        out[3 + d] = axes[0, d]
        out[6 + d] = axes[1, d]
        out[9 + d] = axes[2, d]
    # the centre's rotation back to the tree frame rounds too: the rectangle keeps its
    # half lengths, the radius takes that roundoff
    out[12] = a
    out[13] = b
    out[14] = r + 8.0 * _U * mag


@njit(cache=True, nogil=True)
def overlap_rss(R, t, bv_a, ia, bv_b, ib, slack):
    """Do node ``ia`` of a and node ``ib`` of b (moved by R, t into a's frame) overlap?
    Conservative (see the module notes); R a row-major 9-tuple, t a 3-tuple."""
    t0, t1, t2, Rab, Aab = frame_in_frame(R, t, bv_a, ia, bv_b, ib)  # the rectangles' frames
    return boxes_overlap(
        t0, t1, t2, Rab, Aab,
        bv_a[ia, 12], bv_a[ia, 13], 0.0,
        bv_b[ib, 12], bv_b[ib, 13], 0.0,
        slack + bv_a[ia, 14] + bv_b[ib, 14],
    )  # fmt: skip


@njit(cache=True, nogil=True)
def rss_extent(bv, i):
    """(cx, cy, cz, hx, hy, hz): a box in the tree's frame enclosing node ``i``'s RSS."""
    a = bv[i, 12]
    b = bv[i, 13]
    r = bv[i, 14]
    hx = a * abs(bv[i, 3]) + b * abs(bv[i, 6]) + r
    hy = a * abs(bv[i, 4]) + b * abs(bv[i, 7]) + r
    hz = a * abs(bv[i, 5]) + b * abs(bv[i, 8]) + r
    pad = 4.0 * _U * (a + b + r)  # the products and sums above round
    return bv[i, 0], bv[i, 1], bv[i, 2], hx + pad, hy + pad, hz + pad


@njit_internal(nogil=True)
def rss_size(bv, i):
    """The descent's "which node is larger" measure: half lengths plus the radius."""
    return bv[i, 12] + bv[i, 13] + bv[i, 14]
