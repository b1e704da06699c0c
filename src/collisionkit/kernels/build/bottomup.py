"""Bottom-up and incremental construction of binary BVHs (seed 001, "Konstruktion von
BV-Hierarchien": Bottom Up, Incremental Tree Insertion).

Both builders first make a binary tree over single triangles from their
axis-aligned boxes, then lay it out like the top-down builder (children
consecutive, each subtree's triangles contiguous in leaf order), collapsing
every subtree of at most ``leaf_size`` triangles into one leaf, and finally
fit every node's volume of the requested kind over its triangles.

* Bottom-up (BUILD_BOTTOMUP): agglomerative clustering, "merge the nearest
  boxes": repeatedly join the pairs of clusters that are each other's nearest
  neighbour, distance = surface area of the box of their union. Exact
  agglomerative clustering is O(n^2) a step; as in PLOC (Meister & Bittner
  2018, "Parallel locally-ordered clustering for bounding volume hierarchy
  construction") clusters are kept in Morton order of their centroids and each
  looks for its nearest neighbour only among the BOTTOMUP_RADIUS clusters on
  either side, which keeps a round linear.
* Incremental (BUILD_INCREMENTAL): start with an empty tree and insert one
  triangle at a time (seed 001): walk from the root towards the leaves, at each
  inner node into the child whose box grows least (Goldsmith & Salmon 1987's
  greedy descent), make the new triangle the sibling of the leaf reached, and
  enlarge the boxes on the way back up. Triangles are inserted in a fixed
  pseudo-random order (insertion in file order builds long chains on scanned
  meshes).
"""

from __future__ import annotations

import numpy as np

from ...constants import BOTTOMUP_RADIUS, BUILD_BOTTOMUP, BV_AABB, BV_OBB, LEAF_FLAG
from ..core.jit import njit, njit_internal
from ..core.linalg import box_half_area
from ..volumes.dispatch import bv_width
from .topdown import fit_node, triangle_area


@njit_internal(nogil=True)
def _spread_bits(v):
    """10-bit integer -> its bits spread to every third position (Morton code)."""
    v = (v | (v << 16)) & 0x030000FF
    v = (v | (v << 8)) & 0x0300F00F
    v = (v | (v << 4)) & 0x030C30C3
    v = (v | (v << 2)) & 0x09249249
    return v


@njit_internal(nogil=True)
def _cluster_ploc(F, lo, hi, left, right, radius):
    """Agglomerative clustering (see the module doc). Nodes 0..F-1 are the
    triangles; merged nodes are appended. Returns the root."""
    # Morton order of the centroids
    cmin = np.full(3, np.inf)
    cmax = np.full(3, -np.inf)
    for i in range(F):
        for d in range(3):
            c = 0.5 * (lo[i, d] + hi[i, d])
            cmin[d] = min(cmin[d], c)
            cmax[d] = max(cmax[d], c)
    code = np.empty(F, np.int64)
    for i in range(F):
        m = np.int64(0)
        for d in range(3):
            ext = cmax[d] - cmin[d]
            q = 0
            if ext > 0.0:
                q = int(1023.0 * (0.5 * (lo[i, d] + hi[i, d]) - cmin[d]) / ext)
            m |= _spread_bits(np.int64(q)) << (2 - d)
        code[i] = m
    clusters = np.argsort(code, kind="mergesort").astype(np.int64)
    n = F
    nxt = F
    nn = np.empty(F, np.int64)
    while n > 1:
        for i in range(n):
            a = clusters[i]
            best = np.inf
            bj = -1
            for j in range(max(0, i - radius), min(n, i + radius + 1)):
                if j == i:
                    continue
                b = clusters[j]
                d = box_half_area(
                    min(lo[a, 0], lo[b, 0]), min(lo[a, 1], lo[b, 1]), min(lo[a, 2], lo[b, 2]),
                    max(hi[a, 0], hi[b, 0]), max(hi[a, 1], hi[b, 1]), max(hi[a, 2], hi[b, 2]),
                )  # fmt: skip
                # ties go to the lower position: a consistent order, so the
                # globally closest pair is always mutual and every round merges
                if d < best:
                    best = d
                    bj = j
            nn[i] = bj
        merged = 0
        w = 0
        for i in range(n):
            j = nn[i]
            if nn[j] == i:
                if i < j:
                    a = clusters[i]
                    b = clusters[j]
                    left[nxt] = a
                    right[nxt] = b
                    for d in range(3):
                        lo[nxt, d] = min(lo[a, d], lo[b, d])
                        hi[nxt, d] = max(hi[a, d], hi[b, d])
                    clusters[w] = nxt
                    nxt += 1
                    w += 1
                    merged += 1
                # i > j: merged into j's new node already
            else:
                clusters[w] = clusters[i]
                w += 1
        if merged == 0:  # cannot happen with the tie rule; never loop forever
            a = clusters[0]
            b = clusters[1]
            left[nxt] = a
            right[nxt] = b
            for d in range(3):
                lo[nxt, d] = min(lo[a, d], lo[b, d])
                hi[nxt, d] = max(hi[a, d], hi[b, d])
            clusters[0] = nxt
            for i in range(1, n - 1):
                clusters[i] = clusters[i + 1]
            nxt += 1
            w = n - 1
        n = w
    return clusters[0]


@njit_internal(nogil=True)
def _insert_incremental(F, lo, hi, left, right, parent):
    """Incremental insertion (see the module doc); returns the root."""
    order = np.arange(F)
    # fixed pseudo-random order (64-bit LCG, Knuth's MMIX constants)
    state = np.uint64(0x9E3779B97F4A7C15)
    for i in range(F - 1, 0, -1):
        state = state * np.uint64(6364136223846793005) + np.uint64(1442695040888963407)
        j = np.int64((state >> np.uint64(33)) % np.uint64(i + 1))
        tmp = order[i]
        order[i] = order[j]
        order[j] = tmp
    root = order[0]
    parent[root] = -1
    nxt = F
    for q in range(1, F):
        leaf = order[q]
        node = root
        while left[node] >= 0:
            a = left[node]
            b = right[node]
            ga = box_half_area(
                min(lo[a, 0], lo[leaf, 0]), min(lo[a, 1], lo[leaf, 1]), min(lo[a, 2], lo[leaf, 2]),
                max(hi[a, 0], hi[leaf, 0]), max(hi[a, 1], hi[leaf, 1]), max(hi[a, 2], hi[leaf, 2]),
            ) - box_half_area(lo[a, 0], lo[a, 1], lo[a, 2], hi[a, 0], hi[a, 1], hi[a, 2])  # fmt: skip
            gb = box_half_area(
                min(lo[b, 0], lo[leaf, 0]), min(lo[b, 1], lo[leaf, 1]), min(lo[b, 2], lo[leaf, 2]),
                max(hi[b, 0], hi[leaf, 0]), max(hi[b, 1], hi[leaf, 1]), max(hi[b, 2], hi[leaf, 2]),
            ) - box_half_area(lo[b, 0], lo[b, 1], lo[b, 2], hi[b, 0], hi[b, 1], hi[b, 2])  # fmt: skip
            node = a if ga <= gb else b
        # node is a leaf: a new inner node takes its place with children (node, leaf)
        p = parent[node]
        inner = nxt
        nxt += 1
        left[inner] = node
        right[inner] = leaf
        parent[inner] = p
        parent[node] = inner
        parent[leaf] = inner
        for d in range(3):
            lo[inner, d] = min(lo[node, d], lo[leaf, d])
            hi[inner, d] = max(hi[node, d], hi[leaf, d])
        if p < 0:
            root = inner
        else:
            if left[p] == node:
                left[p] = inner
            else:
                right[p] = inner
            # enlarge the boxes up to the root
            while p >= 0:
                for d in range(3):
                    lo[p, d] = min(lo[p, d], lo[leaf, d])
                    hi[p, d] = max(hi[p, d], hi[leaf, d])
                p = parent[p]
    return root


# LENGTH (~130 lines): the clustering is a call (_cluster_ploc or _insert_incremental); the
# rest lays the binary tree out in the depth-first order build_binary_tree returns and fits
# its volumes, which needs the node arrays of both steps at once.
@njit(cache=True, nogil=True)
def build_clustered_tree(tris, bv_kind, mode, leaf_size, fit):
    """Bottom-up (mode BUILD_BOTTOMUP) or incremental (BUILD_INCREMENTAL) build over
    ``tris`` (F, 3, 3), F >= 1. Returns what ``bvh_build.build_binary_tree`` does:
    (order, topo, bv, depth)."""
    F = tris.shape[0]
    nb = 2 * F - 1
    lo = np.empty((nb, 3))
    hi = np.empty((nb, 3))
    left = np.full(nb, -1, np.int64)
    right = np.full(nb, -1, np.int64)
    parent = np.full(nb, -1, np.int64)
    for i in range(F):
        for d in range(3):
            lo[i, d] = min(tris[i, 0, d], min(tris[i, 1, d], tris[i, 2, d]))
            hi[i, d] = max(tris[i, 0, d], max(tris[i, 1, d], tris[i, 2, d]))
    if F == 1:
        root = 0
    elif mode == BUILD_BOTTOMUP:
        root = _cluster_ploc(np.int64(F), lo, hi, left, right, np.int64(BOTTOMUP_RADIUS))
    else:
        root = _insert_incremental(np.int64(F), lo, hi, left, right, parent)
    # triangles under each binary node (post-order by an explicit stack)
    count = np.zeros(nb, np.int64)
    stack = np.empty(nb + 1, np.int64)
    done = np.zeros(nb, np.bool_)
    top = 0
    stack[0] = root
    top = 1
    while top > 0:
        x = stack[top - 1]
        if left[x] < 0:
            count[x] = 1
            top -= 1
        elif done[x]:
            count[x] = count[left[x]] + count[right[x]]
            top -= 1
        else:
            done[x] = True
            stack[top] = right[x]
            stack[top + 1] = left[x]
            top += 2
    # layout: children consecutive, triangle ranges contiguous; small subtrees become leaves
    topo = np.empty((nb, 3), np.int32)
    idx = np.empty(F, np.int32)
    q_bin = np.empty(nb, np.int64)
    q_out = np.empty(nb, np.int64)
    q_s = np.empty(nb, np.int64)
    q_d = np.empty(nb, np.int64)
    q_bin[0] = root
    q_out[0] = 0
    q_s[0] = 0
    q_d[0] = 0
    top = 1
    n_out = 1
    depth = 0
    gather = np.empty(nb + 1, np.int64)
    while top > 0:
        top -= 1
        x = q_bin[top]
        o = q_out[top]
        s = q_s[top]
        d = q_d[top]
        depth = max(depth, d)
        if count[x] <= leaf_size or left[x] < 0:
            # gather the subtree's triangles
            w = s
            g = 1
            gather[0] = x
            while g > 0:
                g -= 1
                y = gather[g]
                if left[y] < 0:
                    idx[w] = y
                    w += 1
                else:
                    gather[g] = right[y]
                    gather[g + 1] = left[y]
                    g += 2
            topo[o, 0] = s
            topo[o, 1] = count[x]
            topo[o, 2] = LEAF_FLAG
            continue
        c = n_out
        n_out += 2
        topo[o, 0] = c
        topo[o, 1] = 2
        topo[o, 2] = 0
        q_bin[top] = right[x]
        q_out[top] = c + 1
        q_s[top] = s + count[left[x]]
        q_d[top] = d + 1
        top += 1
        q_bin[top] = left[x]
        q_out[top] = c
        q_s[top] = s
        q_d[top] = d + 1
        top += 1
    # volumes: every node fitted over its own triangles (children before parents not needed)
    width = bv_width(bv_kind)
    bv = np.empty((n_out, width))
    first = np.empty(n_out, np.int64)
    last = np.empty(n_out, np.int64)
    for o in range(n_out - 1, -1, -1):
        if topo[o, 2] & LEAF_FLAG:
            first[o] = topo[o, 0]
            last[o] = topo[o, 0] + topo[o, 1]
        else:
            c = topo[o, 0]
            first[o] = first[c]
            last[o] = last[c + 1]
    area = np.empty(F)
    for i in range(F):
        area[i] = triangle_area(tris, i)
    axes = np.eye(3)
    work = np.empty(45)
    pts = np.empty((3 * F if bv_kind != BV_AABB and bv_kind != BV_OBB else 1, 3))
    kd_lo = np.empty(13)
    kd_hi = np.empty(13)
    verts = np.empty((48, 3))
    for o in range(n_out):
        fit_node(bv_kind, fit, tris, idx, first[o], last[o], area, bv[o], axes, work, pts, kd_lo, kd_hi, verts)
    return idx, topo[:n_out].copy(), bv, depth
