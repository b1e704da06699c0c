"""One row accessor per volume kind: how the proximity kernels read a node's extent.

Distance, time of impact and the queries built on them need, per node, a box
that encloses the node's geometry. They read it here, through the volume code,
never by guessing a row's layout (every kind stores its row differently:
``constants.BV_WIDTH``).

``node_extent(kind, bv, i)`` -> (cx, cy, cz, hx, hy, hz):

* AABB and S-AABB (whose row starts with the AABB): centre and half extents;
* OBB: centre (cols 0-2) and half extents along the box's own axes (cols 12-14);
  the axes are read by the OBB paths themselves (``is_obb``);
* sphere: centre and the radius as every half extent (the sphere's cube);
* any later kind (RSS): its own enclosing box, through the contract
  (``dispatch.extent_other``);
* k-DOP: the box of its first three slabs, which are the coordinate axes for
  every k (``kernels/volumes/kdop.py``), widened by a few units of roundoff of
  the coordinates so that rounding the centre and half extents cannot shrink it.

For every kind but OBB the result is an axis-aligned box in the tree's frame
that contains the node's triangles, so a lower bound computed on it is a lower
bound for the node. NOTE: a sphere's cube is looser than the sphere; the bound
stays sound, and sphere trees are the seeds' loosest volume anyway.
"""

from __future__ import annotations

from ...constants import BV_AABB, BV_KDOP6, BV_KDOP26, BV_OBB, BV_SAABB, BV_SPHERE
from ..core.jit import njit_borrowing
from .dispatch import extent_other
from .kdop import kdop_k

_WIDEN = 2.0**-50  # > the rounding of (lo + hi) / 2 and (hi - lo) / 2, relative to max |lo|, |hi|


# forceinline (kernels/core/jit.py): read per node pair by the distance and time-of-impact bounds; as calls their
# node steps ran 1.6-2x slower (issue 16). Callers that hold it are themselves calls.
@njit_borrowing(nogil=True, forceinline=True)
def node_extent(kind, bv, i):
    """(cx, cy, cz, hx, hy, hz): centre and half extents of node ``i`` of a tree of volume ``kind``."""
    if kind == BV_AABB or kind == BV_SAABB:
        return bv[i, 0], bv[i, 1], bv[i, 2], bv[i, 3], bv[i, 4], bv[i, 5]
    if kind == BV_OBB:
        return bv[i, 0], bv[i, 1], bv[i, 2], bv[i, 12], bv[i, 13], bv[i, 14]
    if kind == BV_SPHERE:
        r = bv[i, 3]
        return bv[i, 0], bv[i, 1], bv[i, 2], r, r, r
    if kind < BV_KDOP6 or kind > BV_KDOP26:
        return extent_other(kind, bv, i)
    m = kdop_k(kind) // 2  # k-DOP: minima in cols 0..m-1, maxima in m..2m-1; normals 0-2 are the axes
    lx, ly, lz = bv[i, 0], bv[i, 1], bv[i, 2]
    ux, uy, uz = bv[i, m], bv[i, m + 1], bv[i, m + 2]
    return (
        0.5 * (lx + ux), 0.5 * (ly + uy), 0.5 * (lz + uz),
        0.5 * (ux - lx) + _WIDEN * max(abs(lx), abs(ux)),
        0.5 * (uy - ly) + _WIDEN * max(abs(ly), abs(uy)),
        0.5 * (uz - lz) + _WIDEN * max(abs(lz), abs(uz)),
    )  # fmt: skip


# forceinline (kernels/core/jit.py): twice per node pair in the distance / time-of-impact descents (issue 16).
@njit_borrowing(nogil=True, forceinline=True)
def node_size(kind, bv, i):
    """The descent's "which node is larger" measure: the sum of the half extents."""
    e = node_extent(kind, bv, i)
    return e[3] + e[4] + e[5]
