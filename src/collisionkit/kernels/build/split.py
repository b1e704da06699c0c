"""Split-plane choice of the k-DOP-tree rules (seed 001 2.3.2, Klosowski et al. 1998).

Each rule picks an axis of the split frame (world axes, or the node's principal
axes for OBB trees) and cuts at the mean of the triangle centroids on it;
triangles go to the side holding their centroid (seed 001, step 4):

* ``longest``: the axis along which the node's box is longest;
* ``minsum``: the axis whose cut minimises vol(left) + vol(right);
* ``minmax``: the axis whose cut minimises max(vol(left), vol(right));
* ``splatter``: the axis of largest variance of the centroids.

Volumes are those of the children's boxes in the split frame (an upper bound of
every kind's volume that is cheap to sweep); each extent is padded by 1e-9 of the
node's box size so flat children (planar patches) still compare by their area.
Returns (axis, value); axis -1 means no axis separates the centroids (the
caller halves the segment).
"""

from __future__ import annotations

import numpy as np

from ...constants import SPLIT_LONGEST, SPLIT_MINMAX, SPLIT_MINSUM, SPLIT_SPLATTER
from ..core.jit import njit, njit_internal

#: The empty box (lo0, lo1, lo2, hi0, hi1, hi2): the first grow_box replaces it.
EMPTY_BOX = (np.inf, np.inf, np.inf, -np.inf, -np.inf, -np.inf)


@njit(cache=True, nogil=True)
def grow_box(box, lo, hi, k):
    """The 6-tuple ``box`` (lo0, lo1, lo2, hi0, hi1, hi2) grown by row k of the (n, 3)
    arrays ``lo`` (minima) and ``hi`` (maxima); lo is hi for the bounds of points."""
    return (
        min(box[0], lo[k, 0]), min(box[1], lo[k, 1]), min(box[2], lo[k, 2]),
        max(box[3], hi[k, 0]), max(box[4], hi[k, 1]), max(box[5], hi[k, 2]),
    )  # fmt: skip


@njit_internal(nogil=True)
def _mean(key, s, e, r):
    m = 0.0
    for k in range(s, e):
        m += key[k, r]
    return m / (e - s)


@njit_internal(nogil=True)
def _padded_volume(box, pad):
    return (box[3] - box[0] + pad) * (box[4] - box[1] + pad) * (box[5] - box[2] + pad)


@njit(cache=True, nogil=True)
def split_axis_value(key, flo, fhi, s, e, rule, cmin, cmax):
    """(axis, value) of the cut for ``rule`` over rows s:e (see the module doc)."""
    axis = np.int64(-1)
    if rule == SPLIT_SPLATTER:
        best = 0.0
        for r in range(3):
            if cmax[r] <= cmin[r]:
                continue
            mu = _mean(key, s, e, r)
            var = 0.0
            for k in range(s, e):
                d = key[k, r] - mu
                var += d * d
            if var > best:
                best = var
                axis = r
        if axis < 0:
            return axis, 0.0
        return axis, _mean(key, s, e, axis)
    # node box in the split frame
    node = EMPTY_BOX
    for k in range(s, e):
        node = grow_box(node, flo, fhi, k)
    ext = (node[3] - node[0], node[4] - node[1], node[5] - node[2])
    if rule == SPLIT_LONGEST:
        best = -1.0
        for r in range(3):
            if cmax[r] <= cmin[r]:
                continue  # the cut could not separate any centroid
            if ext[r] > best:
                best = ext[r]
                axis = r
        if axis < 0:
            return axis, 0.0
        return axis, _mean(key, s, e, axis)
    # minsum / minmax
    pad = 1e-9 * (ext[0] + ext[1] + ext[2]) + 1e-300
    best_cost = np.inf
    best_value = 0.0
    for r in range(3):
        if cmax[r] <= cmin[r]:
            continue
        value = _mean(key, s, e, r)
        left = EMPTY_BOX
        right = EMPTY_BOX
        nl = 0
        for k in range(s, e):
            if key[k, r] < value:
                nl += 1
                left = grow_box(left, flo, fhi, k)
            else:
                right = grow_box(right, flo, fhi, k)
        if nl == 0 or nl == e - s:
            continue
        vl = _padded_volume(left, pad)
        vr = _padded_volume(right, pad)
        cost = vl + vr if rule == SPLIT_MINSUM else max(vl, vr)
        if cost < best_cost:
            best_cost = cost
            axis = r
            best_value = value
    return axis, best_value


__all__ = ["EMPTY_BOX", "grow_box", "split_axis_value", "SPLIT_LONGEST", "SPLIT_MINMAX", "SPLIT_MINSUM", "SPLIT_SPLATTER"]
