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
from numba import njit

from ...constants import SPLIT_LONGEST, SPLIT_MINMAX, SPLIT_MINSUM, SPLIT_SPLATTER


@njit(cache=True, nogil=True)
def _mean(key, s, e, r):
    m = 0.0
    for k in range(s, e):
        m += key[k, r]
    return m / (e - s)


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
    nlo0 = np.inf
    nlo1 = np.inf
    nlo2 = np.inf
    nhi0 = -np.inf
    nhi1 = -np.inf
    nhi2 = -np.inf
    for k in range(s, e):
        nlo0 = min(nlo0, flo[k, 0])
        nlo1 = min(nlo1, flo[k, 1])
        nlo2 = min(nlo2, flo[k, 2])
        nhi0 = max(nhi0, fhi[k, 0])
        nhi1 = max(nhi1, fhi[k, 1])
        nhi2 = max(nhi2, fhi[k, 2])
    if rule == SPLIT_LONGEST:
        ext = (nhi0 - nlo0, nhi1 - nlo1, nhi2 - nlo2)
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
    pad = 1e-9 * ((nhi0 - nlo0) + (nhi1 - nlo1) + (nhi2 - nlo2)) + 1e-300
    best_cost = np.inf
    best_value = 0.0
    for r in range(3):
        if cmax[r] <= cmin[r]:
            continue
        value = _mean(key, s, e, r)
        llo0 = np.inf
        llo1 = np.inf
        llo2 = np.inf
        lhi0 = -np.inf
        lhi1 = -np.inf
        lhi2 = -np.inf
        rlo0 = np.inf
        rlo1 = np.inf
        rlo2 = np.inf
        rhi0 = -np.inf
        rhi1 = -np.inf
        rhi2 = -np.inf
        nl = 0
        for k in range(s, e):
            if key[k, r] < value:
                nl += 1
                llo0 = min(llo0, flo[k, 0])
                llo1 = min(llo1, flo[k, 1])
                llo2 = min(llo2, flo[k, 2])
                lhi0 = max(lhi0, fhi[k, 0])
                lhi1 = max(lhi1, fhi[k, 1])
                lhi2 = max(lhi2, fhi[k, 2])
            else:
                rlo0 = min(rlo0, flo[k, 0])
                rlo1 = min(rlo1, flo[k, 1])
                rlo2 = min(rlo2, flo[k, 2])
                rhi0 = max(rhi0, fhi[k, 0])
                rhi1 = max(rhi1, fhi[k, 1])
                rhi2 = max(rhi2, fhi[k, 2])
        if nl == 0 or nl == e - s:
            continue
        vl = (lhi0 - llo0 + pad) * (lhi1 - llo1 + pad) * (lhi2 - llo2 + pad)
        vr = (rhi0 - rlo0 + pad) * (rhi1 - rlo1 + pad) * (rhi2 - rlo2 + pad)
        cost = vl + vr if rule == SPLIT_MINSUM else max(vl, vr)
        if cost < best_cost:
            best_cost = cost
            axis = r
            best_value = value
    return axis, best_value


__all__ = ["split_axis_value", "SPLIT_LONGEST", "SPLIT_MINMAX", "SPLIT_MINSUM", "SPLIT_SPLATTER"]
