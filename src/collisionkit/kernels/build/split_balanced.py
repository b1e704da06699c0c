"""Seed 002's balanced split: the plane minimising f(p) = |n_l - n_r| + lambda * n_c.

Seed 002, s.3.1 (4): a node's triangles are represented by their underlying
spheres; for an axis-aligned plane p, n_l / n_r count the spheres entirely on
the left / right of p and n_c those the plane cuts. The plane of smallest f over
the three axes is chosen, which keeps the tree balanced (equal subtasks for the
parallel traversal) while avoiding cuts through many triangles.

NOTE (deviation, on purpose): the seed puts a cut sphere into BOTH children. A
triangle in two leaves would be tested twice and reported twice, and the flat
tree layout (each subtree a contiguous range of triangles) would break; here a
cut sphere goes to the side of its centre, and lambda * n_c still steers the
plane away from cutting (a cut triangle widens one child's box). Candidate
planes are the spheres' centre coordinates, so each side gets at least one
triangle; the left side is every triangle whose sphere centre is < p.
"""

from __future__ import annotations

import numpy as np

from ...constants import BALANCED_LAMBDA
from ..core.jit import njit_internal
from ..volumes.saabb import triangle_sphere


@njit_internal(nogil=True)
def split_balanced(tris, idx, key, flo, fhi, s, e, axes):
    """Partition idx[s:e] (key/flo/fhi rows travel with idx) and return the split position.

    ``axes`` (3, 3): the split frame (identity for AABB trees, the node's
    principal frame for OBB trees); sphere centres are projected onto its rows.
    Falls back to halving the segment when every centre coincides on all axes.
    """
    n = e - s
    cen = np.empty((n, 3))
    rad = np.empty(n)
    for k in range(n):
        i = idx[s + k]
        sp = triangle_sphere(
            tris[i, 0, 0], tris[i, 0, 1], tris[i, 0, 2],
            tris[i, 1, 0], tris[i, 1, 1], tris[i, 1, 2],
            tris[i, 2, 0], tris[i, 2, 1], tris[i, 2, 2],
        )
        for r in range(3):
            cen[k, r] = axes[r, 0] * sp[0] + axes[r, 1] * sp[1] + axes[r, 2] * sp[2]
        rad[k] = sp[3]
    best_f = np.inf
    best_tie = n + 1
    best_axis = -1
    best_p = 0.0
    for r in range(3):
        c = cen[:, r].copy()
        cs = np.sort(c)
        if cs[0] == cs[n - 1]:
            continue
        lo = np.sort(c - rad)
        hi = np.sort(c + rad)
        # Sweep the candidate planes p = cs[j] upwards; n_l = #(hi <= p), n_r = #(lo >= p).
        il = 0
        ir = 0
        for j in range(1, n):
            p = cs[j]
            if p == cs[j - 1]:
                continue
            while il < n and hi[il] <= p:
                il += 1
            while ir < n and lo[ir] < p:
                ir += 1
            nl = il
            nr = n - ir
            nc = n - nl - nr
            if nc < 0:
                nc = 0  # a zero-radius sphere on the plane is on both sides
            f = abs(nl - nr) + BALANCED_LAMBDA * nc
            # Ties (common near the leaves, where every plane cuts every sphere) go
            # to the plane that splits the triangles themselves most evenly.
            tie = abs(2 * j - n)
            if f < best_f or (f == best_f and tie < best_tie):
                best_f = f
                best_tie = tie
                best_axis = r
                best_p = p
    if best_axis < 0:
        return s + n // 2  # all centres coincide: any halving is as good
    # Two-pointer partition on centre < p, moving every row that travels with idx.
    i = 0
    j = n - 1
    while i <= j:
        if cen[i, best_axis] < best_p:
            i += 1
        else:
            t = idx[s + i]
            idx[s + i] = idx[s + j]
            idx[s + j] = t
            for d in range(3):
                x = cen[i, d]
                cen[i, d] = cen[j, d]
                cen[j, d] = x
                x = key[s + i, d]
                key[s + i, d] = key[s + j, d]
                key[s + j, d] = x
                x = flo[s + i, d]
                flo[s + i, d] = flo[s + j, d]
                flo[s + j, d] = x
                x = fhi[s + i, d]
                fhi[s + i, d] = fhi[s + j, d]
                fhi[s + j, d] = x
            j -= 1
    return s + i
