"""Sweep and prune with frame-to-frame coherence (seed 001, "Sweep and Prune";
Baraff 1992, Cohen et al. 1995 I-COLLIDE).

State (owned by the caller, kept across frames): for each axis a list of the
2n interval endpoints, ``val[axis, i]`` (coordinate) and ``eid[axis, i]`` =
``slot * 2 + is_end``, sorted by (coordinate, is_end): at equal coordinates
starts come before ends, so touching intervals overlap (closed boxes).

Per frame (``sap_update``): the coordinates are refreshed in place, endpoints
of removed objects dropped, those of added objects merged in, and the three
lists re-sorted by insertion sort, which costs O(n + swaps): with small motion
few endpoints change places (the seed's coherence argument), with a fresh or
shuffled scene it degrades to O(n^2) swaps, so large batches of added objects
are sorted first and merged.

Pairs (``sap_pairs``): the overlap set is recomputed from the sorted lists by
one sweep with an active list along one axis; the axis is the one whose 1-D
overlap count (sum of the active-list lengths, counted in O(n) per axis) is
smallest, which is exactly the work the sweep will do. The other two axes are
tested on the boxes. NOTE: keeping the pair set incrementally from the swaps
(I-COLLIDE) costs a hash set update per swap and still a full pass to list
the pairs; the sweep is simpler and exact, and we report swaps for the
coherence measure.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit, njit_internal
from .common import add_pair


@njit_internal(nogil=True)
def _after(v1, e1, v2, e2):
    """Whether endpoint (v1, e1) sorts strictly after (v2, e2)."""
    return v1 > v2 or (v1 == v2 and (e1 & 1) > (e2 & 1))


@njit(cache=True, nogil=True)
def sap_update(val, eid, n_ep, removed, added, lo, hi):
    """Bring the three endpoint lists up to date; return (endpoints, swaps).

    val, eid : (3, cap2) float64 / int64 endpoint lists (cap2 >= 2 * live objects)
    n_ep : endpoints currently in the lists
    removed : (cap,) bool, slots whose endpoints must go (processed before ``added``)
    added : (k,) int64 slots whose endpoints are new
    lo, hi : (cap, 3) current boxes per slot
    """
    swaps = np.int64(0)
    k = added.shape[0]
    new_v = np.empty(2 * k)
    new_e = np.empty(2 * k, np.int64)
    tmp_v = np.empty(n_ep + 2 * k if k > 0 else 0)
    tmp_e = np.empty(n_ep + 2 * k if k > 0 else 0, np.int64)
    n_out = n_ep
    for ax in range(3):
        # 1. refresh coordinates, drop removed objects' endpoints
        w = 0
        for i in range(n_ep):
            e = eid[ax, i]
            s = e >> 1
            if removed[s]:
                continue
            eid[ax, w] = e
            val[ax, w] = hi[s, ax] if (e & 1) else lo[s, ax]
            w += 1
        # 2. merge in the added endpoints, sorted among themselves (starts listed
        # first so that the stable sort puts a start before an end at equal values)
        if k > 0:
            for j in range(k):
                s = added[j]
                new_v[j] = lo[s, ax]
                new_e[j] = 2 * s
                new_v[k + j] = hi[s, ax]
                new_e[k + j] = 2 * s + 1
            order = np.argsort(new_v, kind="mergesort")
            i = 0
            j = 0
            t = 0
            while i < w or j < 2 * k:
                if j >= 2 * k or (i < w and not _after(val[ax, i], eid[ax, i], new_v[order[j]], new_e[order[j]])):
                    tmp_v[t] = val[ax, i]
                    tmp_e[t] = eid[ax, i]
                    i += 1
                else:
                    tmp_v[t] = new_v[order[j]]
                    tmp_e[t] = new_e[order[j]]
                    j += 1
                t += 1
            for i in range(t):
                val[ax, i] = tmp_v[i]
                eid[ax, i] = tmp_e[i]
            w = t
        # 3. insertion sort: O(n + swaps) on a nearly sorted list
        for i in range(1, w):
            v = val[ax, i]
            e = eid[ax, i]
            j = i - 1
            while j >= 0 and _after(val[ax, j], eid[ax, j], v, e):
                val[ax, j + 1] = val[ax, j]
                eid[ax, j + 1] = eid[ax, j]
                j -= 1
                swaps += 1
            val[ax, j + 1] = v
            eid[ax, j + 1] = e
        n_out = w
    return n_out, swaps


@njit_internal(nogil=True)
def sap_overlaps_1d(eid, n_ep, ax):
    """Sum of the active-list lengths met by a sweep along ``ax``: the number of
    pairs whose intervals overlap on that axis (the sweep's inner-loop work)."""
    active = np.int64(0)
    count = np.int64(0)
    for i in range(n_ep):
        if eid[ax, i] & 1:
            active -= 1
        else:
            count += active
            active += 1
    return count


@njit(cache=True, nogil=True)
def sap_pairs(eid, n_ep, lo, hi, n_slots, out):
    """Sweep the cheapest axis; write overlapping slot pairs into ``out`` while
    room lasts. Returns (pairs found, axis swept, 1-D overlaps on that axis)."""
    best = 0
    best_count = sap_overlaps_1d(eid, n_ep, np.int64(0))
    for ax in range(1, 3):
        c = sap_overlaps_1d(eid, n_ep, ax)
        if c < best_count:
            best = ax
            best_count = c
    # PERF: the active list keeps the other two axes' intervals in contiguous
    # arrays, so the inner loop streams through memory instead of gathering
    # boxes by slot (2-3x faster at 1,000 objects).
    o1 = (best + 1) % 3
    o2 = (best + 2) % 3
    m = n_ep // 2 + 1
    act = np.empty(m, np.int64)
    a_lo1 = np.empty(m)
    a_hi1 = np.empty(m)
    a_lo2 = np.empty(m)
    a_hi2 = np.empty(m)
    where = np.empty(n_slots, np.int64)
    n_active = 0
    k = np.int64(0)
    for i in range(n_ep):
        e = eid[best, i]
        s = e >> 1
        if e & 1:
            # remove s from the active list (the last entry takes its place)
            p = where[s]
            n_active -= 1
            last = act[n_active]
            act[p] = last
            a_lo1[p] = a_lo1[n_active]
            a_hi1[p] = a_hi1[n_active]
            a_lo2[p] = a_lo2[n_active]
            a_hi2[p] = a_hi2[n_active]
            where[last] = p
        else:
            l1 = lo[s, o1]
            h1 = hi[s, o1]
            l2 = lo[s, o2]
            h2 = hi[s, o2]
            for q in range(n_active):
                if a_lo1[q] <= h1 and l1 <= a_hi1[q] and a_lo2[q] <= h2 and l2 <= a_hi2[q]:
                    k = add_pair(out, k, act[q], s)
            act[n_active] = s
            a_lo1[n_active] = l1
            a_hi1[n_active] = h1
            a_lo2[n_active] = l2
            a_hi2[n_active] = h2
            where[s] = n_active
            n_active += 1
    return k, best, best_count
