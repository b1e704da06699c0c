"""Bulk-loaded R-trees by sort-tile-recursive packing (seed 000, "R-дерева").

Seed 000 keeps per object an R-tree over its surfaces' boxes (SBV) and per
surface an R-tree over its triangles' boxes (TBV), all in the object's local
frame. R-trees suit it because every primitive sits in exactly one node per
level, all leaves lie on one level, and a tree of n primitives with node
capacity m has depth about log_m n (Guttman 1984).

Bulk loading: sort-tile-recursive (STR; Leutenegger, Lopez & Edgington 1997).
For k boxes and capacity m at one level: P = ceil(k / m) nodes are wanted;
S = ceil(P ** (1/3)); sort the boxes by centre x and cut slabs of S*S*m;
sort each slab by centre y and cut runs of S*m; sort each run by centre z and
cut groups of m. Each group becomes a node of the next level up, whose boxes
are packed the same way until one node (the root) remains. The group sizes
depend only on k and m, so a tree's node count is known before it is built
(``tree_nodes``) and the builder writes into preallocated arrays. Sorting is
stable (mergesort): the tree is a deterministic function of the boxes.

Flat layout of one object (``build_object_rtrees``), all node indices global:

* ``topo`` (N, 3) int32 rows (first, count, flags): bit 0 of flags = leaf.
  Inner nodes: children are nodes first .. first+count-1 (consecutive).
  Leaves of the surface tree: entries first .. of the per-surface arrays;
  leaves of a triangle tree: entries first .. of the per-triangle arrays.
* ``box`` (N, 6) float64 (min x, y, z, max x, y, z), exact min/max of the
  float64 vertex coordinates (no rounding: a box test against it is exact).
* nodes 0 .. n_surface_nodes-1 are the surface tree (root 0), laid out level
  by level from the root; each surface's triangle tree follows, root first.
* per surface, in surface-leaf order: ``surf_root`` (its triangle tree's
  root node) and ``surf_order`` (the surface's compact id).
* per triangle, in triangle-leaf order: ``tri_order`` (face index).
"""

from __future__ import annotations

import numpy as np

from ...constants import LEAF_FLAG
from ..core.jit import njit, njit_internal

# Meta row of an object's R-trees (int64).
RT_NODES = 0  # nodes in all
RT_SURFACE_NODES = 1  # nodes of the surface tree (0 .. this - 1)
RT_DEPTH_S = 2  # depth of the surface tree (root = 0)
RT_DEPTH_T = 3  # largest depth of a triangle tree
RT_CAPACITY = 4  # node capacity m
RT_FACES = 5
RT_SURFACES = 6
RT_META_WIDTH = 8


@njit_internal(nogil=True)
def _group_boxes(lo, hi, members, starts, n, glo, ghi):
    """glo[g], ghi[g] <- the box of the boxes (lo, hi) of entries members[starts[g]:starts[g + 1]],
    for the n groups g (an empty group gets the empty box: inf, -inf)."""
    for g in range(n):
        for d in range(3):
            glo[g, d] = np.inf
            ghi[g, d] = -np.inf
        for p in range(starts[g], starts[g + 1]):
            e = members[p]
            for d in range(3):
                glo[g, d] = min(glo[g, d], lo[e, d])
                ghi[g, d] = max(ghi[g, d], hi[e, d])


@njit_internal(nogil=True)
def _cube_root_ceil(p):
    s = 1
    while s * s * s < p:
        s += 1
    return s


@njit(cache=True, nogil=True)
def level_groups(k, m):
    """Nodes that STR packing makes out of k entries at one level (capacity m >= 2)."""
    if k <= m:
        return 1
    P = (k + m - 1) // m
    S = _cube_root_ceil(P)
    slab = S * S * m
    run = S * m
    g = 0
    for s0 in range(0, k, slab):
        s1 = min(s0 + slab, k)
        for r0 in range(s0, s1, run):
            r1 = min(r0 + run, s1)
            g += (r1 - r0 + m - 1) // m
    return g


@njit(cache=True, nogil=True)
def tree_nodes(k, m):
    """(nodes, levels) of the STR tree over k >= 1 entries: a function of k and m only."""
    total = 0
    levels = 0
    while True:
        g = level_groups(k, m)
        total += g
        levels += 1
        if g == 1:
            return total, levels
        k = g


@njit_internal(nogil=True)
def _str_group(lo, hi, m, perm, bounds, glo, ghi):
    """Pack the k = lo.shape[0] boxes of one level into groups of at most m.

    Writes the packing order ``perm`` (k,), group g's members at positions
    bounds[g] .. bounds[g+1]-1 of perm, and each group's box (glo, ghi).
    Returns the number of groups (== level_groups(k, m)).
    """
    k = lo.shape[0]
    if k <= m:
        for i in range(k):
            perm[i] = i
        bounds[0] = 0
        bounds[1] = k
        g = 1
    else:
        cx = np.empty(k)
        cy = np.empty(k)
        cz = np.empty(k)
        for i in range(k):
            # centre times 2: only the order matters
            cx[i] = lo[i, 0] + hi[i, 0]
            cy[i] = lo[i, 1] + hi[i, 1]
            cz[i] = lo[i, 2] + hi[i, 2]
        order = np.argsort(cx, kind="mergesort")
        P = (k + m - 1) // m
        S = _cube_root_ceil(P)
        slab = S * S * m
        run = S * m
        g = 0
        bounds[0] = 0
        for s0 in range(0, k, slab):
            s1 = min(s0 + slab, k)
            idx = order[s0:s1]
            idx = idx[np.argsort(cy[idx], kind="mergesort")]
            for r0 in range(0, s1 - s0, run):
                r1 = min(r0 + run, s1 - s0)
                ridx = idx[r0:r1]
                ridx = ridx[np.argsort(cz[ridx], kind="mergesort")]
                for i in range(r1 - r0):
                    perm[s0 + r0 + i] = ridx[i]
                for q0 in range(r0, r1, m):
                    g += 1
                    bounds[g] = s0 + min(q0 + m, r1)
    _group_boxes(lo, hi, perm, bounds, g, glo, ghi)
    return g


@njit_internal(nogil=True)
def build_str_tree(lo, hi, ids, m, topo, box, node0, entry_out, entry0):
    """Build one STR tree over the boxes (lo, hi) (k, 3) of entries ``ids`` (k,).

    Writes tree_nodes(k, m)[0] nodes at topo/box[node0 ...] (root first, level
    by level) and the entries' ids in leaf order at entry_out[entry0 ...];
    leaves point at those entry positions, inner nodes at their children.
    Returns the tree's depth (root = 0).
    """
    k = lo.shape[0]
    total, levels = tree_nodes(k, m)
    # per grouping step j (0 .. levels-1): entities in, groups out
    ent_count = np.empty(levels + 1, np.int64)
    ent_count[0] = k
    kk = k
    for j in range(levels):
        kk = level_groups(kk, m)
        ent_count[j + 1] = kk
    perm_off = np.zeros(levels + 1, np.int64)
    bnd_off = np.zeros(levels + 1, np.int64)
    box_off = np.zeros(levels + 1, np.int64)
    for j in range(levels):
        perm_off[j + 1] = perm_off[j] + ent_count[j]
        bnd_off[j + 1] = bnd_off[j] + ent_count[j + 1] + 1
        box_off[j + 1] = box_off[j] + ent_count[j + 1]
    perm = np.empty(perm_off[levels], np.int64)
    bounds = np.empty(bnd_off[levels], np.int64)
    glo = np.empty((box_off[levels], 3))
    ghi = np.empty((box_off[levels], 3))
    cur_lo = lo
    cur_hi = hi
    for j in range(levels):
        g = _str_group(
            cur_lo, cur_hi, m,
            perm[perm_off[j] : perm_off[j + 1]],
            bounds[bnd_off[j] : bnd_off[j + 1]],
            glo[box_off[j] : box_off[j + 1]],
            ghi[box_off[j] : box_off[j + 1]],
        )  # fmt: skip
        assert g == ent_count[j + 1]
        cur_lo = glo[box_off[j] : box_off[j + 1]]
        cur_hi = ghi[box_off[j] : box_off[j + 1]]
    # Node level L = 1 .. levels (1 = leaves) holds the groups of step L-1;
    # stored top-down: level `levels` (the root) first.
    node_off = np.empty(levels + 2, np.int64)
    node_off[levels] = node0
    for L in range(levels - 1, 0, -1):
        node_off[L] = node_off[L + 1] + ent_count[L + 1]
    cursor = entry0
    for L in range(levels, 0, -1):
        n_level = ent_count[L]
        for p in range(n_level):
            # storage position p holds the entity that step L packs at position p
            e = perm[perm_off[L] + p] if L < levels else 0
            node = node_off[L] + p
            for d in range(3):
                box[node, d] = glo[box_off[L - 1] + e, d]
                box[node, 3 + d] = ghi[box_off[L - 1] + e, d]
            b0 = bounds[bnd_off[L - 1] + e]
            b1 = bounds[bnd_off[L - 1] + e + 1]
            if L == 1:
                topo[node, 0] = cursor
                topo[node, 1] = b1 - b0
                topo[node, 2] = LEAF_FLAG
                for q in range(b0, b1):
                    entry_out[cursor] = ids[perm[q]]
                    cursor += 1
            else:
                topo[node, 0] = node_off[L - 1] + b0
                topo[node, 1] = b1 - b0
                topo[node, 2] = 0
    return levels - 1


@njit(cache=True, nogil=True)
def build_object_rtrees(tris, surf, n_surf, m):
    """The surface tree and the per-surface triangle trees of one object.

    Parameters
    ----------
    tris : (F, 3, 3) float64, face order, object frame
    surf : (F,) int64 compact surface id 0 .. n_surf-1 of each face (every id used)
    n_surf : int64
    m : int64 node capacity >= 2

    Returns
    -------
    topo (N, 3) int32, box (N, 6) float64, surf_order (S,) int32, surf_root (S,) int32,
    tri_order (F,) int32, meta (RT_META_WIDTH,) int64 (see the module docstring).
    """
    F = tris.shape[0]
    tlo = np.empty((F, 3))
    thi = np.empty((F, 3))
    for i in range(F):
        for d in range(3):
            tlo[i, d] = min(tris[i, 0, d], min(tris[i, 1, d], tris[i, 2, d]))
            thi[i, d] = max(tris[i, 0, d], max(tris[i, 1, d], tris[i, 2, d]))
    # faces of each surface, in face order (counting sort)
    cnt = np.zeros(n_surf + 1, np.int64)
    for i in range(F):
        cnt[surf[i] + 1] += 1
    for s in range(n_surf):
        cnt[s + 1] += cnt[s]
    faces_of = np.empty(F, np.int64)
    fill = cnt[:n_surf].copy()
    for i in range(F):
        s = surf[i]
        faces_of[fill[s]] = i
        fill[s] += 1
    slo = np.empty((n_surf, 3))
    shi = np.empty((n_surf, 3))
    _group_boxes(tlo, thi, faces_of, cnt, n_surf, slo, shi)
    n_surface_nodes, _lv = tree_nodes(n_surf, m)
    total = n_surface_nodes
    for s in range(n_surf):
        nodes_s, _lv2 = tree_nodes(cnt[s + 1] - cnt[s], m)
        total += nodes_s
    topo = np.empty((total, 3), np.int32)
    box = np.empty((total, 6))
    surf_ids = np.arange(n_surf)
    surf_order = np.empty(n_surf, np.int64)
    # int64 variables, not literals: build_str_tree keeps one signature
    node = np.int64(0)
    tri_cursor = np.int64(0)
    depth_s = build_str_tree(slo, shi, surf_ids, m, topo, box, node, surf_order, tri_cursor)
    surf_root = np.empty(n_surf, np.int32)
    tri_order = np.empty(F, np.int64)
    node = np.int64(n_surface_nodes)
    depth_t = 0
    for q in range(n_surf):
        s = surf_order[q]
        members = faces_of[cnt[s] : cnt[s + 1]]
        k = members.shape[0]
        mlo = np.empty((k, 3))
        mhi = np.empty((k, 3))
        for r in range(k):
            for d in range(3):
                mlo[r, d] = tlo[members[r], d]
                mhi[r, d] = thi[members[r], d]
        surf_root[q] = node
        dt = build_str_tree(mlo, mhi, members, m, topo, box, node, tri_order, tri_cursor)
        depth_t = max(depth_t, dt)
        nodes_s, _lv3 = tree_nodes(k, m)
        node += nodes_s
        tri_cursor += k
    meta = np.zeros(RT_META_WIDTH, np.int64)
    meta[RT_NODES] = total
    meta[RT_SURFACE_NODES] = n_surface_nodes
    meta[RT_DEPTH_S] = depth_s
    meta[RT_DEPTH_T] = depth_t
    meta[RT_CAPACITY] = m
    meta[RT_FACES] = F
    meta[RT_SURFACES] = n_surf
    return topo, box, surf_order.astype(np.int32), surf_root, tri_order.astype(np.int32), meta
