"""The reference broad phase: every pair of live boxes, O(n^2) (Jolt keeps a brute
force broad phase beside the fast one for the same purpose)."""

from __future__ import annotations

import numpy as np

from ..core.jit import njit
from .common import add_pair, boxes_overlap_slots, groups_match, is_excluded


@njit(cache=True, nogil=True)
def brute_pairs(lo, hi, slots, out):
    """Write every overlapping pair of live slots into ``out`` (cap, 2) while room
    lasts; return how many there are (more than ``out`` holds: call again with
    a bigger buffer)."""
    n = slots.shape[0]
    k = np.int64(0)
    for p in range(n):
        a = slots[p]
        for q in range(p + 1, n):
            b = slots[q]
            if boxes_overlap_slots(lo, hi, a, b):
                k = add_pair(out, k, a, b)
    return k


@njit(cache=True, nogil=True)
def brute_pairs_finished(lo, hi, slots, group, mask, excluded, out):
    """``brute_pairs`` followed by ``finish_pairs`` in one pass: walking the live
    slots in insertion order gives the rows (p, q), p < q, already as
    insertion-order indices and already sorted, so only the filters remain.
    Writes while room lasts; returns how many rows there are."""
    n = slots.shape[0]
    k = np.int64(0)
    filtered = excluded.shape[0] > 0
    for p in range(n):
        a = slots[p]
        for q in range(p + 1, n):
            b = slots[q]
            if not (boxes_overlap_slots(lo, hi, a, b) and groups_match(a, b, group, mask)):
                continue
            if filtered and is_excluded(excluded, a, b):
                continue
            k = add_pair(out, k, p, q)
    return k
