"""Top-down construction of binary bounding-volume hierarchies over triangles.

Input: the triangles (F, 3, 3) in face order. Output: flat arrays
(see ``collisionkit.bvh.BVHArrays``): a permutation of the faces (leaf order),
topology rows (first, count, flags) and one volume row per node.

The split axis frame is the world frame for AABB trees and the node's own
principal frame for OBB trees (Gottschalk's OBB-tree, seed 001 "Konstruktion
eines OBB-Baums": split orthogonal to an axis of the box). Split rules:

* ``sah``: binned surface-area heuristic over SAH_BINS bins on each of the
  three axes; cost = area(left) * n_left + area(right) * n_right, areas of the
  children's boxes in the split frame. NOTE: measured up to 13x better than
  median splits on meshes mixing large and small triangles.
* ``median``: object median on the axis of largest centroid spread.
* ``mean``: the mean of the centroids on that axis (Gottschalk's rule).
* ``balanced``: seed 002's penalty |n_l - n_r| + lambda n_c (kernels/build/split_balanced.py).
* ``longest``, ``minsum``, ``minmax``, ``splatter``: seed 001's k-DOP-tree
  rules (kernels/build/split.py), cut at the centroid mean.

Volumes other than AABB/OBB (spheres, k-DOPs) take the AABB build's topology (split
in the world frame) and are fitted per node afterwards (``fit_tree_other``, through
kernels/volumes/dispatch.fit_other).

Every rule falls back to an index median when a split would leave one side
empty (all centroids equal), so depth stays logarithmic on degenerate input.
"""

from __future__ import annotations

import numpy as np

from ...constants import (
    BV_AABB,
    BV_OBB,
    BV_WIDTH,
    LEAF_FLAG,
    SAH_BINS,
    SPLIT_BALANCED,
    SPLIT_LONGEST,
    SPLIT_MEAN,
    SPLIT_SAH,
    SPLIT_SPLATTER,
)
from ..core.jit import njit, njit_internal
from ..core.linalg import box_half_area, symmetric_eigen3
from ..volumes.dispatch import bv_width, fit_other
from .split import EMPTY_BOX, grow_box, split_axis_value
from .split_balanced import split_balanced

#: Floats per node row (constants.BV_WIDTH) of the two kinds build_binary_tree fits
BOX_WIDTH = BV_WIDTH[BV_AABB]
OBB_WIDTH = BV_WIDTH[BV_OBB]

@njit_internal(nogil=True)
def triangle_area(tris, i):
    """Area of triangle i of ``tris`` (F, 3, 3): half the length of (v1 - v0) x (v2 - v0)."""
    ux = tris[i, 1, 0] - tris[i, 0, 0]
    uy = tris[i, 1, 1] - tris[i, 0, 1]
    uz = tris[i, 1, 2] - tris[i, 0, 2]
    vx = tris[i, 2, 0] - tris[i, 0, 0]
    vy = tris[i, 2, 1] - tris[i, 0, 1]
    vz = tris[i, 2, 2] - tris[i, 0, 2]
    cx = uy * vz - uz * vy
    cy = uz * vx - ux * vz
    cz = ux * vy - uy * vx
    return 0.5 * np.sqrt(cx * cx + cy * cy + cz * cz)


@njit_internal(nogil=True)
def _fit_obb(tris, idx, s, e, area, out, axes, work):
    """OBB of triangles idx[s:e] (``work``: 45 floats of scratch): axes from the area-weighted covariance of the
    triangles (Gottschalk 1996), extents from all their vertices.

    Writes centre(3), axes as rows(9), half extents(3) into ``out`` and the
    axes into ``axes``. Zero total area (only degenerate triangles) falls back
    to the covariance of the vertices.
    """
    total = 0.0
    m = work[0:3]
    m[:] = 0.0
    for k in range(s, e):
        i = idx[k]
        a = area[i]
        total += a
        for d in range(3):
            m[d] += a * (tris[i, 0, d] + tris[i, 1, d] + tris[i, 2, d]) / 3.0
    C = work[3:12].reshape((3, 3))
    C[:, :] = 0.0
    if total > 0.0:
        for d in range(3):
            m[d] /= total
        for k in range(s, e):
            i = idx[k]
            w = area[i] / 12.0
            if w == 0.0:
                continue
            for p in range(3):
                cp = tris[i, 0, p] + tris[i, 1, p] + tris[i, 2, p]
                for q in range(p, 3):
                    cq = tris[i, 0, q] + tris[i, 1, q] + tris[i, 2, q]
                    acc = cp * cq  # = 9 * centroid_p * centroid_q
                    for v in range(3):
                        acc += tris[i, v, p] * tris[i, v, q]
                    C[p, q] += w * acc
        for p in range(3):
            for q in range(p, 3):
                C[p, q] = C[p, q] / total - m[p] * m[q]
                C[q, p] = C[p, q]
    else:
        n = 3 * (e - s)
        for k in range(s, e):
            i = idx[k]
            for v in range(3):
                for d in range(3):
                    m[d] += tris[i, v, d]
        for d in range(3):
            m[d] /= n
        for k in range(s, e):
            i = idx[k]
            for v in range(3):
                for p in range(3):
                    for q in range(p, 3):
                        C[p, q] += (tris[i, v, p] - m[p]) * (tris[i, v, q] - m[q])
        for p in range(3):
            for q in range(p, 3):
                C[p, q] /= n
                C[q, p] = C[p, q]
    symmetric_eigen3(C, axes, work[18:45])
    lo = work[12:15]
    hi = work[15:18]
    lo[:] = np.inf
    hi[:] = -np.inf
    for k in range(s, e):
        i = idx[k]
        for v in range(3):
            for r in range(3):
                x = axes[r, 0] * tris[i, v, 0] + axes[r, 1] * tris[i, v, 1] + axes[r, 2] * tris[i, v, 2]
                lo[r] = min(lo[r], x)
                hi[r] = max(hi[r], x)
    for d in range(3):
        c = 0.0
        for r in range(3):
            c += axes[r, d] * 0.5 * (lo[r] + hi[r])
        out[d] = c
    for r in range(3):
        for d in range(3):
            out[3 + 3 * r + d] = axes[r, d]
    for r in range(3):
        # NOTE: a few units of roundoff more, so the box still holds every
        # vertex after the centre is rebuilt from the axes in float64.
        out[12 + r] = 0.5 * (hi[r] - lo[r]) + 4.0 * 2.0**-53 * (abs(lo[r]) + abs(hi[r]))


@njit_internal(nogil=True)
def _frame_bounds(tris, idx, s, e, axes, flo, fhi, key):
    """Per-triangle bounds and centroid coordinates in the split frame ``axes``."""
    for k in range(s, e):
        i = idx[k]
        for r in range(3):
            lo = np.inf
            hi = -np.inf
            c = 0.0
            for v in range(3):
                x = axes[r, 0] * tris[i, v, 0] + axes[r, 1] * tris[i, v, 1] + axes[r, 2] * tris[i, v, 2]
                lo = min(lo, x)
                hi = max(hi, x)
                c += x
            flo[k, r] = lo
            fhi[k, r] = hi
            key[k, r] = c / 3.0


@njit_internal(nogil=True)
def _partition(idx, key, flo, fhi, s, e, axis, value):
    """Stable-enough in-place partition of idx[s:e] by key[:, axis] < value.

    ``key``, ``flo`` and ``fhi`` rows travel with ``idx`` rows (so AABB trees never
    recompute them). Returns the first index of the right side.
    """
    i = s
    j = e - 1
    while i <= j:
        if key[i, axis] < value:
            i += 1
        else:
            t = idx[i]
            idx[i] = idx[j]
            idx[j] = t
            for r in range(3):
                kt = key[i, r]
                key[i, r] = key[j, r]
                key[j, r] = kt
                kt = flo[i, r]
                flo[i, r] = flo[j, r]
                flo[j, r] = kt
                kt = fhi[i, r]
                fhi[i, r] = fhi[j, r]
                fhi[j, r] = kt
            j -= 1
    return i


@njit(cache=True, nogil=True)
def _choose_split(idx, key, flo, fhi, s, e, rule, have_c, cnt, blo, bhi, nz, right_area, right_cnt, acc, cmin, cmax):
    """Partition idx[s:e] (with key rows) and return the split position.

    ``rule``: ``None`` for SAH (the default; numba then compiles no other rule, issue 32)
    or a ``SPLIT_*`` code. ``have_c`` 1: cmin/cmax already hold the centroid bounds of the
    segment (the AABB node fit computes them in its pass), 0: computed here.
    """
    n = e - s
    if have_c == 0:
        # PERF: one pass over the rows (row-major: three column passes read every line three times)
        box = EMPTY_BOX
        for k in range(s, e):
            box = grow_box(box, key, key, k)
        for d in range(3):
            cmin[d] = box[d]
            cmax[d] = box[3 + d]
    spread_axis = np.int64(-1)  # not a literal: one signature for _partition
    best_spread = 0.0
    for r in range(3):
        if cmax[r] - cmin[r] > best_spread:
            best_spread = cmax[r] - cmin[r]
            spread_axis = r
    if spread_axis < 0:
        return s + n // 2  # all centroids coincide: any halving is as good
    if rule is not None:
        if rule != SPLIT_SAH:
            return _rule_split(idx, key, flo, fhi, s, e, rule, spread_axis, cmin, cmax)
    # SAH
    # PERF: one pass bins the rows on all three axes (cnt/blo/bhi: one plane per axis);
    # the bins, and so the costs and the split, are those of one pass per axis.
    scale0 = SAH_BINS / (cmax[0] - cmin[0]) if cmax[0] - cmin[0] > 0.0 else 0.0
    scale1 = SAH_BINS / (cmax[1] - cmin[1]) if cmax[1] - cmin[1] > 0.0 else 0.0
    scale2 = SAH_BINS / (cmax[2] - cmin[2]) if cmax[2] - cmin[2] > 0.0 else 0.0
    c0 = cmin[0]
    c1 = cmin[1]
    c2 = cmin[2]
    # the bins are empty here (cnt 0, blo inf, bhi -inf): the sweeps empty the bins they used
    # PERF: unrolled per axis; a loop over the three axes made the AABB build 4-6% slower
    for k in range(s, e):
        l0 = flo[k, 0]
        l1 = flo[k, 1]
        l2 = flo[k, 2]
        h0 = fhi[k, 0]
        h1 = fhi[k, 1]
        h2 = fhi[k, 2]
        if scale0 > 0.0:
            b = int((key[k, 0] - c0) * scale0)
            if b >= SAH_BINS:
                b = SAH_BINS - 1
            cnt[0, b] += 1
            blo[0, b, 0] = min(blo[0, b, 0], l0)
            blo[0, b, 1] = min(blo[0, b, 1], l1)
            blo[0, b, 2] = min(blo[0, b, 2], l2)
            bhi[0, b, 0] = max(bhi[0, b, 0], h0)
            bhi[0, b, 1] = max(bhi[0, b, 1], h1)
            bhi[0, b, 2] = max(bhi[0, b, 2], h2)
        if scale1 > 0.0:
            b = int((key[k, 1] - c1) * scale1)
            if b >= SAH_BINS:
                b = SAH_BINS - 1
            cnt[1, b] += 1
            blo[1, b, 0] = min(blo[1, b, 0], l0)
            blo[1, b, 1] = min(blo[1, b, 1], l1)
            blo[1, b, 2] = min(blo[1, b, 2], l2)
            bhi[1, b, 0] = max(bhi[1, b, 0], h0)
            bhi[1, b, 1] = max(bhi[1, b, 1], h1)
            bhi[1, b, 2] = max(bhi[1, b, 2], h2)
        if scale2 > 0.0:
            b = int((key[k, 2] - c2) * scale2)
            if b >= SAH_BINS:
                b = SAH_BINS - 1
            cnt[2, b] += 1
            blo[2, b, 0] = min(blo[2, b, 0], l0)
            blo[2, b, 1] = min(blo[2, b, 1], l1)
            blo[2, b, 2] = min(blo[2, b, 2], l2)
            bhi[2, b, 0] = max(bhi[2, b, 0], h0)
            bhi[2, b, 1] = max(bhi[2, b, 1], h1)
            bhi[2, b, 2] = max(bhi[2, b, 2], h2)
    best_cost = np.inf
    best_axis = np.int64(-1)  # not a literal: one signature for _partition
    best_bin = np.int64(-1)
    for r in range(3):
        extent = cmax[r] - cmin[r]
        if extent <= 0.0:
            continue
        # PERF: the sweeps visit only the non-empty bins (nz[:m], ascending); small nodes
        # (most of them) fill a few of the SAH_BINS. Every cut between two consecutive
        # non-empty bins has the same sides, so the same cost: the first, bin nz[j - 1] + 1,
        # is the one a sweep over every bin keeps (strict <), and the bins' boxes are the
        # same mins and maxes. The tree is that of the full sweep, bit for bit.
        m = 0
        for b in range(SAH_BINS):
            if cnt[r, b] > 0:
                nz[m] = b
                m += 1
        # sweep from the right: area and count of bins nz[j:] (the right side of cut j)
        # acc[0:3] / acc[3:6]: running lo / hi of the bins swept so far
        acc[0:3] = np.inf
        acc[3:6] = -np.inf
        c = 0
        for j in range(m - 1, 0, -1):
            b = nz[j]
            c += cnt[r, b]
            for d in range(3):
                acc[d] = min(acc[d], blo[r, b, d])
                acc[3 + d] = max(acc[3 + d], bhi[r, b, d])
            right_cnt[j] = c
            right_area[j] = box_half_area(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5])
        acc[0:3] = np.inf
        acc[3:6] = -np.inf
        c = 0
        for j in range(1, m):
            b = nz[j - 1]
            c += cnt[r, b]
            for d in range(3):
                acc[d] = min(acc[d], blo[r, b, d])
                acc[3 + d] = max(acc[3 + d], bhi[r, b, d])
            cost = box_half_area(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5]) * c + right_area[j] * right_cnt[j]
            if cost < best_cost:
                best_cost = cost
                best_axis = r
                best_bin = b + 1
        for j in range(m):  # empty the used bins for the next node
            b = nz[j]
            cnt[r, b] = 0
            for d in range(3):
                blo[r, b, d] = np.inf
                bhi[r, b, d] = -np.inf
    if best_axis >= 0:
        # The bin boundary as a coordinate: int((key - cmin) * scale) < best_bin
        # iff key < cmin + best_bin / scale, up to rounding at the boundary,
        # which may move an element across; should a side end up empty, the
        # segment is halved instead (any split keeps the tree valid).
        r = best_axis
        value = cmin[r] + best_bin * (cmax[r] - cmin[r]) / SAH_BINS
        mid = _partition(idx, key, flo, fhi, s, e, r, value)
        if s < mid < e:
            return mid
    return s + n // 2


@njit_internal(nogil=True)
def _rule_split(idx, key, flo, fhi, s, e, rule, spread_axis, cmin, cmax):
    """``_choose_split`` for the rules other than SAH (a SAH build compiles none of this):
    seed 001's k-DOP rules, the mean and the median, on the axis of largest spread."""
    n = e - s
    if SPLIT_LONGEST <= rule <= SPLIT_SPLATTER:
        # seed 001's k-DOP-tree rules (kernels/build/split.py); median if no cut separates
        axis, value = split_axis_value(key, flo, fhi, s, e, rule, cmin, cmax)
        if axis >= 0:
            mid = _partition(idx, key, flo, fhi, s, e, axis, value)
            if s < mid < e:
                return mid
        rule = SPLIT_MEAN  # then the median below, on the axis of largest spread
    if rule == SPLIT_MEAN:
        mean = 0.0
        for k in range(s, e):
            mean += key[k, spread_axis]
        mean /= n
        mid = _partition(idx, key, flo, fhi, s, e, spread_axis, mean)
        if s < mid < e:
            return mid
    # SPLIT_MEDIAN (and the mean rule's fallback): sort the segment on the axis.
    order = np.argsort(key[s:e, spread_axis])
    seg = idx[s:e].copy()
    kseg = key[s:e].copy()
    lseg = flo[s:e].copy()
    hseg = fhi[s:e].copy()
    for k in range(n):
        o = order[k]
        idx[s + k] = seg[o]
        for d in range(3):
            key[s + k, d] = kseg[o, d]
            flo[s + k, d] = lseg[o, d]
            fhi[s + k, d] = hseg[o, d]
    return s + n // 2


@njit_internal(nogil=True)
def fit_node(bv_kind, fit, tris, idx, s, e, area, out, axes, work, pts, lo, hi, verts):
    """Fit one node of any volume kind over triangles idx[s:e] into the row ``out``
    (bottom-up and incremental builds, refits). Scratch as in build_binary_tree."""
    if bv_kind == BV_OBB:
        _fit_obb(tris, idx, s, e, area, out, axes, work)
    elif bv_kind == BV_AABB:
        for c in range(3):
            a = np.inf
            b = -np.inf
            for k in range(s, e):
                i = idx[k]
                for v in range(3):
                    a = min(a, tris[i, v, c])
                    b = max(b, tris[i, v, c])
            out[c] = 0.5 * (a + b)
            out[3 + c] = 0.5 * (b - a)
    else:
        fit_other(bv_kind, fit, tris, idx, s, e, out, pts, lo, hi, verts)


# LENGTH (~120 lines): the explicit-stack top-down build; split choice and volume fit are
# calls (_choose_split, _fit_obb), the loop keeps the node layout arrays it fills.
@njit(cache=True, nogil=True)
def build_binary_tree(tris, obb, split_rule, leaf_size):
    """Build a binary AABB or OBB tree over ``tris`` (F, 3, 3), F >= 1.

    ``obb``: ``None`` (an AABB tree) or ``True`` (an OBB tree). ``split_rule``: ``None``
    for SAH (the default) or a ``SPLIT_*`` code (int64), seed 002's balanced split
    included. Options by type, not by value, so numba prunes what a call does not use
    (issue 32): the AABB/SAH build of a first query compiles no OBB fit (eigenvectors,
    ~1.5 CPU s), no other split rule (~1.5 CPU s: the median's sort, seed 001's rules)
    and no balanced split (~1.9 CPU s); another combination compiles this kernel once
    more.

    Other kinds (spheres, k-DOPs) are fitted afterwards over the AABB tree's topology
    (``fit_tree_other``): their split is the AABB one (world-frame centroids), and
    keeping their fits out of this kernel keeps them out of its compile (issue 32:
    the first AABB/OBB query compiled every kind's fit, ~4 CPU s).

    Returns
    -------
    order : (F,) int32, leaf order -> face index
    topo : (n, 3) int32, rows (first, count, flags): inner nodes point at their
        first child (children are consecutive), leaves at their first triangle
        in leaf order
    bv : (n, width) float64 node volumes (AABB: centre, half extents;
        OBB: centre, axes as rows, half extents)
    depth : int, the largest node depth (root = 0)
    """
    F = tris.shape[0]
    # NOTE: np.empty and loops, not np.arange / np.eye: each numpy constructor is one more
    # compile in a first query's build (~0.2 CPU s each, issue 32)
    idx = np.empty(F, np.int32)
    max_nodes = 2 * F - 1
    width = BOX_WIDTH
    if obb is not None:
        width = OBB_WIDTH
    topo = np.empty((max_nodes, 3), np.int32)
    bv = np.empty((max_nodes, width))
    area = np.empty(F)
    flo = np.empty((F, 3))
    fhi = np.empty((F, 3))
    key = np.empty((F, 3))
    # Triangle areas weight the OBB covariance; the per-segment rows of
    # flo/fhi/key are (re)filled at each node, in the segment's order.
    for i in range(F):
        idx[i] = i
        for d in range(3):
            a = tris[i, 0, d]
            b = tris[i, 1, d]
            c = tris[i, 2, d]
            flo[i, d] = min(a, min(b, c))
            fhi[i, d] = max(a, max(b, c))
            key[i, d] = (a + b + c) / 3.0
        if obb is not None:  # areas weight only the OBB fit
            area[i] = triangle_area(tris, i)
    axes = np.zeros((3, 3))
    for d in range(3):
        axes[d, d] = 1.0
    # PERF: one workspace for every node (per-node allocations cost a third of the build).
    # SAH bins, one plane per axis: kept empty between nodes (_choose_split empties what it used)
    cnt = np.zeros((3, SAH_BINS), np.int64)
    blo = np.full((3, SAH_BINS, 3), np.inf)
    bhi = np.full((3, SAH_BINS, 3), -np.inf)
    nz = np.empty(SAH_BINS, np.int64)
    right_area = np.empty(SAH_BINS)
    right_cnt = np.empty(SAH_BINS, np.int64)
    acc = np.empty(6)
    cmin = np.empty(3)
    cmax = np.empty(3)
    obb_work = np.empty(45)
    st_node = np.empty(max_nodes, np.int64)
    st_s = np.empty(max_nodes, np.int64)
    st_e = np.empty(max_nodes, np.int64)
    st_d = np.empty(max_nodes, np.int64)
    st_node[0] = 0
    st_s[0] = 0
    st_e[0] = F
    st_d[0] = 0
    top = 1
    n_nodes = 1
    depth = 0
    while top > 0:
        top -= 1
        node = st_node[top]
        s = st_s[top]
        e = st_e[top]
        d = st_d[top]
        if d > depth:
            depth = d
        have_c = np.int64(0)
        if obb is not None:
            _fit_obb(tris, idx, s, e, area, bv[node], axes, obb_work)
        else:
            # flo/fhi rows are in segment order (they travel with idx): sequential reads.
            # PERF: one pass over the rows fits the box and, for an inner node, the
            # centroid bounds the split starts from (have_c).
            box = EMPTY_BOX
            if e - s <= leaf_size:
                for k in range(s, e):
                    box = grow_box(box, flo, fhi, k)
            else:
                cbox = EMPTY_BOX
                for k in range(s, e):
                    box = grow_box(box, flo, fhi, k)
                    cbox = grow_box(cbox, key, key, k)
                for col in range(3):
                    cmin[col] = cbox[col]
                    cmax[col] = cbox[3 + col]
                have_c = np.int64(1)
            for col in range(3):  # NOTE: not d, the node's depth
                bv[node, col] = 0.5 * (box[col] + box[3 + col])
                bv[node, 3 + col] = 0.5 * (box[3 + col] - box[col])
        if e - s <= leaf_size:
            topo[node, 0] = s
            topo[node, 1] = e - s
            topo[node, 2] = LEAF_FLAG
            continue
        if obb is not None:
            # Split in the node's principal frame; key rows follow idx.
            _frame_bounds(tris, idx, s, e, axes, flo, fhi, key)
        if split_rule is None:  # SAH
            mid = _choose_split(idx, key, flo, fhi, s, e, split_rule, have_c, cnt, blo, bhi, nz, right_area, right_cnt, acc, cmin, cmax)
        elif split_rule == SPLIT_BALANCED:  # seed 002 (kernels/build/split_balanced.py)
            mid = split_balanced(tris, idx, key, flo, fhi, s, e, axes)
        else:
            mid = _choose_split(idx, key, flo, fhi, s, e, split_rule, have_c, cnt, blo, bhi, nz, right_area, right_cnt, acc, cmin, cmax)
        left = n_nodes
        n_nodes += 2
        topo[node, 0] = left
        topo[node, 1] = 2
        topo[node, 2] = 0
        st_node[top] = left + 1
        st_s[top] = mid
        st_e[top] = e
        st_d[top] = d + 1
        top += 1
        st_node[top] = left
        st_s[top] = s
        st_e[top] = mid
        st_d[top] = d + 1
        top += 1
    return idx, topo[:n_nodes].copy(), bv[:n_nodes].copy(), depth


@njit(cache=True, nogil=True)
def fit_tree_other(tris, topo, bv_kind, fit):
    """The node volumes of a sphere or k-DOP tree over the topology ``topo`` (n, 3) of a
    top-down AABB build, for its leaf-order triangles ``tris`` (F, 3, 3): every node a
    fresh fit (``fit_other``; ``fit`` spheres: 0 minimal, 1 Ritter) over its leaves'
    triangles, which are contiguous in leaf order. Returns ``bv`` (n, width)."""
    n = topo.shape[0]
    F = tris.shape[0]
    bv = np.empty((n, bv_width(bv_kind)))
    first = np.empty(n, np.int64)
    last = np.empty(n, np.int64)
    idx = np.arange(F).astype(np.int32)
    pts = np.empty((3 * F, 3))
    kd_lo = np.empty(13)
    kd_hi = np.empty(13)
    kd_verts = np.empty((48, 3))
    # children follow their parent in the depth-first layout: bottom-up is n-1 .. 0
    for o in range(n - 1, -1, -1):
        if (topo[o, 2] & LEAF_FLAG) != 0:
            first[o] = topo[o, 0]
            last[o] = topo[o, 0] + topo[o, 1]
        else:
            first[o] = first[topo[o, 0]]
            last[o] = last[topo[o, 0] + topo[o, 1] - 1]
        fit_other(bv_kind, fit, tris, idx, first[o], last[o], bv[o], pts, kd_lo, kd_hi, kd_verts)
    return bv


@njit(cache=True, nogil=True)
def max_abs_coordinate(tris):
    """Largest |coordinate| of an (F, 3, 3) array, without a temporary."""
    m = 0.0
    for i in range(tris.shape[0]):
        for v in range(3):
            for d in range(3):
                m = max(m, abs(tris[i, v, d]))
    return m
