"""The reference broad phase: every pair of live boxes, O(n^2) (Jolt keeps a brute
force broad phase beside the fast one for the same purpose)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .broadphase_common import boxes_overlap_slots


@njit(cache=True, nogil=True)
def brute_pairs(lo, hi, slots, out):
    """Write every overlapping pair of live slots into ``out`` (cap, 2) while room
    lasts; return how many there are (more than ``out`` holds: call again with
    a bigger buffer)."""
    n = slots.shape[0]
    cap = out.shape[0]
    k = np.int64(0)
    for p in range(n):
        a = slots[p]
        for q in range(p + 1, n):
            b = slots[q]
            if boxes_overlap_slots(lo, hi, a, b):
                if k < cap:
                    out[k, 0] = a
                    out[k, 1] = b
                k += 1
    return k
