"""Dispatch by volume code for the volume kinds beyond the AABB/OBB hot path.

The traversal (``bvh_traverse.collide_task``) tests AABB and OBB node pairs
inline; every other kind goes through ``overlap_other`` here (one branch on
the code per node test). The builders fit any kind through ``fit_other``.
"""

from __future__ import annotations

from numba import njit

from ...constants import BV_AABB, BV_OBB, BV_SPHERE
from .kdop import fit_kdop, kdop_k, kdop_size, kdop_width, overlap_kdop_kdop
from .sphere import fit_sphere, overlap_sphere_sphere


@njit(cache=True, nogil=True)
def bv_width(kind):
    """Floats per node row of a volume code (constants.BV_WIDTH, for kernels)."""
    if kind == BV_AABB:
        return 6
    if kind == BV_OBB:
        return 15
    if kind == BV_SPHERE:
        return 4
    return kdop_width(kdop_k(kind))


@njit(cache=True, nogil=True)
def fit_other(kind, fit, tris, idx, s, e, out, pts, lo, hi, verts):
    """Fit a sphere (``fit`` 0: minimal, 1: Ritter) or a k-DOP over triangles idx[s:e].

    Scratch: ``pts`` >= 3 (e - s) rows, ``lo``/``hi`` >= 13, ``verts`` >= 48 rows.
    """
    if kind == BV_SPHERE:
        fit_sphere(tris, idx, s, e, 1 if fit == 0 else 0, out, pts)
    else:
        fit_kdop(tris, idx, s, e, kdop_k(kind), out, lo, hi, verts)


@njit(cache=True, nogil=True)
def overlap_other(kind, R, t, bv_a, ia, bv_b, ib, slack):
    """(hit, volume updates) for a node pair of a sphere or k-DOP tree (b moved by R, t)."""
    if kind == BV_SPHERE:
        return overlap_sphere_sphere(R, t, bv_a, ia, bv_b, ib, slack), 0
    return overlap_kdop_kdop(kdop_k(kind), R, t, bv_a, ia, bv_b, ib, slack)


@njit(cache=True, nogil=True)
def size_other(kind, bv, i):
    """The descent's "which node is larger" measure for spheres and k-DOPs."""
    if kind == BV_SPHERE:
        return bv[i, 3]
    return kdop_size(bv, i, kdop_k(kind) // 2)
