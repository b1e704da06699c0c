"""The prepared robot checker: forward kinematics, link boxes, box broad phase and the exact
narrow phase of every (link, object) and self pair, for one configuration or a batch, in one
compiled call (``robot.checker``, issue 30 item 1).

Layout (built once per robot, world version and options by ``robot/checker.py``):

* the joint chain as ``kernels.robot.kinematics`` takes it (parents, children, kinds, H),
  the base link and base pose, and how each step's joint value comes from q: ``vsrc[s]``
  the index in q of the actuated joint at the end of its mimic chain (-1: a fixed joint) and
  ``vmul[s, 0:vdepth[s]]`` the (multiplier, offset) pairs of the chain, innermost first:
  ``v = q[vsrc]; v = m * v + o`` per pair, the arithmetic of ``Robot._joint_value``;
* ``local`` (M, 6): the local box (min xyz, max xyz) of each link with geometry;
  ``obj_box`` (O, 6): each obstacle's world box as the World holds it (padded, lo xyz,
  hi xyz) and ``obj_poses`` (O, 4, 4) its pose;
* ``pairs`` (P, PAIR_WIDTH) int64, in the order the narrow phase tries them: link a, its
  box row, b (a link index or an obstacle index), b's box row, whether b is a link, the
  trees of a and b in the pool, the volume kind code and the pair's row in the caller's
  (C, N) detail matrix;
* one pool of every tree the pairs use (``bvh`` flat arrays concatenated; node and triangle
  indices local to each tree, ``meta`` offsets global), volume rows padded to the widest
  kind used so that one pool serves every kind (each kind reads only its own columns).

Per configuration: the joint values, ``kinematics._configuration`` (the batch FK's own
arithmetic, so link poses are bit-identical to ``Robot.link_poses``), the padded world box
of each link (``broadphase.common.padded_box``: a pair the exact test finds intersecting
always has overlapping boxes), then per pair a six-comparison box test and, when the boxes
overlap, ``traverse.descent.collide_task`` in MODE_ANY: the exact descent and triangle test
``collisionkit.intersects`` runs on the same two trees and the same two poses, so every
pair's answer is ``intersects``'s bit for bit.

A robot with many links (``robot/checker.py``'s ``SWEEP_MIN_LINKS``) lists no self pair:
the entries ``check_one_sweep``, ``check_sweep_serial`` and ``check_sweep_parallel`` run the
listed pairs (``_run``), then a second pass (``_run_sweep``) that finds the self pairs
per configuration by a sort-and-sweep of the link boxes (``_self_sweep``), skipping the sorted
keys of the adjacent and allowed pairs (``ib``'s sweep section, ``_unpack_sweep``): memory
linear in the links (issue 31 item 6).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange, types

from ...constants import BV_OBB, MODE_ANY, NO_BUDGET, WORLD_BOX_SLACK
from ..broadphase.common import padded_box
from ..core.atomics import fetch_add
from ..core.jit import njit, njit_internal
from ..core.layout import META_WIDTH, STAT_NODE_PAIRS, STAT_TRI_TESTS
from ..core.linalg import relative_pose
from ..core.unlinked import call_unlinked, njit_driver
from ..traverse.descent import _obb_overlap, collide_task
from .kinematics import _configuration

#: Unit roundoff of float64.
_U = 2.0**-53

#: columns of a ``pairs`` row
PAIR_A = 0  # link index of a
PAIR_A_BOX = 1  # a's row in the link boxes
PAIR_B = 2  # b: link index, or obstacle index
PAIR_B_BOX = 3  # b's row in the link boxes, or in obj_box
PAIR_SELF = 4  # 1: b is a link; 0: an obstacle
PAIR_TREE_A = 5  # a's tree in the pool
PAIR_TREE_B = 6  # b's tree in the pool
PAIR_KIND = 7  # volume kind code of the pair (bvh.pair_volume)
PAIR_ROW = 8  # row in the (C, N) detail matrix
PAIR_WIDTH = 9

#: what a call answers
CHECK_ANY = 0  # per configuration: any pair collides (stops at its first pair)
CHECK_DETAIL = 1  # per configuration and pair: every pair whose boxes overlap is tested
CHECK_FIRST = 2  # the first colliding configuration of an ordered batch


# LENGTH (~90 lines): the whole per-configuration loop of one worker (joint values,
# kinematics, boxes, pairs): passed arrays once per worker, not per configuration or pair
# helper (an array argument costs an atomic refcount pair per call).
@njit_internal(nogil=True)
def link_poses_of(Q, k, vsrc, vdepth, vmul, base, base_link, parents, children, kinds, H, values, poses):
    """Every link pose of configuration ``Q[k]`` into ``poses[:, 0]``: the joint values (mimic
    chains resolved as ``Robot._joint_value`` does) into ``values[:, 0]``, the base pose, then
    ``kinematics._configuration`` (the batch FK's own steps, so poses are bit-identical)."""
    for s in range(parents.shape[0]):
        j = vsrc[s]
        if j >= 0:
            v = Q[k, j]
            for d in range(vdepth[s]):
                v = vmul[s, d, 0] * v + vmul[s, d, 1]
            values[s, 0] = v
    for i in range(4):
        for j in range(4):
            poses[base_link, 0, i, j] = base[i, j]
    _configuration(np.int64(0), parents, children, kinds, H, values, poses)  # int64: one signature



# inline: per configuration; as a call its array argument costs a refcount pair each time
# (Robot.check one configuration a call measured 6.1-6.2 vs 5.9-6.0 us CPU with it and
# _scratch as plain calls)
@njit(cache=True, nogil=True, inline="always")
def _claim(shared, slot, k, nchunks, n, stop_first):
    """The configuration a worker takes after ``k``, or -1 when it is done: a claim on the
    cursor ``shared[slot]`` (one atomic increment: one worker a thread) when ``shared`` has
    that slot, else k + nchunks (static interleaving: start from k = c - nchunks). Done at
    n, and with ``stop_first`` (CHECK_FIRST) past the colliding index ``shared[0]`` (claims
    only grow: every later configuration is after a colliding one)."""
    if shared.shape[0] > slot:
        k = fetch_add(shared, slot, np.int64(1))
    else:
        k += nchunks
    if k >= n or (stop_first and shared[0] < k):
        return np.int64(-1)
    return k


# inline: per configuration, 3 sites; as a plain call the optimised IR kept it out of line with
# four array arguments (refcounts per configuration, see traverse/rows.py).
@njit(cache=True, nogil=True, inline="always")
def _link_boxes(local, link_row, poses, lbox):
    """The padded world box (``broadphase.common.padded_box``, WORLD_BOX_SLACK) of every link
    mesh at the link poses ``poses`` (L, 1, 4, 4): row link_row[i] of ``lbox`` (-1: none)."""
    zero = np.int64(0)
    for i in range(link_row.shape[0]):
        m = link_row[i]
        if m >= 0:
            lbox[m, 0], lbox[m, 1], lbox[m, 2], lbox[m, 3], lbox[m, 4], lbox[m, 5] = padded_box(
                local, m, poses[i], zero, WORLD_BOX_SLACK
            )


# inline: a call returning six arrays costs their refcounts on every per-call check (see _claim)
@njit(cache=True, nogil=True, inline="always")
def _scratch(n_steps, n_links, n_local, stack_rows):
    """A worker's scratch, allocated once per call: joint values (n_steps, 1), link poses
    (n_links, 1, 4, 4), link boxes (n_local, 6), the descent's stack and stats, one key."""
    return (
        np.zeros((n_steps, 1)),
        np.zeros((n_links, 1, 4, 4)),
        np.empty((n_local, 6)),
        np.empty((stack_rows, 2), np.int32),
        np.zeros((1, 4), np.int64),
        np.zeros(1, np.int64),
    )


#: columns of a ``link_kind`` row (the sweep's self pairs): the mesh's own volume kind code
#: (-1: "auto") and the kind ``auto`` chose for it (``bvh.choose_volume``)
KIND_OWN = 0
KIND_CHOICE = 1


@njit_internal(nogil=True)
def _excluded(keys, key):
    """Whether ``key`` is in the sorted int64 array ``keys`` (binary search)."""
    lo = 0
    hi = keys.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo < keys.shape[0] and keys[lo] == key


@njit(cache=True, nogil=True)
def pair_kind(link_kind, ra, rb):
    """The volume kind code ``bvh.pair_volume(mesh_a, mesh_b)`` gives links of box rows ra, rb
    (a first: the lower link index): a's own kind, else b's, else "obb" when either chose
    it, else b's choice (``aabb``)."""
    if link_kind[ra, KIND_OWN] >= 0:
        return link_kind[ra, KIND_OWN]
    if link_kind[rb, KIND_OWN] >= 0:
        return link_kind[rb, KIND_OWN]
    if link_kind[ra, KIND_CHOICE] == BV_OBB:
        return np.int64(BV_OBB)
    return link_kind[rb, KIND_CHOICE]


# LENGTH (~70 lines): one configuration's sweep and narrow phase share the caller's scratch.
@njit_internal(nogil=True)
def _self_sweep(k, lbox, poses, link_obb, n_links, ib, topo, bv, tris, ids, meta, scale, stack, keys, stats, mode, found, tri):
    """The self pairs of configuration k without a pair list (issue 31 item 6): sort and
    sweep of the M link world boxes ``lbox`` (M, 6) on the axis along which their centres
    spread most, the two other axes compared per overlapping pair, each surviving pair
    (i < j in link order) dropped when its key ``i * n_links + j`` is in ``excluded`` (sorted:
    adjacent and allowed pairs), then the same local-box test and ``collide_task`` as a
    listed pair, in the kind ``pair_kind`` gives and on the trees ``link_tree[row, kind]``.

    Returns 1 when a pair collides (CHECK_ANY / CHECK_FIRST stop there). CHECK_DETAIL tests
    every pair and records each hit in ``found``: ``found[0]`` counts the hits (atomically:
    workers share it), hit t as ``found[1 + 3 t : 4 + 3 t]`` = (i, j, k) while it fits.

    Memory: O(M) a configuration; time O(M log M) plus the pairs whose boxes overlap on the
    sweep axis (every pair in the worst case, all boxes stacked along the other two).
    """
    excluded, row_link, link_kind, link_tree = _unpack_sweep(ib)
    M = lbox.shape[0]
    axis = 0
    spread = -1.0
    for ax in range(3):
        s1 = 0.0
        s2 = 0.0
        for m in range(M):
            c = lbox[m, ax] + lbox[m, ax + 3]
            s1 += c
            s2 += c * c
        var = s2 - s1 * s1 / M
        if var > spread:
            spread = var
            axis = ax
    ay = (axis + 1) % 3
    az = (axis + 2) % 3
    lo = np.empty(M)
    for m in range(M):
        lo[m] = lbox[m, axis]
    order = np.argsort(lo)
    one = np.int64(1)
    zero = np.int64(0)
    hit = 0
    for s in range(M):
        ra = order[s]
        top = lbox[ra, axis + 3]
        for t in range(s + 1, M):
            rb = order[t]
            if lbox[rb, axis] > top:
                break
            if (
                lbox[ra, ay] > lbox[rb, ay + 3] or lbox[rb, ay] > lbox[ra, ay + 3]
                or lbox[ra, az] > lbox[rb, az + 3] or lbox[rb, az] > lbox[ra, az + 3]
            ):  # fmt: skip
                continue
            r1 = ra
            r2 = rb
            if row_link[rb] < row_link[ra]:
                r1 = rb
                r2 = ra
            i = row_link[r1]
            j = row_link[r2]
            if _excluded(excluded, i * n_links + j):
                continue
            Ta = poses[i, 0]
            Tb = poses[j, 0]
            if not _local_boxes_overlap(Ta, Tb, link_obb, r1, link_obb, r2, 0.0):
                continue
            kind = pair_kind(link_kind, r1, r2)
            stack[0, 0] = 0
            stack[0, 1] = 0
            got, _ = collide_task(
                topo, bv, tris, ids, meta, scale, link_tree[r1, kind], Ta,
                topo, bv, tris, ids, meta, scale, link_tree[r2, kind], Tb,
                kind, tri, np.int64(MODE_ANY), np.int64(-1),
                keys, zero, zero, stack, one, np.int64(NO_BUDGET), stats, zero,
            )  # fmt: skip
            if got > 0:
                hit = 1
                if mode != CHECK_DETAIL:
                    return 1
                if found.shape[0] > 0:
                    w = fetch_add(found, 0, one)
                    if 4 + 3 * w <= found.shape[0]:
                        found[1 + 3 * w] = i
                        found[2 + 3 * w] = j
                        found[3 + 3 * w] = k
    return hit


@njit(cache=True, nogil=True)
def self_pairs(mesh_ids, n_links, excluded):
    """(P, 2) int64: every link pair (i, j), i < j both in ``mesh_ids`` (ascending link
    indices), whose key ``i * n_links + j`` is not in the sorted ``excluded`` keys, ordered
    by i then j. Two passes (count, fill): memory is the answer's."""
    M = mesh_ids.shape[0]
    count = 0
    for a in range(M):
        for b in range(a + 1, M):
            if not _excluded(excluded, mesh_ids[a] * n_links + mesh_ids[b]):
                count += 1
    out = np.empty((count, 2), np.int64)
    p = 0
    for a in range(M):
        for b in range(a + 1, M):
            if not _excluded(excluded, mesh_ids[a] * n_links + mesh_ids[b]):
                out[p, 0] = mesh_ids[a]
                out[p, 1] = mesh_ids[b]
                p += 1
    return out


#: columns of a local box row (``link_obb``, ``obj_obb``): centre, axes (one a row), half
#: extents along them, the largest |coordinate| of the shape
OBB_WIDTH = 16


@njit_internal(nogil=True)
def _local_boxes_overlap(Ta, Tb, obb_a, ra, obb_b, rb, gap):
    """Whether a's and b's local oriented boxes (rows of ``obb``, ``OBB_WIDTH`` columns: each
    holds every vertex of its shape, in the shape's frame) overlap at poses Ta, Tb: the
    15-axis test (``volumes.box.boxes_overlap``) with the descent's slack
    (64 u (scale_a + scale_b + |t|_1)), so it never rejects a pair the exact test accepts.

    ``gap`` >= 0 widens the slack: False then also says the boxes (so the shapes) are more
    than ``gap`` apart (the face axes are unit vectors; a cross axis is at most unit long,
    so a projection gap over ``gap`` on it is a true gap over ``gap`` too); the distance
    queries of ``kernels.robot.proximity`` use it.

    The OBB node test of ``traverse.descent`` on two roots: b's box moved into a's frame by
    the relative pose, then expressed in a's box frame.
    """
    R, t = relative_pose(Ta, Tb)
    slack = 64.0 * _U * (obb_a[ra, 15] + obb_b[rb, 15] + abs(t[0]) + abs(t[1]) + abs(t[2])) + gap
    # the descent's own OBB node test (it reads columns 0-14 of a row; column 15 is the scale)
    return _obb_overlap(R, t, obb_a, ra, obb_b, rb, slack)


#: header of the packed integer buffer (``robot/checker.py`` packs, ``_unpack`` reads)
H_BASE_LINK = 0
H_STEPS = 1
H_LINKS = 2
H_BOXED = 3  # links with geometry (rows of the link boxes)
H_OBJECTS = 4
H_PAIRS = 5
H_TREES = 6
H_MIMIC = 7  # the longest mimic chain (at least 1)
H_WIDTH = 8  # volume row width of the pool
H_NODES = 9
H_TRIS = 10
H_STACK = 11  # traversal stack rows the largest pair needs
H_SWEEP = 12  # offset in ib of the sweep's section (``_unpack_sweep``)
H_SWEEP_LINKS = 13  # rows of the sweep's link tables (0: no sweep; else the links with geometry)
H_EXCLUDED = 14  # excluded self-pair keys
H_KIND_CODES = 15  # columns of ``link_tree`` (volume kind codes 0 .. H_KIND_CODES - 1)
HEADER = 16


@njit_internal(nogil=True)
def _unpack(fb, wb, ib):
    """The arrays packed in ``fb`` (float64), ``wb`` (float64: the obstacles' poses and world
    boxes, the part a pose change replaces) and ``ib`` (int64), as views.

    PERF: the per-call entry takes three arrays, not twenty: every array argument costs
    numba ~50 ns to unbox (a call with 25 arguments cost 1.5 us before the kernel ran).
    """
    S = ib[H_STEPS]
    L = ib[H_LINKS]
    M = ib[H_BOXED]
    O = ib[H_OBJECTS]  # noqa: E741
    P = ib[H_PAIRS]
    T = ib[H_TREES]
    D = ib[H_MIMIC]
    W = ib[H_WIDTH]
    NB = ib[H_NODES]
    F = ib[H_TRIS]
    i = HEADER
    parents = ib[i : i + S]
    i += S
    children = ib[i : i + S]
    i += S
    kinds = ib[i : i + S]
    i += S
    vsrc = ib[i : i + S]
    i += S
    vdepth = ib[i : i + S]
    i += S
    link_row = ib[i : i + L]
    i += L
    pairs = ib[i : i + P * PAIR_WIDTH].reshape((P, PAIR_WIDTH))
    i += P * PAIR_WIDTH
    meta = ib[i : i + T * META_WIDTH].reshape((T, META_WIDTH))
    f = 0
    base = fb[f : f + 16].reshape((4, 4))
    f += 16
    H = fb[f : f + S * 30].reshape((S, 3, 10))
    f += S * 30
    vmul = fb[f : f + S * D * 2].reshape((S, D, 2))
    f += S * D * 2
    local = fb[f : f + M * 6].reshape((M, 6))
    f += M * 6
    link_obb = fb[f : f + M * OBB_WIDTH].reshape((M, OBB_WIDTH))
    f += M * OBB_WIDTH
    obj_obb = fb[f : f + O * OBB_WIDTH].reshape((O, OBB_WIDTH))
    f += O * OBB_WIDTH
    bv = fb[f : f + NB * W].reshape((NB, W))
    f += NB * W
    tris = fb[f : f + F * 9].reshape((F, 3, 3))
    f += F * 9
    scale = fb[f : f + T]
    obj_poses = wb[0 : O * 16].reshape((O, 4, 4))
    obj_box = wb[O * 16 : O * 22].reshape((O, 6))
    return (
        base, parents, children, kinds, H, vsrc, vmul, vdepth,
        local, link_row, link_obb, obj_poses, obj_box, obj_obb, pairs, bv, tris, meta, scale,
    )  # fmt: skip


@njit_internal(nogil=True)
def _unpack_sweep(ib):
    """The sweep's section of ``ib`` (after ``meta``), as views: ``excluded`` (E,) sorted
    keys i * L + j of the self pairs never tested (adjacent, allowed), ``row_link`` (M,) the
    link index of each box row, ``link_kind`` (M, 2) (``KIND_OWN``, ``KIND_CHOICE``) and
    ``link_tree`` (M, K) each row's tree in the pool per volume kind code (-1: not built).
    Empty (M = 0) for a checker that lists its self pairs."""
    i = ib[H_SWEEP]
    M = ib[H_SWEEP_LINKS]
    E = ib[H_EXCLUDED]
    K = ib[H_KIND_CODES]
    excluded = ib[i : i + E]
    i += E
    row_link = ib[i : i + M]
    i += M
    link_kind = ib[i : i + 2 * M].reshape((M, 2))
    i += 2 * M
    link_tree = ib[i : i + M * K].reshape((M, K))
    return excluded, row_link, link_kind, link_tree


@njit_internal()
def _finite(Q):
    for k in range(Q.shape[0]):
        for j in range(Q.shape[1]):
            if not math.isfinite(Q[k, j]):
                return False
    return True


# LENGTH (~90 lines): the whole per-configuration loop of one worker (kinematics, boxes,
# pairs) on the packed buffers. PERF: one function, not a call to a helper taking the unpacked
# arrays: compiled apart, that helper's collision chain was optimised and generated twice (as
# its own library and linked into this one; issue 32, compile time).
@njit(cache=True, nogil=True)
def _run(c, nchunks, Q, fb, wb, ib, topo, mode, out, detail, work, shared, tri):
    """The packed checker's configurations of worker ``c``: claimed dynamically (``shared[1]`` a cursor, one worker
    a thread) when ``shared`` has two entries, else c, c + nchunks, ... (serial: one chunk).

    ``out[k]`` = 1 when configuration k collides (CHECK_ANY, CHECK_DETAIL, and CHECK_FIRST
    for the configurations it tests); ``detail[row, k]`` the pair's hit (CHECK_DETAIL).
    CHECK_FIRST: ``shared[0]`` is the smallest colliding index found so far (n: none); a
    configuration after it is skipped (the value is always some colliding index, so a
    stale read costs work, never an answer), and the caller takes the first k with out[k].
    ``work[p]`` (when it has a row per pair; serial calls only) adds up the node pairs and
    triangle tests of pair p's descents: what ``robot/checker.py`` orders the pairs by.
    """
    (
        base, parents, children, kinds, H, vsrc, vmul, vdepth,
        local, link_row, link_obb, obj_poses, obj_box, obj_obb, pairs, bv, tris, meta, scale,
    ) = _unpack(fb, wb, ib)  # fmt: skip
    base_link = ib[H_BASE_LINK]
    ids = topo[0]
    stack_rows = ib[H_STACK]
    n = Q.shape[0]
    n_steps = parents.shape[0]
    n_links = link_row.shape[0]
    values, poses, lbox, stack, stats, keys = _scratch(n_steps, n_links, local.shape[0], stack_rows)
    zero = np.int64(0)
    one = np.int64(1)
    mode_any = np.int64(MODE_ANY)
    no_cap = np.int64(-1)
    budget = np.int64(NO_BUDGET)
    count_work = work.shape[0] == pairs.shape[0]
    k = c - nchunks
    while True:
        k = _claim(shared, np.int64(1), k, nchunks, n, mode == CHECK_FIRST)
        if k < 0:
            break
        link_poses_of(Q, k, vsrc, vdepth, vmul, base, base_link, parents, children, kinds, H, values, poses)
        _link_boxes(local, link_row, poses, lbox)
        hit = 0
        for p in range(pairs.shape[0]):
            ra = pairs[p, PAIR_A_BOX]
            rb = pairs[p, PAIR_B_BOX]
            is_self = pairs[p, PAIR_SELF] != 0
            if is_self:
                apart = (
                    lbox[ra, 0] > lbox[rb, 3] or lbox[rb, 0] > lbox[ra, 3]
                    or lbox[ra, 1] > lbox[rb, 4] or lbox[rb, 1] > lbox[ra, 4]
                    or lbox[ra, 2] > lbox[rb, 5] or lbox[rb, 2] > lbox[ra, 5]
                )  # fmt: skip
            else:
                apart = (
                    lbox[ra, 0] > obj_box[rb, 3] or obj_box[rb, 0] > lbox[ra, 3]
                    or lbox[ra, 1] > obj_box[rb, 4] or obj_box[rb, 1] > lbox[ra, 4]
                    or lbox[ra, 2] > obj_box[rb, 5] or obj_box[rb, 2] > lbox[ra, 5]
                )  # fmt: skip
            if apart:
                continue
            a = pairs[p, PAIR_A]
            b = pairs[p, PAIR_B]
            Ta = poses[a, 0]
            Tb = poses[b, 0] if is_self else obj_poses[b]
            # PERF: the two local oriented boxes (15-axis test, the descent's slack): most pairs
            # whose world boxes overlap end here, without a descent call
            if is_self:
                if not _local_boxes_overlap(Ta, Tb, link_obb, ra, link_obb, rb, 0.0):
                    continue
            elif not _local_boxes_overlap(Ta, Tb, link_obb, ra, obj_obb, rb, 0.0):
                continue
            stack[0, 0] = 0
            stack[0, 1] = 0
            before = stats[0, STAT_NODE_PAIRS] + stats[0, STAT_TRI_TESTS]
            found, _ = collide_task(
                topo, bv, tris, ids, meta, scale, pairs[p, PAIR_TREE_A], Ta,
                topo, bv, tris, ids, meta, scale, pairs[p, PAIR_TREE_B], Tb,
                pairs[p, PAIR_KIND], tri, mode_any, no_cap,
                keys, zero, zero, stack, one, budget, stats, zero,
            )  # fmt: skip
            if count_work:
                work[p] += stats[0, STAT_NODE_PAIRS] + stats[0, STAT_TRI_TESTS] - before
            if found > 0:
                hit = 1
                if mode != CHECK_DETAIL:
                    break
                detail[pairs[p, PAIR_ROW], k] = True
        if hit:
            out[k] = 1  # NOTE: only ever set: the sweep's pass may have set it (out starts zeroed)
        if hit and mode == CHECK_FIRST and k < shared[0]:
            shared[0] = k  # NOTE: a plain store; only ever a colliding index (see above)


# LENGTH (~55 lines): the sweep's per-configuration loop (as ``_run``'s, and one function
# for the same reason).
@njit_internal(nogil=True)
def _run_sweep(c, nchunks, Q, fb, wb, ib, topo, mode, out, shared, found, tri):
    """The self pairs of a robot past the checker's link-count threshold (``ib``'s sweep
    section), after ``_run`` answered the listed pairs: worker ``c``'s configurations
    (claimed with the cursor ``shared[2]`` when ``shared`` has three entries, else c, c +
    nchunks, ...), each not already colliding (every one in CHECK_DETAIL) swept by
    ``_self_sweep``; ``out[k]`` and CHECK_FIRST's ``shared[0]`` as ``_run`` sets them.

    PERF: a pass of its own, not a call inside ``_run``: with the sweep's call site in it,
    the listed path (the Panda's) cost 0.4 us a configuration more. The link poses and boxes
    are computed again (linear in the links; the sweep costs more).
    """
    (
        base, parents, children, kinds, H, vsrc, vmul, vdepth,
        local, link_row, link_obb, obj_poses, obj_box, obj_obb, pairs, bv, tris, meta, scale,
    ) = _unpack(fb, wb, ib)  # fmt: skip
    base_link = ib[H_BASE_LINK]
    ids = topo[0]
    stack_rows = ib[H_STACK]
    n = Q.shape[0]
    n_links = link_row.shape[0]
    values, poses, lbox, stack, stats, keys = _scratch(parents.shape[0], n_links, local.shape[0], stack_rows)
    k = c - nchunks
    while True:
        k = _claim(shared, np.int64(2), k, nchunks, n, mode == CHECK_FIRST)
        if k < 0:
            break
        if mode == CHECK_DETAIL or out[k] == 0:
            link_poses_of(Q, k, vsrc, vdepth, vmul, base, base_link, parents, children, kinds, H, values, poses)
            _link_boxes(local, link_row, poses, lbox)
            if _self_sweep(k, lbox, poses, link_obb, n_links, ib, topo, bv, tris, ids, meta, scale, stack, keys, stats, mode, found, tri):
                out[k] = 1
                if mode == CHECK_FIRST and k < shared[0]:
                    shared[0] = k  # NOTE: a plain store; only ever a colliding index (as _run's)


def _one_config(q: types.Array) -> types.Array:
    """The type of ``q.reshape((1, dof))``: one configuration as a batch of one."""
    return q.copy(ndim=2, layout="C")


_I8 = types.Array(types.int8, 1, "C")
_I64 = types.Array(types.int64, 1, "C")
_BOOL2 = types.Array(types.bool_, 2, "C")


# PERF: no nogil on the per-call entry (as kernels.traverse.descent.intersect_one): releasing
# and retaking the GIL costs about 0.5 us. It calls its chunk unlinked (kernels/core/unlinked.py):
# linked, it optimised the whole checker again (0.6 of a first check's 21 CPU s, 2026-12-07).
@njit_driver(_run, lambda q, fb, wb, ib, topo, tri: (
    _one_config(q), fb, wb, ib, topo, types.int64, _I8, _BOOL2, _I64, _I64, tri
), nogil=False)  # fmt: skip
def check_one(q, fb, wb, ib, topo, tri):
    """One configuration q (dof,) against the packed checker (``fb``, ``wb``, ``ib``, ``topo``, built
    by ``robot/checker.py``): 1 (collides), 0 (free), -1 (q holds a non-finite value).

    A checker that lists its self pairs; one that sweeps them takes ``check_one_sweep``
    (PERF: separate entries, so the listed path's compiled code holds no sweep: with it, the
    Panda's check cost 0.3-0.4 us more)."""
    Q = q.reshape((1, q.shape[0]))
    if not _finite(Q):
        return -1
    out = np.zeros(1, np.int8)
    none = np.zeros(0, np.int64)
    args = (Q, fb, wb, ib, topo, np.int64(CHECK_ANY), out, np.zeros((1, 1), np.bool_), none, none, tri)
    call_unlinked(_run, np.int64(0), np.int64(1), args)
    return np.int64(out[0])


@njit_driver(_run)
def check_serial(Q, fb, wb, ib, topo, mode, out, detail, work, shared, tri, nchunks):
    """A batch Q (N, dof) on the calling thread: ``_run``'s outputs for every configuration
    (``shared``: [n] for CHECK_FIRST, else empty)."""
    args = (Q, fb, wb, ib, topo, mode, out, detail, work, shared, tri)  # fmt: skip
    for c in range(nchunks):
        call_unlinked(_run, c, nchunks, args)  # kernels/core/unlinked.py


@njit_driver(_run, parallel=True)
def check_parallel(Q, fb, wb, ib, topo, mode, out, detail, work, shared, tri, nchunks):
    """A batch over numba threads: ``nchunks`` workers (one a thread) claim configurations
    dynamically (``shared`` = [first colliding index or n, next configuration]): colliding
    configurations stop early and cost less, so static chunks would leave threads idle."""
    args = (Q, fb, wb, ib, topo, mode, out, detail, work, shared, tri)  # fmt: skip
    for c in prange(nchunks):
        call_unlinked(_run, np.int64(c), nchunks, args)  # kernels/core/unlinked.py


@njit(cache=True, nogil=True)
def _run_both(c, nchunks, Q, fb, wb, ib, topo, mode, out, detail, work, shared, found, tri):
    """A sweeping checker's chunk: ``_run`` (the listed pairs), then ``_run_sweep``."""
    _run(c, nchunks, Q, fb, wb, ib, topo, mode, out, detail, work, shared, tri)
    _run_sweep(c, nchunks, Q, fb, wb, ib, topo, mode, out, shared, found, tri)


@njit_driver(_run_both, lambda q, fb, wb, ib, topo, tri: (
    _one_config(q), fb, wb, ib, topo, types.int64, _I8, _BOOL2, _I64, _I64, _I64, tri
), nogil=False)  # fmt: skip
def check_one_sweep(q, fb, wb, ib, topo, tri):
    """``check_one`` for a checker that sweeps its self pairs: the listed pairs, then (when
    they found nothing) the sweep (``_run_both``, called unlinked as ``check_one``'s chunk)."""
    Q = q.reshape((1, q.shape[0]))
    if not _finite(Q):
        return -1
    out = np.zeros(1, np.int8)
    none = np.zeros(0, np.int64)
    args = (Q, fb, wb, ib, topo, np.int64(CHECK_ANY), out, np.zeros((1, 1), np.bool_), none, none, none, tri)
    call_unlinked(_run_both, np.int64(0), np.int64(1), args)
    return np.int64(out[0])


# PERF: the sweep's drivers call ``_run_both`` unlinked (kernels/core/unlinked.py): linked,
# the serial driver and the four copies of a prange driver each optimised the whole checker
# again (the robot_sweep warm-up group: ~4.7 of its 36 CPU s, 2026-12-07)
@njit_driver(_run_both)
def check_sweep_serial(Q, fb, wb, ib, topo, mode, out, detail, work, shared, found, tri, nchunks):
    """``check_serial`` for a checker that sweeps its self pairs: per chunk the listed pairs,
    then the sweep (``found``: its self hits in CHECK_DETAIL, else empty)."""
    args = (Q, fb, wb, ib, topo, mode, out, detail, work, shared, found, tri)  # fmt: skip
    for c in range(nchunks):
        call_unlinked(_run_both, c, nchunks, args)


@njit_driver(_run_both, parallel=True)
def check_sweep_parallel(Q, fb, wb, ib, topo, mode, out, detail, work, shared, found, tri, nchunks):
    """``check_parallel`` for a checker that sweeps: each worker claims configurations for the
    listed pairs (cursor ``shared[1]``), then for the sweep (cursor ``shared[2]``)."""
    args = (Q, fb, wb, ib, topo, mode, out, detail, work, shared, found, tri)  # fmt: skip
    for c in prange(nchunks):
        call_unlinked(_run_both, np.int64(c), nchunks, args)
