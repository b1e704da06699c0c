"""The volume contract: dispatch by volume code for the kinds beyond the AABB/OBB hot path.

The traversal (``kernels/traverse/descent.collide_task``) tests AABB and OBB node pairs
inline (PERF: as calls they cost 11-50% of a query, issue 16); every other kind goes
through the functions here, one branch on the code per call. A kind provides, in its own
file under kernels/volumes/:

* its row width (also ``constants.BV_WIDTH``) -> ``bv_width``;
* a fit over triangles idx[s:e] (builders, refits) -> ``fit_other``;
* a conservative node-pair overlap test, b's node moved by (R, t) -> ``overlap_other``;
* the descent's size measure -> ``size_other``;
* a box in the tree's frame enclosing a node, which is how the distance and
  time-of-impact bounds read it -> ``extent_other`` (``access.node_extent``).

Adding a kind: its file, its code and width in ``constants`` (``BV_KINDS``,
``BV_WIDTH``), one branch in each function below, and its row layout for the Python side
(``bvh/volumes.py``: ``length_columns``, ``containment_excess``). Every query and strategy
that accepts the other kinds then takes it (tests/test_query_matrix.py runs every kind
in ``BV_KINDS``). kernels/volumes/rss.py was added that way.
"""

from __future__ import annotations

from ...constants import BV_AABB, BV_OBB, BV_RSS, BV_SPHERE
from ..core.jit import njit_internal
from .kdop import fit_kdop, kdop_k, kdop_size, kdop_width, overlap_kdop_kdop
from .rss import fit_rss, overlap_rss, rss_extent, rss_size
from .sphere import fit_sphere, overlap_sphere_sphere


@njit_internal(nogil=True)
def bv_width(kind):
    """Floats per node row of a volume code (constants.BV_WIDTH, for kernels)."""
    if kind == BV_AABB:
        return 6
    if kind == BV_OBB or kind == BV_RSS:
        return 15
    if kind == BV_SPHERE:
        return 4
    return kdop_width(kdop_k(kind))


@njit_internal(nogil=True)
def fit_other(kind, fit, tris, idx, s, e, out, pts, lo, hi, verts):
    """Fit a sphere (``fit`` 0: minimal, 1: Ritter), an RSS or a k-DOP over triangles idx[s:e].

    Scratch: ``pts`` >= 3 (e - s) rows, ``lo``/``hi`` >= 13, ``verts`` >= 48 rows.
    """
    if kind == BV_RSS:
        fit_rss(tris, idx, s, e, out, verts.reshape(-1))
    elif kind == BV_SPHERE:
        fit_sphere(tris, idx, s, e, 1 if fit == 0 else 0, out, pts)
    else:
        fit_kdop(tris, idx, s, e, kdop_k(kind), out, lo, hi, verts)


@njit_internal(nogil=True)
def overlap_other(kind, R, t, bv_a, ia, bv_b, ib, slack):
    """(hit, volume updates) for a node pair of a sphere, RSS or k-DOP tree (b moved by R, t)."""
    if kind == BV_RSS:
        return overlap_rss(R, t, bv_a, ia, bv_b, ib, slack), 0
    if kind == BV_SPHERE:
        return overlap_sphere_sphere(R, t, bv_a, ia, bv_b, ib, slack), 0
    return overlap_kdop_kdop(kdop_k(kind), R, t, bv_a, ia, bv_b, ib, slack)


@njit_internal(nogil=True)
def size_other(kind, bv, i):
    """The descent's "which node is larger" measure for spheres, RSS and k-DOPs."""
    if kind == BV_RSS:
        return rss_size(bv, i)
    if kind == BV_SPHERE:
        return bv[i, 3]
    return kdop_size(bv, i, kdop_k(kind) // 2)


@njit_internal(nogil=True)
def extent_other(kind, bv, i):
    """(cx, cy, cz, hx, hy, hz): a box in the tree's frame enclosing node ``i`` of a kind
    beyond AABB, S-AABB, OBB, sphere and k-DOP (which ``access.node_extent`` reads inline)."""
    return rss_extent(bv, i)
