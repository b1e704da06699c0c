"""Kernels every broad phase shares: world boxes of all objects in one call, and the
finishing pass (filters, slot -> index, sorting) of a raw pair list.

Objects live in *slots* (stable ids the broad phases keep across frames; a
removed object's slot is reused later). Boxes are two (cap, 3) float64 arrays
``lo``, ``hi`` indexed by slot; ``slots`` (n,) int64 lists the live ones in
insertion order. Two boxes overlap when their closed intervals meet on all
three axes: ``lo_a <= hi_b and lo_b <= hi_a`` per axis (touching counts).
Every broad phase decides a pair with exactly this comparison on the same
float64 boxes, so all of them return the same set as the brute-force loop.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit, njit_internal
from ..core.linalg import POSE_OK, pose_error


# PERF: inlined: called per pair in the broad phases' inner loops, a call costs ~20 ns against
# ~1 ns for the six comparisons (brute force on 2,000 boxes: 47 -> 8.3 ms; octree 1.31 -> 1.0 ms)
@njit_internal(nogil=True, inline="always")
def boxes_overlap_slots(lo, hi, a, b):
    """Closed-interval overlap of the boxes of slots a and b on all three axes."""
    return (
        lo[a, 0] <= hi[b, 0]
        and lo[b, 0] <= hi[a, 0]
        and lo[a, 1] <= hi[b, 1]
        and lo[b, 1] <= hi[a, 1]
        and lo[a, 2] <= hi[b, 2]
        and lo[b, 2] <= hi[a, 2]
    )


@njit_internal(nogil=True)
def add_pair(out, k, a, b):
    """Row k of ``out`` (cap, 2) <- (a, b) while it has room; returns k + 1. The count goes
    on past the capacity, so the caller learns how big a buffer to call again with."""
    if k < out.shape[0]:
        out[k, 0] = a
        out[k, 1] = b
    return k + 1


@njit_internal(nogil=True)
def padded_box(local, s, poses, k, slack_rel):
    """(lo x, lo y, lo z, hi x, hi y, hi z): the world box of local box ``local[s]`` (min xyz,
    max xyz) under pose ``poses[k]`` (4, 4), padded as ``world_boxes`` documents."""
    cx = 0.5 * local[s, 0] + 0.5 * local[s, 3]
    cy = 0.5 * local[s, 1] + 0.5 * local[s, 4]
    cz = 0.5 * local[s, 2] + 0.5 * local[s, 5]
    hx = 0.5 * local[s, 3] - 0.5 * local[s, 0]
    hy = 0.5 * local[s, 4] - 0.5 * local[s, 1]
    hz = 0.5 * local[s, 5] - 0.5 * local[s, 2]
    size = abs(cx) + abs(cy) + abs(cz) + hx + hy + hz
    tsum = abs(poses[k, 0, 3]) + abs(poses[k, 1, 3]) + abs(poses[k, 2, 3])
    pad = slack_rel * (size + tsum)
    c0 = poses[k, 0, 0] * cx + poses[k, 0, 1] * cy + poses[k, 0, 2] * cz + poses[k, 0, 3]
    c1 = poses[k, 1, 0] * cx + poses[k, 1, 1] * cy + poses[k, 1, 2] * cz + poses[k, 1, 3]
    c2 = poses[k, 2, 0] * cx + poses[k, 2, 1] * cy + poses[k, 2, 2] * cz + poses[k, 2, 3]
    e0 = abs(poses[k, 0, 0]) * hx + abs(poses[k, 0, 1]) * hy + abs(poses[k, 0, 2]) * hz
    e1 = abs(poses[k, 1, 0]) * hx + abs(poses[k, 1, 1]) * hy + abs(poses[k, 1, 2]) * hz
    e2 = abs(poses[k, 2, 0]) * hx + abs(poses[k, 2, 1]) * hy + abs(poses[k, 2, 2]) * hz
    return c0 - e0 - pad, c1 - e1 - pad, c2 - e2 - pad, c0 + e0 + pad, c1 + e1 + pad, c2 + e2 + pad


@njit(cache=True, nogil=True)
def world_boxes(local, poses, slots, slack_rel, lo, hi):
    """World AABBs of objects from their local boxes and poses.

    local : (cap, 6) float64, local-frame box per slot (min xyz, max xyz)
    poses : (n, 4, 4) float64, world-from-object pose of ``slots[k]``
    slots : (n,) int64 slots to update
    slack_rel : relative padding (see ``world.world.WORLD_BOX_SLACK``)
    lo, hi : (cap, 3) float64 outputs (only live slots are written)

    The box of the transformed local box is centre' = R c + t, half' = |R| h,
    padded by ``slack_rel * (|c|_1 + |h|_1 + |t|_1)``: the padding covers the
    rounding of this arithmetic and of the narrow phase's relative pose, so a
    pair the narrow phase finds intersecting always has overlapping boxes.

    Returns (k, code): position in ``slots`` and reason of the first invalid
    pose, or (-1, POSE_OK).
    """
    for k in range(slots.shape[0]):
        s = slots[k]
        code = pose_error(poses[k])
        if code != POSE_OK:
            return k, code
        lo[s, 0], lo[s, 1], lo[s, 2], hi[s, 0], hi[s, 1], hi[s, 2] = padded_box(local, s, poses, k, slack_rel)
    return -1, POSE_OK


@njit_internal(nogil=True)
def groups_match(a, b, group, mask):
    """Each slot's collision group meets the other's mask (see ``finish_pairs``)."""
    return (group[a] & mask[b]) != 0 and (group[b] & mask[a]) != 0


@njit_internal(nogil=True)
def is_excluded(excluded, a, b):
    """The pair (a, b) is among the sorted ``excluded`` keys (see ``finish_pairs``).
    PERF: callers test ``excluded.shape[0] > 0`` once, outside their pair loop:
    a per-pair call on an empty array measured 3x slower loops."""
    key = (min(a, b) << 32) + max(a, b)
    pos = np.searchsorted(excluded, key)
    return pos < excluded.shape[0] and excluded[pos] == key


@njit(cache=True, nogil=True)
def finish_pairs(raw, m, rank, n, group, mask, excluded, out):
    """Filter raw slot pairs, map them to insertion-order indices, sort.

    raw : (>= m, 2) int64 slot pairs (any order within a row, each pair once)
    rank : (cap,) int64 insertion-order index of each live slot
    n : live objects
    group, mask : (cap,) int64 collision groups and masks per slot; a pair
        (a, b) passes when ``group[a] & mask[b]`` and ``group[b] & mask[a]``
        are both nonzero
    excluded : (E,) int64 sorted keys ``min_slot * 2**32 + max_slot`` of
        excluded pairs
    out : (>= m, 2) int64 output rows (i < j), sorted by (i, j)

    Returns the number of rows written.
    """
    keys = np.empty(m, np.int64)
    k = np.int64(0)
    filtered = excluded.shape[0] > 0
    for p in range(m):
        a = raw[p, 0]
        b = raw[p, 1]
        if not groups_match(a, b, group, mask) or (filtered and is_excluded(excluded, a, b)):
            continue
        i = rank[a]
        j = rank[b]
        if i > j:
            i, j = j, i
        keys[k] = i * n + j
        k += 1
    kept = keys[:k]
    kept.sort()
    for p in range(k):
        out[p, 0] = kept[p] // n
        out[p, 1] = kept[p] % n
    return k


@njit(cache=True, nogil=True)
def pairs_after_moves(prev, moved, lo, hi, slots, group, mask, excluded):
    """The candidate rows after some objects moved, from the rows before.

    prev : (P, 2) int64 rows (i < j, insertion-order indices), the candidates before
    moved : (n,) bool by index: the objects whose pose changed since ``prev``
    lo, hi, slots, group, mask, excluded : as ``finish_pairs`` (boxes by slot)

    A pair of unmoved objects keeps its row (its boxes and filters are unchanged);
    each moved object's box is tested against every live box with the same closed
    comparison and filters as the broad phases, so the rows are exactly the ones a
    full broad phase would give. Returns (M, 2) int64 rows, sorted by (i, j).
    """
    n = slots.shape[0]
    n_moved = 0
    for i in range(n):
        if moved[i]:
            n_moved += 1
    kept = np.empty(prev.shape[0], np.int64)
    k = 0
    for p in range(prev.shape[0]):
        i = prev[p, 0]
        j = prev[p, 1]
        if not (moved[i] or moved[j]):
            kept[k] = i * n + j
            k += 1
    fresh = np.empty(n_moved * n, np.int64)
    f = 0
    filtered = excluded.shape[0] > 0
    for i in range(n):
        if not moved[i]:
            continue
        a = slots[i]
        for j in range(n):
            # each pair once: a moved object with the unmoved and with the moved after it
            if j == i or (moved[j] and j < i):
                continue
            b = slots[j]
            if not boxes_overlap_slots(lo, hi, a, b) or not groups_match(a, b, group, mask):
                continue
            if filtered and is_excluded(excluded, a, b):
                continue
            fresh[f] = min(i, j) * n + max(i, j)
            f += 1
    # PERF: the kept keys are in order already; sort the few new ones and merge (numba's
    # sort of a long, nearly sorted array costs ~70 us at 1,200 rows)
    new = fresh[:f]
    new.sort()
    out = np.empty((k + f, 2), np.int64)
    p = 0
    q = 0
    for r in range(k + f):
        if q >= f or (p < k and kept[p] < new[q]):
            key = kept[p]
            p += 1
        else:
            key = new[q]
            q += 1
        out[r, 0] = key // n
        out[r, 1] = key % n
    return out


@njit(cache=True, nogil=True)
def box_pairs_across(lo_a, hi_a, lo_b, hi_b, r0, r1):
    """(i, j) of every pair of overlapping boxes, i in rows r0..r1-1 of the (Na, 3) boxes
    ``lo_a``/``hi_a``, j any of the (Nb, 3) ``lo_b``/``hi_b``; the same closed comparison as
    the broad phases. Rows in order of i, then j: (K, 2) int64 (grown by doubling, so the
    memory follows the answer, not Na x Nb)."""
    out = np.empty((16, 2), np.int64)
    k = 0
    for i in range(r0, r1):
        for j in range(lo_b.shape[0]):
            # PERF: written out (boxes_overlap_slots reads one pair of arrays): a call of a helper
            # taking the four arrays cost ~45 ns a pair
            if (
                lo_a[i, 0] <= hi_b[j, 0]
                and lo_b[j, 0] <= hi_a[i, 0]
                and lo_a[i, 1] <= hi_b[j, 1]
                and lo_b[j, 1] <= hi_a[i, 1]
                and lo_a[i, 2] <= hi_b[j, 2]
                and lo_b[j, 2] <= hi_a[i, 2]
            ):
                if k == out.shape[0]:
                    grown = np.empty((2 * k, 2), np.int64)
                    # NOTE: a loop, not grown[:k] = out: an array's slice copy compiles numba's
                    # shape-mismatch message (string formatting: ~2 CPU s of a first scene, issue 32)
                    for r in range(k):
                        grown[r, 0] = out[r, 0]
                        grown[r, 1] = out[r, 1]
                    out = grown
                out[k, 0] = i
                out[k, 1] = j
                k += 1
    return out[:k]


@njit(cache=True, nogil=True)
def deeper_neighbours(i, lo, hi, centres, radii, skip, floor):
    """Objects j (not i, not ``skip[j]``) whose pair with object i may overlap by at least
    ``floor`` >= 0: (js, bounds), bounds[k] an upper bound of the pair's penetration depth.

    The bound is the least overlap of the (N, 3) world boxes ``lo``/``hi`` along an axis (a
    translation separating the boxes separates what they hold), and at most the bounding
    spheres' ``ra + rb - |ca - cb|`` (``centres`` (N, 3), ``radii`` (N,)), padded by 1e-9 of
    the magnitudes for rounding. A pair is kept when its bound is >= ``floor`` (so its
    boxes overlap, closed test). One pass over the objects: the drop-in's nearest-pair
    answer after one object moved (``collisionkit.trimesh``)."""
    js = np.empty(8, np.int64)
    bounds = np.empty(8, np.float64)
    k = 0
    for j in range(lo.shape[0]):
        if j == i or skip[j]:
            continue
        b = min(hi[i, 0] - lo[j, 0], hi[j, 0] - lo[i, 0])
        b = min(b, min(hi[i, 1] - lo[j, 1], hi[j, 1] - lo[i, 1]))
        b = min(b, min(hi[i, 2] - lo[j, 2], hi[j, 2] - lo[i, 2]))
        if not b >= floor:
            continue
        d2 = 0.0
        ma = 0.0
        mb = 0.0
        for a in range(3):
            d2 += (centres[i, a] - centres[j, a]) ** 2
            ma = max(ma, abs(centres[i, a]))
            mb = max(mb, abs(centres[j, a]))
        # EXACT: the pad covers the rounding of the centres and of the distance
        gap = radii[i] + radii[j] - np.sqrt(d2) + 1e-9 * (ma + mb + radii[i] + radii[j])
        b = min(b, gap)
        if not b >= floor:
            continue
        if k == js.shape[0]:
            js2 = np.empty(2 * k, np.int64)
            b2 = np.empty(2 * k, np.float64)
            for r in range(k):  # NOTE: a loop, not a slice copy (as box_pairs_across)
                js2[r] = js[r]
                b2[r] = bounds[r]
            js, bounds = js2, b2
        js[k] = j
        bounds[k] = b
        k += 1
    return js[:k], bounds[:k]
