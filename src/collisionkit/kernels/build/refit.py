"""Refit a hierarchy's volumes to moved vertices (same topology, same leaf order).

For deformable meshes (seed 001, "rigid vs deformable"): the tree's topology
and leaf order stay, every volume is recomputed bottom-up for the new
triangles:

* AABB: leaves from their triangles, inner nodes the union of their children
  (equal to a fresh fit of the node);
* sphere: leaves fitted as the build does, inner nodes the smallest sphere
  around their children's spheres (looser than a fresh fit, linear time);
* k-DOP: leaves fitted, inner intervals the union of the children's (equal
  to a fresh fit); the points kept for rotations are refitted per node
  (their triangle vertices or the new k-DOP's vertices);
* OBB: each node keeps its axes; centre and extents from its triangles;
* RSS: a fresh fit per node (kernels/volumes/rss.py).
"""

from __future__ import annotations

import numpy as np

from ...constants import BV_AABB, BV_OBB, BV_RSS, BV_SPHERE, LEAF_FLAG
from ..core.jit import njit
from ..volumes.kdop import fit_kdop, kdop_k, kdop_vertices
from ..volumes.rss import fit_rss
from ..volumes.sphere import fit_sphere, merge_spheres


@njit(cache=True, nogil=True)
def refit_volumes(tris, topo, bv_kind, fit, bv):
    """Recompute ``bv`` (n, width) in place for leaf-order triangles ``tris`` (F, 3, 3)."""
    n = topo.shape[0]
    F = tris.shape[0]
    first = np.empty(n, np.int64)
    last = np.empty(n, np.int64)
    idx = np.arange(F).astype(np.int32)
    pts = np.empty((3 * F if bv_kind == BV_SPHERE else 1, 3))
    lo = np.empty(13)
    hi = np.empty(13)
    verts = np.empty((48, 3))
    for o in range(n - 1, -1, -1):
        leaf = (topo[o, 2] & LEAF_FLAG) != 0
        if leaf:
            first[o] = topo[o, 0]
            last[o] = topo[o, 0] + topo[o, 1]
        else:
            c0 = topo[o, 0]
            c1 = c0 + topo[o, 1]
            first[o] = first[c0]
            last[o] = last[c1 - 1]
        s = first[o]
        e = last[o]
        if bv_kind == BV_AABB:
            if leaf:
                for d in range(3):
                    a = np.inf
                    b = -np.inf
                    for i in range(s, e):
                        for v in range(3):
                            a = min(a, tris[i, v, d])
                            b = max(b, tris[i, v, d])
                    bv[o, d] = 0.5 * (a + b)
                    bv[o, 3 + d] = 0.5 * (b - a)
            else:
                for d in range(3):
                    a = np.inf
                    b = -np.inf
                    for c in range(topo[o, 0], topo[o, 0] + topo[o, 1]):
                        a = min(a, bv[c, d] - bv[c, 3 + d])
                        b = max(b, bv[c, d] + bv[c, 3 + d])
                    # NOTE: centre +- half rounds; pad by the roundoff of the values
                    pad = 4.0 * 2.0**-53 * (abs(a) + abs(b))
                    bv[o, d] = 0.5 * (a + b)
                    bv[o, 3 + d] = 0.5 * (b - a) + pad
        elif bv_kind == BV_OBB:
            lo3 = np.full(3, np.inf)
            hi3 = np.full(3, -np.inf)
            for i in range(s, e):
                for v in range(3):
                    for r in range(3):
                        x = (
                            bv[o, 3 + 3 * r] * tris[i, v, 0]
                            + bv[o, 4 + 3 * r] * tris[i, v, 1]
                            + bv[o, 5 + 3 * r] * tris[i, v, 2]
                        )
                        lo3[r] = min(lo3[r], x)
                        hi3[r] = max(hi3[r], x)
            for d in range(3):
                c = 0.0
                for r in range(3):
                    c += bv[o, 3 + 3 * r + d] * 0.5 * (lo3[r] + hi3[r])
                bv[o, d] = c
            for r in range(3):
                bv[o, 12 + r] = 0.5 * (hi3[r] - lo3[r]) + 4.0 * 2.0**-53 * (abs(lo3[r]) + abs(hi3[r]))
        elif bv_kind == BV_RSS:
            fit_rss(tris, idx, s, e, bv[o], verts.reshape(-1))  # no cheap union: a fresh fit
        elif bv_kind == BV_SPHERE:
            if leaf:
                fit_sphere(tris, idx, s, e, 1 if fit == 0 else 0, bv[o], pts)
            else:
                c0 = topo[o, 0]
                ball = (bv[c0, 0], bv[c0, 1], bv[c0, 2], bv[c0, 3])
                for c in range(c0 + 1, c0 + topo[o, 1]):
                    ball = merge_spheres(ball[0], ball[1], ball[2], ball[3], bv[c, 0], bv[c, 1], bv[c, 2], bv[c, 3])
                bv[o, 0] = ball[0]
                bv[o, 1] = ball[1]
                bv[o, 2] = ball[2]
                bv[o, 3] = ball[3]
        else:
            k = kdop_k(bv_kind)
            m = k // 2
            if leaf or 3 * (e - s) <= 2 * k - 4:
                fit_kdop(tris, idx, s, e, k, bv[o], lo, hi, verts)
            else:
                # intervals: union of the children's; points: the new k-DOP's vertices
                for j in range(m):
                    lo[j] = np.inf
                    hi[j] = -np.inf
                    for c in range(topo[o, 0], topo[o, 0] + topo[o, 1]):
                        lo[j] = min(lo[j], bv[c, j])
                        hi[j] = max(hi[j], bv[c, m + j])
                    bv[o, j] = lo[j]
                    bv[o, m + j] = hi[j]
                count = kdop_vertices(lo, hi, k, verts)
                if count < 0:
                    fit_kdop(tris, idx, s, e, k, bv[o], lo, hi, verts)
                else:
                    bv[o, k] = count
                    for r in range(count):
                        bv[o, k + 1 + 3 * r] = verts[r, 0]
                        bv[o, k + 2 + 3 * r] = verts[r, 1]
                        bv[o, k + 3 + 3 * r] = verts[r, 2]
                    for r in range(count, 2 * k - 4):
                        bv[o, k + 1 + 3 * r] = 0.0
                        bv[o, k + 2 + 3 * r] = 0.0
                        bv[o, k + 3 + 3 * r] = 0.0
