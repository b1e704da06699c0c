"""Uniform grid and spatial hashing of cell indices (seed 001, "Raumunterteilung":
uniform grid, spatial hashing; Teschner et al. 2003, "Optimized spatial hashing
for collision detection of deformable objects").

Both rebuild from scratch each frame (counting sort of (cell, object) entries:
O(n + entries + cells)), so they carry no state between frames and are not
hurt by large motion.

* ``grid``: a dense grid over the live boxes' bounds, at most ``max_cells``
  cells (the cell grows when the bounds would need more); cell coordinates
  are clamped into the grid, which keeps them monotone in the coordinate.
* ``hash``: unbounded integer cell coordinates ``floor(x / cell)``, hashed
  into a table of at least twice as many buckets as entries; different cells
  may share a bucket, and entries remember their cell.

Exactness: cell coordinates are monotone functions of the coordinate, so two
overlapping boxes have overlapping cell ranges and share the cell
(max of their first cells) per axis, the *reference cell*; a pair is reported
only from its reference cell, after the exact closed box test, so each
overlapping pair comes out exactly once and nothing else does. Objects that
would cover more than ``max_per_object`` cells are kept out of the grid and
tested against every live object (the "oversize" list), so one huge object
cannot flood the grid.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.jit import njit, njit_internal
from .common import add_pair, boxes_overlap_slots

#: Cell coordinates are clamped to +-2**50 so that they, their products in the
#: hash and their counts stay inside int64 (clamping is monotone: still exact).
_CLAMP = float(2**50)


@njit(cache=True, nogil=True)
def _cell(x, origin, inv_cell):
    v = np.floor((x - origin) * inv_cell)
    if v > _CLAMP:
        v = _CLAMP
    elif v < -_CLAMP:
        v = -_CLAMP
    elif v != v:
        # 0 * inf (a cell below 1/DBL_MAX, x at the origin): the cell between the
        # clamped negative and positive ones keeps the map monotone.
        v = 0.0
    return np.int64(v)


@njit_internal(nogil=True)
def _cover(r0, r1, p, limit):
    """Cells of row p's range [r0, r1] (3 axes), saturated at ``limit + 1``.

    NOTE: the plain product of three widths of up to 2**51 cells overflows
    int64 and could wrap to a small count (a huge object then looped over
    ~1e20 cells instead of going to the oversize list); each factor is checked
    against the limit before multiplying, so the count never overflows.
    """
    cov = np.int64(1)
    for d in range(3):
        w = r1[p, d] - r0[p, d] + 1
        if w > limit or cov > limit // w:
            return limit + 1
        cov *= w
    return cov


@njit_internal(nogil=True)
def _oversize_pairs(lo, hi, slots, big, out, k):
    """Pairs with at least one oversize object (each once); returns the new count."""
    n = slots.shape[0]
    for p in range(n):
        b = slots[p]
        if not big[b]:
            continue
        for q in range(n):
            a = slots[q]
            if a == b or (big[a] and a < b):
                continue
            if boxes_overlap_slots(lo, hi, a, b):
                k = add_pair(out, k, a, b)
    return k


@njit(cache=True, nogil=True)
def grid_pairs(lo, hi, slots, cell, max_cells, max_per_object, big, out):
    """Overlapping slot pairs by a dense uniform grid.

    cell : requested cell width (> 0); grown when the bounds need more than
        ``max_cells`` cells
    big : (cap,) bool scratch, set for the oversize objects of this frame
    Returns (pairs found, cell width used, entries).
    """
    n = slots.shape[0]
    if n < 2:
        return 0, cell, 0
    olo = np.full(3, np.inf)
    ohi = np.full(3, -np.inf)
    for p in range(n):
        s = slots[p]
        for d in range(3):
            olo[d] = min(olo[d], lo[s, d])
            ohi[d] = max(ohi[d], hi[s, d])
    dims = np.ones(3, np.int64)
    # Grow the cell until the grid fits; an infinite cell (bounds beyond float64
    # range, or a cell so small that the count overflows to inf and then NaN)
    # is one cell holding everything, so the loop always ends.
    while True:
        total = 1.0
        for d in range(3):
            total *= np.floor((ohi[d] - olo[d]) / cell) + 1.0
        if total <= max_cells or cell == np.inf:
            break
        grow = (total / max_cells) ** (1.0 / 3.0)
        cell *= grow if grow > 1.25 else 1.25  # NaN total: grow is NaN, cell becomes NaN
        if not cell < np.inf:
            cell = np.inf
    inv = 1.0 / cell
    for d in range(3):
        span = (ohi[d] - olo[d]) * inv
        dims[d] = np.int64(math.floor(span)) + 1 if span < max_cells else 1
    ny = dims[1]
    nz = dims[2]
    ncells = dims[0] * ny * nz
    r0 = np.empty((n, 3), np.int64)
    r1 = np.empty((n, 3), np.int64)
    counts = np.zeros(ncells + 1, np.int64)
    entries = np.int64(0)
    for p in range(n):
        s = slots[p]
        for d in range(3):
            r0[p, d] = min(max(_cell(lo[s, d], olo[d], inv), 0), dims[d] - 1)
            r1[p, d] = min(max(_cell(hi[s, d], olo[d], inv), 0), dims[d] - 1)
        cov = _cover(r0, r1, p, max_per_object)
        big[s] = cov > max_per_object
        if big[s]:
            continue
        for x in range(r0[p, 0], r1[p, 0] + 1):
            for y in range(r0[p, 1], r1[p, 1] + 1):
                for z in range(r0[p, 2], r1[p, 2] + 1):
                    counts[(x * ny + y) * nz + z + 1] += 1
        entries += cov
    for c in range(ncells):
        counts[c + 1] += counts[c]
    fill = counts[:ncells].copy()
    # PERF: each entry carries its object's box and first cell, so the pair loop
    # below reads memory in cell order instead of gathering by slot (at 100k
    # objects the gathers missed the cache on almost every pair).
    ent = np.empty(entries, np.int64)  # slot
    rec = np.empty((entries, 9))  # lo xyz, hi xyz, first cell xyz (exact in float64: |cell| <= 2**50)
    for p in range(n):
        s = slots[p]
        if big[s]:
            continue
        for x in range(r0[p, 0], r1[p, 0] + 1):
            for y in range(r0[p, 1], r1[p, 1] + 1):
                for z in range(r0[p, 2], r1[p, 2] + 1):
                    c = (x * ny + y) * nz + z
                    i = fill[c]
                    ent[i] = s
                    for d in range(3):
                        rec[i, d] = lo[s, d]
                        rec[i, 3 + d] = hi[s, d]
                        rec[i, 6 + d] = r0[p, d]
                    fill[c] += 1
    k = np.int64(0)
    for c in range(ncells):
        s0 = counts[c]
        s1 = counts[c + 1]
        if s1 - s0 < 2:
            continue
        cx = float(c // (ny * nz))
        cy = float((c // nz) % ny)
        cz = float(c % nz)
        for i in range(s0, s1):
            for j in range(i + 1, s1):
                # report from the reference cell only (each pair once)
                if max(rec[i, 6], rec[j, 6]) != cx or max(rec[i, 7], rec[j, 7]) != cy or max(rec[i, 8], rec[j, 8]) != cz:
                    continue
                if (
                    rec[i, 0] <= rec[j, 3] and rec[j, 0] <= rec[i, 3]
                    and rec[i, 1] <= rec[j, 4] and rec[j, 1] <= rec[i, 4]
                    and rec[i, 2] <= rec[j, 5] and rec[j, 2] <= rec[i, 5]
                ):
                    k = add_pair(out, k, ent[i], ent[j])
    k = _oversize_pairs(lo, hi, slots, big, out, k)
    return k, cell, entries


@njit_internal(nogil=True)
def _hash3(x, y, z, mask):
    # Teschner et al. 2003's primes; int64 products wrap, which is fine for a hash.
    return ((x * 73856093) ^ (y * 19349663) ^ (z * 83492791)) & mask


@njit(cache=True, nogil=True)
def hash_pairs(lo, hi, slots, cell, max_per_object, big, out):
    """Overlapping slot pairs by spatial hashing of integer cell coordinates.

    Returns (pairs found, buckets, entries).
    """
    n = slots.shape[0]
    if n < 2:
        return 0, 0, 0
    inv = 1.0 / cell
    r0 = np.empty((n, 3), np.int64)
    r1 = np.empty((n, 3), np.int64)
    entries = np.int64(0)
    for p in range(n):
        s = slots[p]
        for d in range(3):
            r0[p, d] = _cell(lo[s, d], 0.0, inv)
            r1[p, d] = _cell(hi[s, d], 0.0, inv)
        cov = _cover(r0, r1, p, max_per_object)
        big[s] = cov > max_per_object
        if not big[s]:
            entries += cov
    nb = np.int64(16)
    while nb < 2 * entries:
        nb *= 2
    mask = nb - 1
    counts = np.zeros(nb + 1, np.int64)
    for p in range(n):
        if big[slots[p]]:
            continue
        for x in range(r0[p, 0], r1[p, 0] + 1):
            for y in range(r0[p, 1], r1[p, 1] + 1):
                for z in range(r0[p, 2], r1[p, 2] + 1):
                    counts[_hash3(x, y, z, mask) + 1] += 1
    for c in range(nb):
        counts[c + 1] += counts[c]
    fill = counts[:nb].copy()
    ent = np.empty(entries, np.int64)
    ecell = np.empty((entries, 3), np.int64)
    for p in range(n):
        if big[slots[p]]:
            continue
        for x in range(r0[p, 0], r1[p, 0] + 1):
            for y in range(r0[p, 1], r1[p, 1] + 1):
                for z in range(r0[p, 2], r1[p, 2] + 1):
                    h = _hash3(x, y, z, mask)
                    i = fill[h]
                    ent[i] = p
                    ecell[i, 0] = x
                    ecell[i, 1] = y
                    ecell[i, 2] = z
                    fill[h] += 1
    k = np.int64(0)
    for c in range(nb):
        s0 = counts[c]
        s1 = counts[c + 1]
        if s1 - s0 < 2:
            continue
        for i in range(s0, s1):
            p = ent[i]
            a = slots[p]
            cx = ecell[i, 0]
            cy = ecell[i, 1]
            cz = ecell[i, 2]
            for j in range(i + 1, s1):
                if ecell[j, 0] != cx or ecell[j, 1] != cy or ecell[j, 2] != cz:
                    continue  # another cell hashed into this bucket
                q = ent[j]
                if max(r0[p, 0], r0[q, 0]) != cx or max(r0[p, 1], r0[q, 1]) != cy or max(r0[p, 2], r0[q, 2]) != cz:
                    continue
                b = slots[q]
                if boxes_overlap_slots(lo, hi, a, b):
                    k = add_pair(out, k, a, b)
    k = _oversize_pairs(lo, hi, slots, big, out, k)
    return k, nb, entries
