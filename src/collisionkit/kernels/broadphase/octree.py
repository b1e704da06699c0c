"""A loose octree, updated incrementally (Ulrich 2000, "Loose octrees", Game
Programming Gems; seed 001, "Octree").

Level l has cubic cells of width w = 2**-l (no fixed root: any scene size and
position). An object goes to the level whose width is the smallest power of
two above its largest extent, into the cell holding its box centre; its box
then lies inside that cell grown by w/2 on every side (the *loose* cell, twice
the cell's width), so every object sits in exactly one node, and small motion
seldom changes the node: the per-frame update only relinks objects whose
(level, cell) changed.

Nodes are stored as a linear octree (Warren & Salmon 1993): a hash table from
the key (level, ix, iy, iz) to a node holding a linked list of its objects;
parent and child links are not needed, since a query visits, on each occupied
level at or above the object's, the few cells whose loose bounds can meet its
box (2 to 3 per axis). A pair is reported from the object on the finer level
(or, on the same level, from the smaller slot) after the exact box test.

Exactness of the cell ranges: an object of level l has its centre in
[k w, (k+1) w) and half extent <= w/2, so it can only meet a box [lo, hi] if
ceil(lo/w - 1.5) <= k <= floor(hi/w + 0.5). The level rule also makes
w >= 2**-40 * max|coordinate|, so lo/w stays below 2**40 and every rounding
(centre, division, the offset) is below 2**-12 cells; a margin of 1e-3 cells
covers it. Empty nodes stay in the table until it fills; the caller then
rebuilds it from scratch (amortised O(1) per relink).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.jit import njit, njit_internal
from .common import add_pair, boxes_overlap_slots

#: Levels are -exponent of the cell width: float64 exponents lie in [-1074, 1024].
LEVEL_OFFSET = 1100
N_LEVELS = 2 * LEVEL_OFFSET + 1
_MARGIN = 1e-3
_REL = 2.0**-40


@njit_internal(nogil=True)
def _key_of(lo, hi, s):
    size = max(hi[s, 0] - lo[s, 0], max(hi[s, 1] - lo[s, 1], hi[s, 2] - lo[s, 2]))
    mag = 0.0
    for d in range(3):
        mag = max(mag, max(abs(lo[s, d]), abs(hi[s, d])))
    size = max(size, max(mag * _REL, 2.0**-1000))
    e = math.frexp(size)[1]  # size < 2**e
    if e > 1023:
        e = 1023
    w = math.ldexp(1.0, e)
    ix = np.int64(math.floor((0.5 * lo[s, 0] + 0.5 * hi[s, 0]) / w))
    iy = np.int64(math.floor((0.5 * lo[s, 1] + 0.5 * hi[s, 1]) / w))
    iz = np.int64(math.floor((0.5 * lo[s, 2] + 0.5 * hi[s, 2]) / w))
    return np.int64(-e), ix, iy, iz


@njit_internal(nogil=True)
def _hash4(level, x, y, z, mask):
    return ((x * 73856093) ^ (y * 19349663) ^ (z * 83492791) ^ (level * 2654435761)) & mask


@njit_internal(nogil=True)
def _find(node_key, table, level, x, y, z):
    """Node id of (level, x, y, z), or -1."""
    mask = table.shape[0] - 1
    h = _hash4(level, x, y, z, mask)
    while True:
        nd = table[h]
        if nd < 0:
            return np.int64(-1)
        if node_key[nd, 0] == level and node_key[nd, 1] == x and node_key[nd, 2] == y and node_key[nd, 3] == z:
            return nd
        h = (h + 1) & mask


@njit(cache=True, nogil=True)
def octree_update(lo, hi, slots, removed, added, obj_node, obj_next, obj_prev,
                  node_key, node_head, node_count, table, level_count, info):
    """Relink the objects whose node changed; return relinks, or -1 when the node
    table is full (the caller rebuilds with more room and every object added).

    removed : (r,) int64 slots to unlink (before ``added``); added : (a,) int64
    new slots. ``info[0]`` holds the number of nodes in use.
    """
    for i in range(removed.shape[0]):
        _unlink(removed[i], obj_node, obj_next, obj_prev, node_key, node_head, node_count, level_count)
    for i in range(added.shape[0]):
        obj_node[added[i]] = -1
    mask = table.shape[0] - 1
    ncap = node_key.shape[0]
    relinks = np.int64(0)
    for p in range(slots.shape[0]):
        s = slots[p]
        level, x, y, z = _key_of(lo, hi, s)
        nd = obj_node[s]
        if nd >= 0 and node_key[nd, 0] == level and node_key[nd, 1] == x and node_key[nd, 2] == y and node_key[nd, 3] == z:
            continue
        if nd >= 0:
            _unlink(s, obj_node, obj_next, obj_prev, node_key, node_head, node_count, level_count)
        # find or create the node
        h = _hash4(level, x, y, z, mask)
        while True:
            nd = table[h]
            if nd < 0:
                if info[0] >= ncap:
                    return np.int64(-1)
                nd = info[0]
                info[0] += 1
                table[h] = nd
                node_key[nd, 0] = level
                node_key[nd, 1] = x
                node_key[nd, 2] = y
                node_key[nd, 3] = z
                node_head[nd] = -1
                node_count[nd] = 0
                break
            if node_key[nd, 0] == level and node_key[nd, 1] == x and node_key[nd, 2] == y and node_key[nd, 3] == z:
                break
            h = (h + 1) & mask
        head = node_head[nd]
        obj_next[s] = head
        obj_prev[s] = -1
        if head >= 0:
            obj_prev[head] = s
        node_head[nd] = s
        node_count[nd] += 1
        level_count[level + LEVEL_OFFSET] += 1
        obj_node[s] = nd
        relinks += 1
    return relinks


@njit_internal(nogil=True)
def _unlink(s, obj_node, obj_next, obj_prev, node_key, node_head, node_count, level_count):
    nd = obj_node[s]
    if nd < 0:
        return
    nx = obj_next[s]
    pv = obj_prev[s]
    if pv >= 0:
        obj_next[pv] = nx
    else:
        node_head[nd] = nx
    if nx >= 0:
        obj_prev[nx] = pv
    node_count[nd] -= 1
    level_count[node_key[nd, 0] + LEVEL_OFFSET] -= 1
    obj_node[s] = -1


@njit(cache=True, nogil=True)
def octree_pairs(lo, hi, slots, obj_node, obj_next, node_key, node_head, table, level_count, out):
    """Write overlapping slot pairs into ``out`` while room lasts; return
    (pairs found, cells looked up)."""
    levels = np.flatnonzero(level_count > 0) - LEVEL_OFFSET  # ascending: coarse first
    k = np.int64(0)
    lookups = np.int64(0)
    for p in range(slots.shape[0]):
        b = slots[p]
        lb = node_key[obj_node[b], 0]
        for li in range(levels.shape[0]):
            level = levels[li]
            if level > lb:
                break
            w = math.ldexp(1.0, -level)
            x0 = np.int64(math.ceil(lo[b, 0] / w - 1.5 - _MARGIN))
            x1 = np.int64(math.floor(hi[b, 0] / w + 0.5 + _MARGIN))
            y0 = np.int64(math.ceil(lo[b, 1] / w - 1.5 - _MARGIN))
            y1 = np.int64(math.floor(hi[b, 1] / w + 0.5 + _MARGIN))
            z0 = np.int64(math.ceil(lo[b, 2] / w - 1.5 - _MARGIN))
            z1 = np.int64(math.floor(hi[b, 2] / w + 0.5 + _MARGIN))
            same = level == lb
            for x in range(x0, x1 + 1):
                for y in range(y0, y1 + 1):
                    for z in range(z0, z1 + 1):
                        lookups += 1
                        nd = _find(node_key, table, level, x, y, z)
                        if nd < 0:
                            continue
                        a = node_head[nd]
                        while a >= 0:
                            if (not same or a < b) and boxes_overlap_slots(lo, hi, a, b):
                                k = add_pair(out, k, a, b)
                            a = obj_next[a]
    return k, lookups
