"""CollisionSearch of seed 000 (listing 2): R-trees of surfaces and triangles
filtered by the overlap box (OAABB), single pose pair and batched.

Per pose pair (A = object a, B = object b; each has a surface tree SBV and
per surface a triangle tree TBV, built by ``rtree_build``):

1. move A's root box into B's frame (one box update) and test it against B's
   root box; stop if they miss (listing 2, lines 1-2);
2. the overlap box OAABB = their intersection, in B's frame (line 3);
3. walk B's surface tree, then the triangle tree of each surface that
   survives, keeping only nodes and triangles whose boxes meet the OAABB
   (lines 4-7);
4. map each surviving triangle of B into A's frame (``linalg.map_triangle``,
   the library's one mapping, so the coordinates are bit-identical to every
   other strategy's) and take its tight box (one box update; lines 8-9);
5. walk A's surface tree and the hit surfaces' triangle trees with that box
   (lines 10-12); 6. exact triangle test, Guigue & Devillers 2003 (line 13).

With ``use_obox = 0`` steps 2-3 are skipped: every triangle of B is mapped and
walked through A's trees (the seed's "without OAABB" column of table 1).

NOTE: filtering B's nodes by the OAABB is the same as filtering them by A's
mapped box (every node of B lies inside B's root box, so a node meets
A's box ∩ B's box iff it meets A's box); the OAABB costs one intersection.

Conservative volume tests (ARCHITECTURE.md, "Exactness"): the only inexact
boxes are A's root box mapped into B's frame and hence the OAABB; they are
grown by a slack covering the rounding of the mapping (64 units of roundoff of
the scene size, as the BVH traversal uses) plus the non-rigidity of the
float64 rotation (the inverse map uses R^T, off from R^-1 by about
max|R^T R - I| per unit length; poses are accepted up to 1e-6). Everything in
A's frame is exact: A's boxes are exact min/max of its float64 vertices, the
tight box of a mapped triangle is the exact min/max of the very coordinates
the triangle test uses. So the pairs found equal the brute-force pairs.

Counters per task (layout.STAT_*): bv_tests = box tests (the root test, B's
nodes and triangle entries against the OAABB, A's nodes and triangle entries
against a triangle's box), tri_tests = exact triangle tests, node_pairs =
nodes visited (popped) in all four walks, bv_updates = boxes moved between
frames (A's root box, then one per mapped triangle of B). With ``visits``
on (serial only), each visit also adds 1 to ``visits_a[node]`` /
``visits_b[node]`` (the seed claims each node of A is visited once).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ...constants import LEAF_FLAG, MODE_ANY, MODE_FIRST, MODE_SURFACE_PAIRS
from ..build.rtree import RT_CAPACITY, RT_DEPTH_S, RT_DEPTH_T, RT_FACES, RT_SURFACES
from ..core.jit import njit, njit_internal
from ..core.linalg import relative_pose
from ..core.tri_rows import mapped_box_row, tri_row
from ..core.unlinked import call_unlinked, njit_driver
from ..triangle.tri_tri import tri_tri_intersect_tuples
from .descent import _add_stats
from .rows import place_rows

_U = 2.0**-53


@njit_internal(nogil=True)
def stack_sizes(meta_a, meta_b):
    """Entries of the four walk stacks (B surfaces, B triangles, A surfaces, A
    triangles): a depth-first walk of a tree of depth D and fan-out m holds at
    most D * (m - 1) + 1 nodes."""
    ma = meta_a[RT_CAPACITY]
    mb = meta_b[RT_CAPACITY]
    return (
        meta_b[RT_DEPTH_S] * mb + 2,
        meta_b[RT_DEPTH_T] * mb + 2,
        meta_a[RT_DEPTH_S] * ma + 2,
        meta_a[RT_DEPTH_T] * ma + 2,
    )


# LENGTH (~230 lines): seed 000's CollisionSearch is two nested descents (surface trees, then
# triangle trees inside each surface pair) sharing one stack array and the early-exit and visit
# state; split into calls, each level would take the stack, marks and counters as array
# arguments (an atomic refcount each per call) in the innermost loop.
@njit(cache=True, nogil=True)
def oaabb_task(
    topo_a, box_a, sroot_a, sid_a, tbox_a, tris_a, fid_a, meta_a, scale_a, Ta,
    topo_b, box_b, sroot_b, sid_b, tbox_b, tris_b, fid_b, meta_b, scale_b, Tb,
    use_obox, tri_test, mode, max_pairs,
    keys, wpos, wcap, stack, mark, visits, visits_a, visits_b, stats, srow,
):
    """CollisionSearch for one pose pair (module docstring).

    Returns the pairs found: 0/1 in MODE_ANY and MODE_FIRST; in MODE_ALL the
    triangle pairs, in MODE_SURFACE_PAIRS the surface pairs (each once), or
    max_pairs + 1 when a cap (max_pairs >= 0) stopped the search. Keys are
    written to keys[wpos : wpos + wcap] while room lasts: face_a * faces_b +
    face_b (triangle modes) or surface_a * surfaces_b + surface_b (compact
    surface ids). ``stack`` holds the four walk stacks (sizes from
    ``stack_sizes``), ``mark`` (S_a,) int64 is scratch for MODE_SURFACE_PAIRS.

    PERF: scalars and tuples inside the loops; arrays only indexed.
    """
    R, t = relative_pose(Ta, Tb)
    faces_b = meta_b[RT_FACES]
    surfaces_b = meta_b[RT_SURFACES]
    n_sb, n_tb, n_sa, n_ta = stack_sizes(meta_a, meta_b)
    o_tb = n_sb
    o_sa = o_tb + n_tb
    o_ta = o_sa + n_sa
    surf_mode = mode == MODE_SURFACE_PAIRS
    if surf_mode:
        for p in range(mark.shape[0]):
            mark[p] = -1

    n_bv = np.int64(0)
    n_tri = np.int64(0)
    n_nodes = np.int64(0)
    n_upd = np.int64(0)
    found = 0

    # -- lines 1-2: A's root box into B's frame: p_B = R^T (p_A - t) ------------------
    # rigidity defect of the float64 rotation (bounds R^-1 - R^T)
    e = 0.0
    for i in range(3):
        for j in range(3):
            s = R[i] * R[j] + R[3 + i] * R[3 + j] + R[6 + i] * R[6 + j]
            if i == j:
                s -= 1.0
            e = max(e, abs(s))
    tn = abs(t[0]) + abs(t[1]) + abs(t[2])
    slack = 64.0 * _U * (scale_a[0] + scale_b[0] + tn) + 16.0 * e * (scale_a[0] + tn)
    cx = 0.5 * (box_a[0, 0] + box_a[0, 3]) - t[0]
    cy = 0.5 * (box_a[0, 1] + box_a[0, 4]) - t[1]
    cz = 0.5 * (box_a[0, 2] + box_a[0, 5]) - t[2]
    hx = 0.5 * (box_a[0, 3] - box_a[0, 0])
    hy = 0.5 * (box_a[0, 4] - box_a[0, 1])
    hz = 0.5 * (box_a[0, 5] - box_a[0, 2])
    mcx = R[0] * cx + R[3] * cy + R[6] * cz
    mcy = R[1] * cx + R[4] * cy + R[7] * cz
    mcz = R[2] * cx + R[5] * cy + R[8] * cz
    mhx = abs(R[0]) * hx + abs(R[3]) * hy + abs(R[6]) * hz + slack
    mhy = abs(R[1]) * hx + abs(R[4]) * hy + abs(R[7]) * hz + slack
    mhz = abs(R[2]) * hx + abs(R[5]) * hy + abs(R[8]) * hz + slack
    n_upd += 1
    n_bv += 1
    # -- line 3: the overlap box, in B's frame ------------------------------------------
    olx = max(mcx - mhx, box_b[0, 0])
    oly = max(mcy - mhy, box_b[0, 1])
    olz = max(mcz - mhz, box_b[0, 2])
    ohx = min(mcx + mhx, box_b[0, 3])
    ohy = min(mcy + mhy, box_b[0, 4])
    ohz = min(mcz + mhz, box_b[0, 5])
    if olx > ohx or oly > ohy or olz > ohz:
        _add_stats(stats, srow, n_bv, n_tri, n_nodes, n_upd)
        return 0
    filt = use_obox != 0

    # -- line 4: B's surface tree ------------------------------------------------------
    stack[0] = 0
    top_sb = 1
    while top_sb > 0:
        top_sb -= 1
        nb = stack[top_sb]
        n_nodes += 1
        if visits:
            visits_b[nb] += 1
        if filt and nb != 0:  # the root was tested against A's box above
            n_bv += 1
            if (
                box_b[nb, 0] > ohx or box_b[nb, 3] < olx
                or box_b[nb, 1] > ohy or box_b[nb, 4] < oly
                or box_b[nb, 2] > ohz or box_b[nb, 5] < olz
            ):  # fmt: skip
                continue
        first = topo_b[nb, 0]
        count = topo_b[nb, 1]
        if (topo_b[nb, 2] & LEAF_FLAG) == 0:
            for c in range(first + count - 1, first - 1, -1):
                stack[top_sb] = c
                top_sb += 1
            continue
        # -- lines 5-6: each surface q of this leaf, its triangle tree ------------------
        for q in range(first, first + count):
            stack[o_tb] = sroot_b[q]
            top_tb = 1
            while top_tb > 0:
                top_tb -= 1
                nt = stack[o_tb + top_tb]
                n_nodes += 1
                if visits:
                    visits_b[nt] += 1
                if filt:
                    n_bv += 1
                    if (
                        box_b[nt, 0] > ohx or box_b[nt, 3] < olx
                        or box_b[nt, 1] > ohy or box_b[nt, 4] < oly
                        or box_b[nt, 2] > ohz or box_b[nt, 5] < olz
                    ):  # fmt: skip
                        continue
                tfirst = topo_b[nt, 0]
                tcount = topo_b[nt, 1]
                if (topo_b[nt, 2] & LEAF_FLAG) == 0:
                    for c in range(tfirst + tcount - 1, tfirst - 1, -1):
                        stack[o_tb + top_tb] = c
                        top_tb += 1
                    continue
                # -- line 7: each triangle jb of the leaf meeting the OAABB --------------
                for jb in range(tfirst, tfirst + tcount):
                    if filt:
                        n_bv += 1
                        if (
                            tbox_b[jb, 0] > ohx or tbox_b[jb, 3] < olx
                            or tbox_b[jb, 1] > ohy or tbox_b[jb, 4] < oly
                            or tbox_b[jb, 2] > ohz or tbox_b[jb, 5] < olz
                        ):  # fmt: skip
                            continue
                    # -- lines 8-9: into A's frame, tight box ----------------------------
                    B, blx, bhx, bly, bhy, blz, bhz = mapped_box_row(R, t, tris_b, jb)
                    n_upd += 1
                    # -- line 10: A's surface tree with the triangle's box ---------------
                    stack[o_sa] = 0
                    top_sa = 1
                    while top_sa > 0:
                        top_sa -= 1
                        na = stack[o_sa + top_sa]
                        n_nodes += 1
                        if visits:
                            visits_a[na] += 1
                        n_bv += 1
                        if (
                            box_a[na, 0] > bhx or box_a[na, 3] < blx
                            or box_a[na, 1] > bhy or box_a[na, 4] < bly
                            or box_a[na, 2] > bhz or box_a[na, 5] < blz
                        ):  # fmt: skip
                            continue
                        afirst = topo_a[na, 0]
                        acount = topo_a[na, 1]
                        if (topo_a[na, 2] & LEAF_FLAG) == 0:
                            for c in range(afirst + acount - 1, afirst - 1, -1):
                                stack[o_sa + top_sa] = c
                                top_sa += 1
                            continue
                        # -- lines 11-12: each surface p, its triangle tree --------------
                        for p in range(afirst, afirst + acount):
                            if surf_mode and mark[p] == q:
                                continue  # (p, q) is already known to intersect
                            stack[o_ta] = sroot_a[p]
                            top_ta = 1
                            while top_ta > 0:
                                top_ta -= 1
                                nt_a = stack[o_ta + top_ta]
                                n_nodes += 1
                                if visits:
                                    visits_a[nt_a] += 1
                                n_bv += 1
                                if (
                                    box_a[nt_a, 0] > bhx or box_a[nt_a, 3] < blx
                                    or box_a[nt_a, 1] > bhy or box_a[nt_a, 4] < bly
                                    or box_a[nt_a, 2] > bhz or box_a[nt_a, 5] < blz
                                ):  # fmt: skip
                                    continue
                                f0 = topo_a[nt_a, 0]
                                f1 = f0 + topo_a[nt_a, 1]
                                if (topo_a[nt_a, 2] & LEAF_FLAG) == 0:
                                    for c in range(f1 - 1, f0 - 1, -1):
                                        stack[o_ta + top_ta] = c
                                        top_ta += 1
                                    continue
                                for ja in range(f0, f1):
                                    n_bv += 1
                                    if (
                                        tbox_a[ja, 0] > bhx or tbox_a[ja, 3] < blx
                                        or tbox_a[ja, 1] > bhy or tbox_a[ja, 4] < bly
                                        or tbox_a[ja, 2] > bhz or tbox_a[ja, 5] < blz
                                    ):  # fmt: skip
                                        continue
                                    A = tri_row(tris_a, ja)
                                    # -- line 13: exact triangle test ------------------------
                                    n_tri += 1
                                    if not tri_tri_intersect_tuples(A, B, tri_test):
                                        continue
                                    found += 1
                                    if mode == MODE_ANY:
                                        _add_stats(stats, srow, n_bv, n_tri, n_nodes, n_upd)
                                        return 1
                                    if surf_mode:
                                        key = np.int64(sid_a[p]) * surfaces_b + sid_b[q]
                                    else:
                                        key = np.int64(fid_a[ja]) * faces_b + fid_b[jb]
                                    if found <= wcap:
                                        keys[wpos + found - 1] = key
                                    if mode == MODE_FIRST or (max_pairs >= 0 and found > max_pairs):
                                        _add_stats(stats, srow, n_bv, n_tri, n_nodes, n_upd)
                                        return found
                                    if surf_mode:
                                        mark[p] = q
                                        top_ta = 0  # this surface pair is settled
                                        break
    _add_stats(stats, srow, n_bv, n_tri, n_nodes, n_upd)
    return found


@njit(cache=True, nogil=True)
def _run_chunk(
    c, nchunks,
    topo_a, box_a, sroot_a, sid_a, tbox_a, tris_a, fid_a, meta_a, scale_a, poses_a,
    topo_b, box_b, sroot_b, sid_b, tbox_b, tris_b, fid_b, meta_b, scale_b, poses_b,
    tasks, use_obox, tri_test, mode, max_pairs,
    keys, chunk_cap, starts, counts, stats, visits, visits_a, visits_b,
):
    """Tasks c, c + nchunks, ... into keys[c*chunk_cap : (c+1)*chunk_cap]; starts[k] = -1
    when task k's pairs did not fit (the caller reruns it with exact room)."""
    n_sb, n_tb, n_sa, n_ta = stack_sizes(meta_a, meta_b)
    stack = np.empty(n_sb + n_tb + n_sa + n_ta, np.int32)
    mark = np.empty(meta_a[RT_SURFACES], np.int64)
    cursor = c * chunk_cap
    end = cursor + chunk_cap
    for k in range(c, tasks.shape[0], nchunks):
        room = end - cursor
        found = oaabb_task(
            topo_a, box_a, sroot_a, sid_a, tbox_a, tris_a, fid_a, meta_a, scale_a, poses_a[tasks[k, 0]],
            topo_b, box_b, sroot_b, sid_b, tbox_b, tris_b, fid_b, meta_b, scale_b, poses_b[tasks[k, 1]],
            use_obox, tri_test, mode, max_pairs,
            keys, cursor, room, stack, mark, visits, visits_a, visits_b, stats, k,
        )  # fmt: skip
        cursor = place_rows(keys, cursor, room, found, mode, max_pairs, starts, counts, k)


@njit_driver(_run_chunk)
def oaabb_serial(
    topo_a, box_a, sroot_a, sid_a, tbox_a, tris_a, fid_a, meta_a, scale_a, poses_a,
    topo_b, box_b, sroot_b, sid_b, tbox_b, tris_b, fid_b, meta_b, scale_b, poses_b,
    tasks, use_obox, tri_test, mode, max_pairs,
    keys, chunk_cap, starts, counts, stats, visits, visits_a, visits_b, nchunks,
):
    """Batched CollisionSearch, serial (the chunk layout of oaabb_parallel)."""
    args = (topo_a, box_a, sroot_a, sid_a, tbox_a, tris_a, fid_a, meta_a, scale_a, poses_a, topo_b, box_b, sroot_b, sid_b, tbox_b, tris_b, fid_b, meta_b, scale_b, poses_b, tasks, use_obox, tri_test, mode, max_pairs, keys, chunk_cap, starts, counts, stats, visits, visits_a, visits_b)  # fmt: skip
    for c in range(nchunks):
        call_unlinked(_run_chunk, c, nchunks, args)  # kernels/core/unlinked.py


@njit_driver(_run_chunk, parallel=True)
def oaabb_parallel(
    topo_a, box_a, sroot_a, sid_a, tbox_a, tris_a, fid_a, meta_a, scale_a, poses_a,
    topo_b, box_b, sroot_b, sid_b, tbox_b, tris_b, fid_b, meta_b, scale_b, poses_b,
    tasks, use_obox, tri_test, mode, max_pairs,
    keys, chunk_cap, starts, counts, stats, visits, visits_a, visits_b, nchunks,
):
    """Batched CollisionSearch over numba threads: tasks interleaved over chunks
    (task k in chunk k mod nchunks), one chunk per prange iteration. Node
    visit counting (``visits``) is for the serial entry only (shared counters)."""
    args = (topo_a, box_a, sroot_a, sid_a, tbox_a, tris_a, fid_a, meta_a, scale_a, poses_a, topo_b, box_b, sroot_b, sid_b, tbox_b, tris_b, fid_b, meta_b, scale_b, poses_b, tasks, use_obox, tri_test, mode, max_pairs, keys, chunk_cap, starts, counts, stats, visits, visits_a, visits_b)  # fmt: skip
    for c in prange(nchunks):
        call_unlinked(_run_chunk, np.int64(c), nchunks, args)  # kernels/core/unlinked.py
