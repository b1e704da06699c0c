"""Simultaneous depth-first descent of two BVHs (seed 001, "Kollisionstest zwischen
Hierarchien"), single pair and batched over tasks.

Data layout (see ``collisionkit.bvh``): a *pool* is one or more trees
concatenated; per tree a ``meta`` row (node offset, triangle offset, nodes,
triangles, depth, fan-out, faces, largest leaf) and a ``scale`` (largest
absolute vertex coordinate). Node and triangle indices inside a tree are local
to it, so trees concatenate without rewriting. A *task* is
(tree in pool a, tree in pool b, pose index in poses_a, pose index in poses_b).

Conventions (ARCHITECTURE.md): everything happens in a's frame; b's triangles
are mapped there by ``linalg.map_triangle`` with the relative pose from
``linalg.relative_pose``; triangle tests are exact on those coordinates;
volume tests are conservative by a slack proportional to the scene size.

Cost model counters per task (seed 001, t = n_v c_v + n_p c_p + n_u c_u):
STAT_BV_TESTS (n_v), STAT_TRI_TESTS (n_p), STAT_NODE_PAIRS (pairs popped),
STAT_BV_UPDATES (n_u: b's volumes moved into a's frame; 0 for AABB trees,
whose test only needs the fixed relative rotation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange, types

from ...constants import (
    BV_AABB,
    BV_OBB,
    BV_SAABB,
    LEAF_FLAG,
    MODE_ANY,
    MODE_FIRST,
    NO_BUDGET,
)
from ..core.atomics import fetch_add
from ..core.jit import njit, njit_internal
from ..core.layout import (
    BV_T,
    IDS_T,
    META_DEPTH,
    META_FACES,
    META_FANOUT,
    META_NODE_OFF,
    META_T,
    META_TRI_OFF,
    POSE_T,
    SCALE_T,
    STAT_BV_TESTS,
    STAT_BV_UPDATES,
    STAT_NODE_PAIRS,
    STAT_TRI_TESTS,
    TOPO_T,
    TRIS_T,
)
from ..core.lazy import njit_lazy
from ..core.linalg import first_bad_pose, pose_error, relative_pose
from ..core.tri_rows import box_misses, box_outside_aabb, leaf_pair, mapped_box_row, row_offset, tri_row
from ..core.unlinked import call_unlinked, njit_driver
from ..triangle.tri_tri import tri_tri_guigue_tuples, tri_tri_intersect_tuples
from ..volumes.box import boxes_overlap
from ..volumes.box import obb_overlap as _obb_overlap  # NOTE: the name its importers use
from ..volumes.dispatch import overlap_other, size_other
from .rows import place_rows

#: Unit roundoff of float64.
_U = 2.0**-53


@njit(cache=True, nogil=True)
def stack_size(depth_a, fan_a, depth_b, fan_b):
    """Entries a descent can hold: each step pops one pair and pushes at most
    (fan-out) children of one side, and there are at most depth_a + depth_b steps."""
    return (depth_a + depth_b) * (max(fan_a, fan_b) - 1) + 2


# inline: the per-node-pair test of the traversal (AABB, the default); as a call,
# batched intersects ran 11% slower (issue 16).
@njit(cache=True, nogil=True, inline="always")
def _aabb_overlap(R, AbsR, t, bv_a, ia, bv_b, ib, slack):
    """AABB node pair: b's box is an OBB in a's frame with axes R's columns.

    Only its centre moves, so no volume update is needed (R, |R| are per query).
    """
    t0, t1, t2 = row_offset(R, t, bv_a, ia, bv_b, ib)
    return boxes_overlap(
        t0, t1, t2, R, AbsR,
        bv_a[ia, 3], bv_a[ia, 4], bv_a[ia, 5],
        bv_b[ib, 3], bv_b[ib, 4], bv_b[ib, 5], slack,
    )


@njit_internal(nogil=True)
def _add_stats(stats, srow, n_bv, n_tri, n_pairs, n_upd):
    """Add one task's counters to its stats row (once per task, at its exit)."""
    stats[srow, STAT_BV_TESTS] += n_bv
    stats[srow, STAT_TRI_TESTS] += n_tri
    stats[srow, STAT_NODE_PAIRS] += n_pairs
    stats[srow, STAT_BV_UPDATES] += n_upd


# LENGTH (~140 lines): one descent loop whose state (stack, cursor, counters, relative pose,
# early exit) lives in locals; the node tests, triangle tests and row bookkeeping are calls already.
# Splitting the loop body would pass that state through arrays (an atomic refcount per array
# argument per call) or need inline="always" (compile time multiplies, issue 16).
_SIDE_T = (TOPO_T, BV_T, TRIS_T, IDS_T, META_T, SCALE_T, types.int64, POSE_T)  # one tree's arguments
_I64, _I64_1D, _I64_2D = types.int64, types.Array(types.int64, 1, "C"), types.Array(types.int64, 2, "C")


def _collide_signature(tri_test: Any) -> Any:
    return types.UniTuple(_I64, 2)(
        *_SIDE_T, *_SIDE_T, _I64, tri_test, _I64, _I64,
        _I64_1D, _I64, _I64, types.Array(types.int32, 2, "C"), _I64, _I64, _I64_2D, _I64,
    )  # fmt: skip


# Called through a slot (kernels/core/lazy.py, not cold): its callers (the chunks, the
# per-call entries, the robot checker) do not each compile it again.
@njit_lazy(_collide_signature(types.none), _collide_signature(types.int64), cold=False, nogil=True)
def collide_task(
    topo_a, bv_a, tris_a, ids_a, meta_a, scale_a, tree_a, Ta,
    topo_b, bv_b, tris_b, ids_b, meta_b, scale_b, tree_b, Tb,
    bv_kind, tri_test, mode, max_pairs,
    keys, wpos, wcap, stack, top, budget, stats, srow,
):
    """Descend one (tree a, tree b) pair under poses Ta, Tb from the node pairs
    ``stack[0:top]`` (local indices; ``(0, 0)`` and ``top = 1`` for a whole query).

    Returns ``(found, top)``. ``found`` is the number of intersecting triangle pairs
    found: 0/1 in MODE_ANY and MODE_FIRST; in MODE_ALL all of them, or max_pairs + 1
    when a cap (max_pairs >= 0) stopped the search early. Pair keys
    face_a * faces_b + face_b are written to keys[wpos : wpos + wcap] while
    room lasts (the caller detects overflow from the count). Counters go to
    stats[srow]. ``top`` is 0 when the descent is done; it is the number of node
    pairs left untested in ``stack[0:top]`` when it stopped because ``budget`` work
    units (node pairs taken + triangle tests) were spent (``NO_BUDGET``: never). Each
    node pair has one parent, so those pairs and the ones already done partition the
    query: the split path (``split_front``) hands the rest to other threads.

    ``tri_test``: ``None`` for the common case, Guigue's test on box trees (AABB, OBB,
    saabb), or a ``TRI_TEST_*`` code (int64) for any test on any volume kind, chosen at
    run time. By type, not value (issue 32): numba prunes what ``None`` rules out, so a
    first query compiles neither Moller's test nor the other kinds' node tests (~2 CPU
    s); a code compiles this chain once more. ``query.strategies.descent.descent_tri``
    routes; a kind routed wrongly to ``None`` is only slower (every node pair overlaps).

    PERF: inside the loop everything is scalars and tuples; arrays are only
    indexed, never passed to helpers (each array argument costs an atomic
    incref/decref pair: 65% of the run time before this layout).
    """
    if bv_kind == BV_SAABB:
        bv_kind = BV_AABB  # a saabb row starts with the AABB row (kernels/volumes/saabb.py)
    R, t = relative_pose(Ta, Tb)
    AbsR = (abs(R[0]), abs(R[1]), abs(R[2]), abs(R[3]), abs(R[4]), abs(R[5]), abs(R[6]), abs(R[7]), abs(R[8]))
    slack = 64.0 * _U * (scale_a[tree_a] + scale_b[tree_b] + abs(t[0]) + abs(t[1]) + abs(t[2]))
    is_obb = bv_kind == BV_OBB
    is_aabb = bv_kind == BV_AABB
    # spheres and k-DOPs (kernels/volumes/dispatch.py) measure node size their own way: size_col -1
    size_col = 12 if is_obb else (3 if is_aabb else -1)

    na0 = meta_a[tree_a, META_NODE_OFF]
    ta0 = meta_a[tree_a, META_TRI_OFF]
    nb0 = meta_b[tree_b, META_NODE_OFF]
    tb0 = meta_b[tree_b, META_TRI_OFF]
    faces_b = meta_b[tree_b, META_FACES]

    # int64, not literal 0: _add_stats keeps one signature at every exit
    n_bv = np.int64(0)
    n_tri = np.int64(0)
    n_pairs = np.int64(0)
    n_upd = np.int64(0)
    found = 0
    while top > 0:
        if n_pairs + n_tri >= budget:
            break  # suspended: stack[0:top] is what is left
        top -= 1
        ia = na0 + stack[top, 0]
        ib = nb0 + stack[top, 1]
        n_pairs += 1
        n_bv += 1
        if is_aabb:
            hit = _aabb_overlap(R, AbsR, t, bv_a, ia, bv_b, ib, slack)
        elif is_obb:
            n_upd += 1
            hit = _obb_overlap(R, t, bv_a, ia, bv_b, ib, slack)
        elif tri_test is None:
            hit = True  # never reached (callers route other kinds to a code); conservative
        else:
            hit, upd = overlap_other(bv_kind, R, t, bv_a, ia, bv_b, ib, slack)
            n_upd += upd
        if not hit:
            continue
        leaf_a, leaf_b, fa0, fa1, fb0, fb1 = leaf_pair(topo_a, ia, ta0, topo_b, ib, tb0)
        if leaf_a and leaf_b:
            for jb in range(fb0, fb1):
                B, blox, bhix, bloy, bhiy, bloz, bhiz = mapped_box_row(R, t, tris_b, jb)
                if is_aabb and box_outside_aabb(bv_a, ia, blox, bhix, bloy, bhiy, bloz, bhiz, slack):
                    continue  # b's triangle misses a's leaf box: no pair with it
                for ja in range(fa0, fa1):
                    A = tri_row(tris_a, ja)
                    # Exact box rejection on the very coordinates the exact test uses.
                    if box_misses(A, blox, bhix, bloy, bhiy, bloz, bhiz):
                        continue
                    n_tri += 1
                    if tri_test is None:
                        if not tri_tri_guigue_tuples(A, B):
                            continue
                    elif not tri_tri_intersect_tuples(A, B, tri_test):
                        continue
                    found += 1
                    if mode == MODE_ANY:
                        _add_stats(stats, srow, n_bv, n_tri, n_pairs, n_upd)
                        return 1, 0
                    if found <= wcap:
                        keys[wpos + found - 1] = np.int64(ids_a[ja]) * faces_b + ids_b[jb]
                    if mode == MODE_FIRST or (max_pairs >= 0 and found > max_pairs):
                        _add_stats(stats, srow, n_bv, n_tri, n_pairs, n_upd)
                        return found, 0
            continue
        # Descend the larger node (or the only inner one); children pushed in
        # reverse so the first child is visited first.
        if leaf_b:
            down_a = True
        elif leaf_a:
            down_a = False
        elif size_col >= 0:
            down_a = (
                bv_a[ia, size_col] + bv_a[ia, size_col + 1] + bv_a[ia, size_col + 2]
                >= bv_b[ib, size_col] + bv_b[ib, size_col + 1] + bv_b[ib, size_col + 2]
            )
        elif tri_test is None:
            down_a = True  # never reached, as above
        else:
            down_a = size_other(bv_kind, bv_a, ia) >= size_other(bv_kind, bv_b, ib)
        if down_a:
            c0 = topo_a[ia, 0]
            c = c0 + topo_a[ia, 1] - 1
            while c >= c0:
                stack[top, 0] = c
                stack[top, 1] = ib - nb0
                top += 1
                c -= 1
        else:
            c0 = topo_b[ib, 0]
            c = c0 + topo_b[ib, 1] - 1
            while c >= c0:
                stack[top, 0] = ia - na0
                stack[top, 1] = c
                top += 1
                c -= 1
    _add_stats(stats, srow, n_bv, n_tri, n_pairs, n_upd)
    return found, top


#: ``intersect_one``'s answer for a query its budget did not settle (a large query):
#: negative, below every pose error code, so the caller's one ``r < 0`` test covers both.
UNSETTLED = -1000


# inline: as a plain call returning its arrays it cost the per-call boolean ~0.15 us (8%)
@njit(cache=True, nogil=True, inline="always")
def _boolean_descent(
    topo_a, bv_a, tris_a, meta_a, scale_a, Ta,
    topo_b, bv_b, tris_b, meta_b, scale_b, Tb,
    bv_kind, tri_test, budget,
):
    """The serial descent of a per-call boolean (MODE_ANY) from the roots, at most ``budget``
    work units: (found, top, stack, stats), ``top`` > 0 when it stopped with node pairs left
    in stack[0:top]."""
    n = stack_size(meta_a[0, META_DEPTH], meta_a[0, META_FANOUT], meta_b[0, META_DEPTH], meta_b[0, META_FANOUT])
    stack = np.empty((n, 2), np.int32)
    stack[0, 0] = 0
    stack[0, 1] = 0
    scratch = np.zeros(5, np.int64)  # stats row (4) and one key slot (unused by MODE_ANY)
    stats = scratch[0:4].reshape((1, 4))
    keys = scratch[4:5]
    no_ids = topo_a[0]  # MODE_ANY never reads face ids
    # int64 values, not literals: collide_task keeps the one signature _run_chunk uses
    zero = np.int64(0)
    found, top = collide_task(
        topo_a, bv_a, tris_a, no_ids, meta_a, scale_a, zero, Ta,
        topo_b, bv_b, tris_b, no_ids, meta_b, scale_b, zero, Tb,
        bv_kind, tri_test, np.int64(MODE_ANY), np.int64(-1),
        keys, zero, zero, stack, np.int64(1), budget, stats, zero,
    )
    return found, top, stack, stats


# PERF: no nogil on the per-call entry: releasing and retaking the GIL costs about
# 0.5 us, more than a typical miss; batched entries do release it. It takes five
# arrays per tree (face ids are not needed for a boolean).
# PERF: it checks the poses with pose_error written out, not through tri_rows.pose_code:
# through it the per-call miss ran 1.03-1.06x (benchmarks.versions --quick, miss-overhead
# intersects per call, 3 runs), written out 0.98-0.99x of the old code.
@njit(cache=True)
def intersect_one(
    topo_a, bv_a, tris_a, meta_a, scale_a, Ta,
    topo_b, bv_b, tris_b, meta_b, scale_b, Tb,
    bv_kind, tri_test, budget,
):
    """The per-call boolean: one pose pair, tree 0 of each pool, at most ``budget`` work
    units (``collide_task``). Returns 1 (intersecting), 0 (not), UNSETTLED (the budget ran
    out: a large query), or a negative pose error: -(1 + code) for Ta, -(11 + code) for
    Tb (linalg.pose_error).

    The public path passes SPLIT_WORK and finishes an UNSETTLED query on numba's threads
    from Python (``query.strategies.descent.split_boolean``: the front expanded by
    ``contacts_one``, run by the batch driver); NO_BUDGET gives the complete serial answer.

    Why the split is not in here (issue 32, compile time): a kernel that ran the threads'
    continuation would link its own copy of the batch driver and its chunk's whole chain
    (``_split_parallel`` took 5.3 CPU s of the intersects group on 2026-12-07), while the
    batch driver the split runs on is compiled for batches anyway and calls its chunk
    unlinked (kernels/core/unlinked.py).
    """
    ea = pose_error(Ta)
    if ea != 0:
        return -(1 + ea)
    eb = pose_error(Tb)
    if eb != 0:
        return -(11 + eb)
    found, top, stack, stats = _boolean_descent(
        topo_a, bv_a, tris_a, meta_a, scale_a, Ta, topo_b, bv_b, tris_b, meta_b, scale_b, Tb,
        bv_kind, tri_test, budget,
    )  # fmt: skip
    return found if top == 0 else UNSETTLED


# LENGTH (~60 lines): the budgeted descent and the breadth-first expansion of what it left
# share one call of collide_task (a second call site would compile it in here twice).
@njit(cache=True, nogil=True)
def _expand(
    topo_a, bv_a, tris_a, ids_a, meta_a, scale_a, Ta,
    topo_b, bv_b, tris_b, ids_b, meta_b, scale_b, Tb,
    bv_kind, tri_test, mode, max_pairs, keys, found, stack, top, budget, front, target, stats,
):
    """Descend from ``stack[0:top]`` for ``budget`` work units, then expand what is left
    breadth first (one ``collide_task`` step per inner pair; leaf pairs are left untested
    for the tasks, so the expansion finds no triangle pair) until ``target`` node pairs
    wait or none do. Returns ``(found, m)``: ``front[0:m]`` are the node pairs still to
    descend (local indices). ``front`` must hold target + len(stack) + the larger fan-out
    rows; the pairs found before the split (``found``, from ``keys[found0]``) must fit in
    ``keys`` (``contacts_one``).

    PERF: leaf pairs stay in the front: near contact the live inner pairs stay few while
    the leaf pairs are the work, and testing them here ran most of a query serially
    (flange: 33k of 80k work units before the split).
    """
    zero = np.int64(0)
    cap = front.shape[0]
    step_budget = budget
    kept = 0  # front[0:kept]: leaf pairs met by the expansion
    head = 0  # front[head:m]: node pairs still to expand, oldest (largest) first; head >= kept
    m = 0
    # PERF: an expansion step costs 3-5 descent steps (a collide_task call each); where
    # most pairs die (thin links near contact) reaching the target could take the rest of
    # the query, so the expansion stops after 2 * target steps with the front it has
    steps = 0
    while True:
        if top > 0:
            got, top = collide_task(
                topo_a, bv_a, tris_a, ids_a, meta_a, scale_a, zero, Ta,
                topo_b, bv_b, tris_b, ids_b, meta_b, scale_b, zero, Tb,
                bv_kind, tri_test, mode, max_pairs,
                keys, found, max(zero, keys.shape[0] - found), stack, top, step_budget, stats, zero,
            )
            found += got
            if top > 0:
                if m + top > cap:  # compact: the live pairs fit (fewer than target + fan-out)
                    for i in range(head, m):
                        front[kept + i - head, 0] = front[i, 0]
                        front[kept + i - head, 1] = front[i, 1]
                    m -= head - kept
                    head = kept
                for i in range(top):
                    front[m, 0] = stack[i, 0]
                    front[m, 1] = stack[i, 1]
                    m += 1
        if (mode == MODE_ANY and found > 0) or head == m or kept + m - head >= target or steps >= 2 * target:
            break
        steps += 1
        # one expansion step: the oldest waiting pair, kept when both are leaves, else
        # tested and its children queued
        ia = front[head, 0]
        ib = front[head, 1]
        head += 1
        if (topo_a[ia, 2] & LEAF_FLAG) != 0 and (topo_b[ib, 2] & LEAF_FLAG) != 0:
            front[kept, 0] = ia
            front[kept, 1] = ib
            kept += 1
            top = zero
        else:
            stack[0, 0] = ia
            stack[0, 1] = ib
            top = np.int64(1)
            step_budget = np.int64(1)
    if mode == MODE_ANY and found > 0:
        return found, 0
    for i in range(head, m):
        front[kept + i - head, 0] = front[i, 0]
        front[kept + i - head, 1] = front[i, 1]
    return found, kept + m - head


@njit(cache=True)
def contacts_one(
    topo_a, bv_a, tris_a, ids_a, meta_a, scale_a, Ta,
    topo_b, bv_b, tris_b, ids_b, meta_b, scale_b, Tb,
    bv_kind, tri_test, mode, max_pairs, keys, budget, front, target, stats,
):
    """The per-call contacts entry: one pose pair, tree 0 of each pool; with a
    ``budget``, also the serial first part of a split pose (``query/engine.split_pose``).

    Writes the pair keys (face_a * faces_b + face_b) into ``keys`` while room
    lasts and adds the counters to ``stats`` (1, N_STATS). Returns ``(found, m)``,
    ``found`` as ``collide_task`` returns it (or a negative pose error, as
    ``intersect_one``), and:

    - ``m = 0``: the query is answered; its keys are sorted when they all fit (a
      count above ``len(keys)``, after the cap, means they did not: the caller
      reruns with exact room);
    - ``m > 0``: the descent spent ``budget`` work units, then ``_expand`` expanded the
      node pairs it left into ``front[0:m]`` (about ``target`` untested node pairs,
      local indices); the caller runs each as a task, and ``keys[0:found]`` holds the
      pairs found so far, unsorted. ``len(front)`` must be at least target + the stack
      size + the larger fan-out (checked), and ``keys`` must have room for ``budget``
      plus two leaf pairs' pairs, so what was found before the split always fits.

    Every node pair has one parent, so the pairs done here and the front partition
    the query: no triangle pair is lost or found twice.
    """
    ea = pose_error(Ta)
    if ea != 0:
        return -(1 + ea), 0
    eb = pose_error(Tb)
    if eb != 0:
        return -(11 + eb), 0
    n = stack_size(meta_a[0, META_DEPTH], meta_a[0, META_FANOUT], meta_b[0, META_DEPTH], meta_b[0, META_FANOUT])
    if budget < NO_BUDGET and front.shape[0] < target + n + max(meta_a[0, META_FANOUT], meta_b[0, META_FANOUT]):
        raise ValueError("contacts_one: front too small for target, stack and fan-out")
    stack = np.empty((n, 2), np.int32)
    stack[0, 0] = 0
    stack[0, 1] = 0
    found, m = _expand(
        topo_a, bv_a, tris_a, ids_a, meta_a, scale_a, Ta,
        topo_b, bv_b, tris_b, ids_b, meta_b, scale_b, Tb,
        bv_kind, tri_test, mode, max_pairs, keys, np.int64(0), stack, np.int64(1), budget, front, target, stats,
    )
    if m == 0:
        kept = found
        if max_pairs >= 0 and kept > max_pairs:
            kept = max_pairs
        if 1 < kept <= keys.shape[0]:
            keys[:kept].sort()
    return found, m


@njit(cache=True, nogil=True)
def join_rows(head, n_head, keys, starts, counts, out):
    """``out`` = sorted(head[0:n_head] and every task k's rows
    keys[starts[k] : starts[k] + counts[k]]): the rows of one split pose."""
    w = 0
    for i in range(n_head):
        out[w] = head[i]
        w += 1
    for k in range(starts.shape[0]):
        s = starts[k]
        for i in range(counts[k]):
            out[w] = keys[s + i]
            w += 1
    out[:w].sort()
    return w


@njit(cache=True, nogil=True)
def _run_chunk(
    c, nchunks,
    topo_a, bv_a, tris_a, ids_a, meta_a, scale_a, poses_a,
    topo_b, bv_b, tris_b, ids_b, meta_b, scale_b, poses_b,
    tasks, bv_kind, tri_test, mode, max_pairs,
    keys, chunk_cap, starts, counts, stats, shared,
):
    """Run chunk c's tasks, writing into keys[c*chunk_cap:(c+1)*chunk_cap].

    starts[k] = where task k's pairs begin in ``keys`` (or -1 when they did not
    fit: the caller reruns those tasks with exact room), counts[k] = pairs found.
    A task row is (tree a, tree b, pose a, pose b), optionally followed by the node
    pair its descent starts from (the front of a split pose; else the roots).

    ``shared`` says which tasks are chunk c's and when they stop:

    - empty: tasks c, c + nchunks, ... (static chunks);
    - ``[stop, next]``: dynamic: the chunk claims the next unclaimed task
      (``atomics.fetch_add`` on ``next``) until none is left, so a few costly tasks
      never leave the other threads idle (one worker chunk per thread; its key slice
      holds whatever it claims, or the task is rerun as usual). ``stop`` -1: the tasks
      are independent (a batch of poses); 0: they are parts of one boolean split pose
      and share an early exit: the first task that finds a pair sets it to 1 and later
      tasks are skipped (count 0).
    """
    n_stack = 2
    dynamic = shared.shape[0] > 1
    first = 0 if dynamic else c
    step = 1 if dynamic else nchunks
    for k in range(first, tasks.shape[0], step):
        ta = tasks[k, 0]
        tb = tasks[k, 1]
        n = stack_size(meta_a[ta, META_DEPTH], meta_a[ta, META_FANOUT], meta_b[tb, META_DEPTH], meta_b[tb, META_FANOUT])
        n_stack = max(n_stack, n)
    stack = np.empty((n_stack, 2), np.int32)
    cursor = c * chunk_cap
    end = cursor + chunk_cap
    shared_stop = dynamic and shared[0] >= 0
    starts_at = tasks.shape[1] > 4
    k = c
    while True:
        if dynamic:
            k = fetch_add(shared, 1, np.int64(1))
        if k >= tasks.shape[0]:
            break
        room = end - cursor
        found = 0
        # NOTE: the flag is only ever set to 1; a stale read costs work, never an answer
        if not (shared_stop and shared[0] > 0):
            stack[0, 0] = tasks[k, 4] if starts_at else 0
            stack[0, 1] = tasks[k, 5] if starts_at else 0
            found, _ = collide_task(
                topo_a, bv_a, tris_a, ids_a, meta_a, scale_a, tasks[k, 0], poses_a[tasks[k, 2]],
                topo_b, bv_b, tris_b, ids_b, meta_b, scale_b, tasks[k, 1], poses_b[tasks[k, 3]],
                bv_kind, tri_test, mode, max_pairs,
                keys, cursor, room, stack, np.int64(1), np.int64(NO_BUDGET), stats, k,
            )
            if shared_stop and found > 0 and mode == MODE_ANY:
                shared[0] = 1
        cursor = place_rows(keys, cursor, room, found, mode, max_pairs, starts, counts, k)
        if not dynamic:
            k += nchunks


@njit_driver(_run_chunk)
def query_serial(
    topo_a, bv_a, tris_a, ids_a, meta_a, scale_a, poses_a,
    topo_b, bv_b, tris_b, ids_b, meta_b, scale_b, poses_b,
    tasks, bv_kind, tri_test, mode, max_pairs,
    keys, chunk_cap, starts, counts, stats, shared, nchunks,
):
    """Batched query, serial: the same chunk layout as query_parallel."""
    args = (topo_a, bv_a, tris_a, ids_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, ids_b, meta_b, scale_b, poses_b, tasks, bv_kind, tri_test, mode, max_pairs, keys, chunk_cap, starts, counts, stats, shared)  # fmt: skip
    for c in range(nchunks):
        call_unlinked(_run_chunk, c, nchunks, args)  # kernels/core/unlinked.py


@njit_driver(_run_chunk, parallel=True)
def query_parallel(
    topo_a, bv_a, tris_a, ids_a, meta_a, scale_a, poses_a,
    topo_b, bv_b, tris_b, ids_b, meta_b, scale_b, poses_b,
    tasks, bv_kind, tri_test, mode, max_pairs,
    keys, chunk_cap, starts, counts, stats, shared, nchunks,
):
    """Batched query over numba threads. Tasks are interleaved over chunks
    (task k in chunk k mod nchunks) because colliding poses cost more than
    missing ones and neighbouring poses tend to collide together; early exit
    happens inside each task, never by breaking the parallel loop (a split
    boolean pose's tasks also poll a stop flag, and a split pose's tasks are
    claimed dynamically: ``shared``, ``_run_chunk``)."""
    args = (topo_a, bv_a, tris_a, ids_a, meta_a, scale_a, poses_a, topo_b, bv_b, tris_b, ids_b, meta_b, scale_b, poses_b, tasks, bv_kind, tri_test, mode, max_pairs, keys, chunk_cap, starts, counts, stats, shared)  # fmt: skip
    for c in prange(nchunks):
        call_unlinked(_run_chunk, np.int64(c), nchunks, args)  # kernels/core/unlinked.py


@njit(cache=True, nogil=True)
def validate_poses(poses_a, poses_b):
    """(side, index, code) of the first invalid pose (side 0 = a, 1 = b), or (-1, -1, 0)."""
    k, code = first_bad_pose(poses_a)
    if k >= 0:
        return 0, k, code
    k, code = first_bad_pose(poses_b)
    if k >= 0:
        return 1, k, code
    return -1, -1, 0


@njit(cache=True, nogil=True)
def gather_pairs(keys, starts, counts, max_pairs, faces_b, task_pose, out_pose, out_fa, out_fb, truncated):
    """Concatenate each task's sorted keys in task order into result columns."""
    w = 0
    for k in range(starts.shape[0]):
        n = counts[k]
        if max_pairs >= 0 and n > max_pairs:
            n = max_pairs
            truncated[k] = True
        s = starts[k]
        for i in range(n):
            key = keys[s + i]
            out_pose[w] = task_pose[k]
            out_fa[w] = key // faces_b
            out_fb[w] = key % faces_b
            w += 1
    return w
