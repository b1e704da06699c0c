"""The certified edge search of ``Robot.check_motion`` in one compiled call per edge (issue 30
item 4; the method and its proof: ``robot/motion.py``'s module notes).

Per edge (q0, q1) over the pairs of a ``_PairSet`` (P pairs, every one measured by the prepared
checker's arrays: ``checker._unpack``), the depth-first bisection of ``motion._search`` step
for step: the same points (t = 0, 1 and midpoints), the same bounds at each point (the links'
padded world boxes of ``kinematics._configurations``, the oriented boxes of
``oriented_bounds``, the distances of ``proximity._pair_distance`` searched below the same
upper bounds, in the same order), the same decisions and the same limits, so with exact
distances (shrink 1.0, ``limits[3]``) the answer and the counters are ``motion._search``'s
(``tests/test_robot_motion_compiled.py`` compares them on random edges). With shrink < 1 (the
default, ``motion.EDGE_SHRINK``) each distance is the descent's relative-error mode
(``proximity._pair_bound``) searched below u / sqrt(shrink): its certified lower bound is
the point's bound of the pair, its distance (two real points) says whether the pair is within
its threshold, the exact distance deciding where the two disagree; the proof of
``robot/motion.py`` takes any lower bounds, so answers stay certified, by other steps. What
it cannot answer (a pair outside the distance kernel's band of scales)
it returns as ``EDGE_FALLBACK``: the caller runs ``motion._search``.

Point storage: one slot per point, created when its segment is split (each midpoint once), its
bounds filled when a segment first reads it; the open pairs of the stacked segments live in one
pool used as a stack (a popped segment's list is the last live one).
"""

from __future__ import annotations

import math

import numpy as np

from ..broadphase.common import padded_box
from ..core.jit import njit, njit_internal
from .checker import H_BASE_LINK, PAIR_A, PAIR_B, PAIR_SELF, _unpack, link_poses_of
from .proximity import _pair_bound, distance_scratch

#: ``edge_search``'s status
EDGE_DONE = 0
EDGE_FALLBACK = 1


@njit(cache=True, nogil=True)
def oriented_bounds(T, a, b, lc, lh, oc, oh, slack, low, high):
    """Lower and upper bounds of every pair's distance from oriented boxes, at link poses T
    (L, 1, 4, 4) (one configuration in ``Robot.poses_and_boxes``'s layout). Pair p: link a[p] against link b[p] (b >= 0) or an object's
    world box (centre oc[p], half extents oh[p], the world's axes); lc, lh (L, 3) each link's
    local box (its mesh's bounds) centre and half extents. Writes low (P,), high (P,).

    Lower: the largest gap of the two boxes' projections on the six axes of their frames, less
    ``slack[p]``, at least 0; upper: |c_a - c_b| + |h_a| + |h_b| + slack[p] (module notes of
    ``robot/motion.py``, ``_PairSet._oriented``)."""
    for p in range(a.shape[0]):
        low[p], high[p] = oriented_pair(T, p, a, b, lc, lh, oc, oh, slack)


@njit_internal(nogil=True)
def _link_box(T, i, lc, lh):
    """Link i's local box (centre ``lc[i]``, half extents ``lh[i]``) at its pose ``T[i, 0]``:
    15 floats, the rotation (row-major), the world centre and the half extents. PERF:
    scalars only (a small array per pair cost ~0.3 us, a third of the call)."""
    r00, r01, r02, r03 = T[i, 0, 0, 0], T[i, 0, 0, 1], T[i, 0, 0, 2], T[i, 0, 0, 3]
    r10, r11, r12, r13 = T[i, 0, 1, 0], T[i, 0, 1, 1], T[i, 0, 1, 2], T[i, 0, 1, 3]
    r20, r21, r22, r23 = T[i, 0, 2, 0], T[i, 0, 2, 1], T[i, 0, 2, 2], T[i, 0, 2, 3]
    return (
        r00, r01, r02, r10, r11, r12, r20, r21, r22,
        r00 * lc[i, 0] + r01 * lc[i, 1] + r02 * lc[i, 2] + r03,
        r10 * lc[i, 0] + r11 * lc[i, 1] + r12 * lc[i, 2] + r13,
        r20 * lc[i, 0] + r21 * lc[i, 1] + r22 * lc[i, 2] + r23,
        lh[i, 0], lh[i, 1], lh[i, 2],
    )  # fmt: skip


@njit_internal(nogil=True)
def _push_segment(st, top, a, b, depth, off, cnt):
    """Push segment (point a, point b) at ``depth`` with its open pairs ``pool[off : off + cnt]``
    onto the search stack ``st`` (rows, 5) int64; returns the new top."""
    st[top, 0] = a
    st[top, 1] = b
    st[top, 2] = depth
    st[top, 3] = off
    st[top, 4] = cnt
    return top + 1


# inline: the one pair of ``oriented_bounds`` (its loop and ``edge_search``'s open pairs: the
# same arithmetic, so both paths see the same bounds)
@njit(cache=True, nogil=True, inline="always")
def oriented_pair(T, p, a, b, lc, lh, oc, oh, slack):
    """(low, high) of pair p (``oriented_bounds``)."""
    i = a[p]
    j = b[p]
    a00, a01, a02, a10, a11, a12, a20, a21, a22, ca0, ca1, ca2, ha0, ha1, ha2 = _link_box(T, i, lc, lh)
    if j >= 0:
        b00, b01, b02, b10, b11, b12, b20, b21, b22, cb0, cb1, cb2, hb0, hb1, hb2 = _link_box(T, j, lc, lh)
    else:
        b00, b01, b02 = 1.0, 0.0, 0.0
        b10, b11, b12 = 0.0, 1.0, 0.0
        b20, b21, b22 = 0.0, 0.0, 1.0
        cb0, cb1, cb2 = oc[p, 0], oc[p, 1], oc[p, 2]
        hb0, hb1, hb2 = oh[p, 0], oh[p, 1], oh[p, 2]
    dx = ca0 - cb0
    dy = ca1 - cb1
    dz = ca2 - cb2
    best = -math.inf
    for k in range(6):
        if k == 0:
            ux, uy, uz = a00, a10, a20
        elif k == 1:
            ux, uy, uz = a01, a11, a21
        elif k == 2:
            ux, uy, uz = a02, a12, a22
        elif k == 3:
            ux, uy, uz = b00, b10, b20
        elif k == 4:
            ux, uy, uz = b01, b11, b21
        else:
            ux, uy, uz = b02, b12, b22
        sep = abs(ux * dx + uy * dy + uz * dz)
        sep -= abs(ux * a00 + uy * a10 + uz * a20) * ha0
        sep -= abs(ux * a01 + uy * a11 + uz * a21) * ha1
        sep -= abs(ux * a02 + uy * a12 + uz * a22) * ha2
        sep -= abs(ux * b00 + uy * b10 + uz * b20) * hb0
        sep -= abs(ux * b01 + uy * b11 + uz * b21) * hb1
        sep -= abs(ux * b02 + uy * b12 + uz * b22) * hb2
        best = max(best, sep)
    na = math.sqrt(ha0 * ha0 + ha1 * ha1 + ha2 * ha2)
    nb = math.sqrt(hb0 * hb0 + hb1 * hb1 + hb2 * hb2)
    return max(best - slack[p], 0.0), math.sqrt(dx * dx + dy * dy + dz * dz) + na + nb + slack[p]


@njit(cache=True, nogil=True)
def _grow(x, n):
    """x (S, P) float64 in a larger (n, P) array (rows past S undefined)."""
    y = np.empty((n, x.shape[1]))
    # NOTE: loops, not y[: x.shape[0]] = x: an array's slice copy compiles numba's
    # shape-mismatch message (string formatting: ~3 CPU s of a first edge check, issue 32)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            y[i, j] = x[i, j]
    return y


# LENGTH: one edge's whole search (points, bounds, measurements, the stack) in locals and
# scratch arrays allocated once a call; ``motion._search`` is its line-by-line reference.
@njit(cache=True, nogil=True)
def edge_search(
    q0, q1, fb, wb, ib, topo, rows, pa, pb, rows_a, rows_b, obj_box, boxed, local, lc, lh, oc, oh,
    slack, thr, lam, cap, box_slack, limits, out,
):  # fmt: skip
    """The certified search of one edge (``motion._search``) over P pairs.

    q0, q1 : (dof,) float64 the edge's ends. fb, wb, ib, topo : the prepared checker's arrays.
    rows (P,) int64 each pair's row in the checker's pairs; pa, pb (P,) the pair's links (pb -1:
    an object); rows_a, rows_b (P,) their rows in ``boxed`` (-1: an object); obj_box (P, 6) the
    object's world box; boxed (M,) int64 the links with a mesh and local (M, 6) their bounds
    (lo xyz, hi xyz), box_slack the world boxes' relative padding (``Robot.poses_and_boxes``);
    lc, lh (L, 3), oc, oh (P, 3), slack (P,): ``oriented_bounds``; thr, lam, cap (P,) the
    pairs' thresholds, travel bounds over the edge and distance caps (``motion._Edge``);
    limits (4,) float64: max depth, max segments, witness gap, the distances' shrink
    (``_pair_bound``: 1.0 exact, ``motion._search``'s steps; < 1 the relative-error mode).

    Writes out (5 + dof,) float64: frontier, t_hit (inf: none), certified free (0/1),
    segments, distance calls, then the configuration at t_hit (the one measured there: the
    witness; untouched when there is none). Returns EDGE_DONE, or EDGE_FALLBACK (nothing
    decided: a pair outside the distance kernel's band of scales).
    """
    (
        base, parents, children, kinds, H, vsrc, vmul, vdepth,
        local_c, link_row, link_obb, obj_poses, obj_box_c, obj_obb, pairs, bv, tris, meta, scale,
    ) = _unpack(fb, wb, ib)  # fmt: skip
    P = rows.shape[0]
    M = boxed.shape[0]
    max_depth = np.int64(limits[0])
    max_segments = np.int64(limits[1])
    witness_gap = limits[2]
    shrink = limits[3]
    sqrt_shrink = math.sqrt(shrink)
    base_link = ib[H_BASE_LINK]
    dof = q0.shape[0]
    dq = q1 - q0
    # scratch of the distance descents (proximity.pair_distances')
    dstack, dlbs, _, drow, dstats = distance_scratch(rows, pairs, meta)
    # no contact points (``distance_task``): the search reads distances and triangle indices only
    dbuf = np.empty((0, 3))
    # kinematics scratch
    Q = np.empty((1, dof))
    values = np.zeros((parents.shape[0], 1))
    n_links = link_row.shape[0]
    poses = np.zeros((n_links, 1, 4, 4))
    lo_o = np.empty(P)
    hi_o = np.empty(P)
    wbox = np.empty((M, 6))
    # points: t, state (0: created, 1: bounds filled), bounds and measured state per pair
    cap_pts = 16  # PERF: grown on demand (most edges take under 16 points: less to allocate and zero)
    pt_t = np.empty(cap_pts)
    pt_done = np.zeros(cap_pts, np.int64)
    pt_lb = np.empty((cap_pts, P))
    pt_ub = np.empty((cap_pts, P))
    pt_low = np.empty((cap_pts, P))
    pt_ex = np.zeros((cap_pts, P))  # 1.0: the measured distance (less the slack)
    pt_hit = np.zeros((cap_pts, P))  # 1.0: measured within the threshold
    n_pts = np.int64(2)
    pt_t[0] = 0.0
    pt_t[1] = 1.0
    # poses of the last two points measured at (slot, pose buffer)
    TT = np.zeros((2, n_links, 1, 4, 4))  # link poses at the point each side reads
    slot = np.full(2, -1, np.int64)  # which point's poses TT[side] holds
    # the stack of segments (slot a, slot b, depth, pool offset, count) and the pool
    st = np.empty((2 * max_depth + 8, 5), np.int64)
    pool = np.empty((max_depth + 2) * P + P, np.int64)
    for p in range(P):
        pool[p] = p
    zero = np.int64(0)  # int64 values, not literals: _push_segment keeps one signature
    top = _push_segment(st, zero, zero, np.int64(1), zero, zero, P)  # the whole edge (points 0 and 1), every pair open
    pool_top = P
    keep = np.zeros(P, np.int64)
    seeds = np.full((P, 2), -1, np.int64)  # per pair, the closest triangle pair found last
    none = np.int64(-1)
    cand = np.empty(P, np.int64)
    cand_b = np.empty(P, np.int64)
    need_of = np.empty(P)
    la_of = np.empty(P)
    want = np.empty(P)
    frontier = 0.0
    prefix = True
    t_hit = math.inf
    segments = np.int64(0)
    calls = np.int64(0)
    while top > 0:
        top -= 1
        sa = st[top, 0]
        sb = st[top, 1]
        depth = st[top, 2]
        off = st[top, 3]
        cnt = st[top, 4]
        pool_top = off + cnt  # NOTE: lists above it belonged to popped segments
        ta = pt_t[sa]
        tb = pt_t[sb]
        if ta >= t_hit:
            continue
        if segments >= max_segments:
            break
        segments += 1
        # the two points' bounds (motion._Edge.point), on first use
        for s in (sa, sb):
            if pt_done[s] == 0:
                t = pt_t[s]
                for d in range(dof):
                    Q[0, d] = q1[d] if t == 1.0 else q0[d] + t * dq[d]
                link_poses_of(
                    Q, np.int64(0), vsrc, vdepth, vmul, base, base_link, parents, children, kinds, H, values, poses
                )
                for m in range(M):
                    wbox[m, 0], wbox[m, 1], wbox[m, 2], wbox[m, 3], wbox[m, 4], wbox[m, 5] = padded_box(
                        local, m, poses[boxed[m]], np.int64(0), box_slack
                    )
                # PERF: the bounds of the open pairs of the segment reading the point first
                # only: the root's are every pair, a midpoint's the list of the segment split
                # to make it (both halves share it; later segments read subsets of it)
                for i in range(cnt):
                    p = pool[off + i]
                    lo_o[p], hi_o[p] = oriented_pair(poses, p, pa, pb, lc, lh, oc, oh, slack)
                    ra = rows_a[p]
                    rb = rows_b[p]
                    g2 = 0.0
                    for e in range(3):
                        if rb >= 0:
                            blo = wbox[rb, e]
                            bhi = wbox[rb, 3 + e]
                        else:
                            blo = obj_box[p, e]
                            bhi = obj_box[p, 3 + e]
                        g = max(max(blo - wbox[ra, 3 + e], wbox[ra, e] - bhi), 0.0)
                        g2 += g * g
                    pt_lb[s, p] = max(math.sqrt(g2), lo_o[p])
                    pt_ub[s, p] = hi_o[p]
                    pt_low[s, p] = -1.0
                    pt_ex[s, p] = 0.0
                    pt_hit[s, p] = 0.0
                pt_done[s] = 1
        h = tb - ta
        hit_a = False
        hit_b = False
        nc = 0
        ncb = 0
        for i in range(cnt):
            p = pool[off + i]
            keep[i] = 0
            need = h * lam[p] + 2.0 * thr[p]
            if pt_lb[sa, p] + pt_lb[sb, p] > need:
                continue
            if pt_ub[sa, p] + pt_ub[sb, p] <= need:
                hit_a |= pt_ub[sa, p] <= thr[p]
                hit_b |= pt_ub[sb, p] <= thr[p]
                keep[i] = 1
                continue
            cand[nc] = i
            nc += 1
            need_of[p] = need
        # exact distances at A (motion._Edge.exact_many), then at B
        for side in range(2):
            s = sa if side == 0 else sb
            n_todo = nc if side == 0 else ncb
            lst = cand if side == 0 else cand_b
            for j in range(n_todo):
                p = pool[off + lst[j]]
                want[j] = need_of[p] - pt_lb[sb, p] if side == 0 else need_of[p] - la_of[p]
            # NOTE: as exact_many: one pass over the pairs to measure; with more than one, a
            # second for those still below their want (a search capped by ``cap``)
            n_first = 0
            for rep in range(2):
                if rep == 1 and n_first <= 1:
                    break
                for j in range(n_todo):
                    p = pool[off + lst[j]]
                    w = want[j]
                    if pt_ex[s, p] != 0.0 or pt_low[s, p] >= w:
                        continue
                    if rep == 0:
                        n_first += 1
                    # the point's poses, once per point in a row
                    T = TT[side]
                    if slot[side] != s:
                        t = pt_t[s]
                        for d in range(dof):
                            Q[0, d] = q1[d] if t == 1.0 else q0[d] + t * dq[d]
                        link_poses_of(
                            Q, np.int64(0), vsrc, vdepth, vmul, base, base_link, parents, children, kinds, H,
                            values, T,
                        )  # fmt: skip
                        slot[side] = s
                    u = min(max(w, 0.0) + 2.0 * slack[p], cap[p])
                    # PERF: with shrink < 1 searched below u / sqrt(shrink), so that nothing
                    # found there still bounds the distance by u (as the exact search's)
                    u = u / sqrt_shrink
                    r = rows[p]
                    bl = pairs[r, PAIR_B]
                    Ta = T[pairs[r, PAIR_A], 0]
                    Tb = T[bl, 0] if pairs[r, PAIR_SELF] != 0 else obj_poses[bl]
                    if u > 0.0:
                        # PERF: with shrink < 1, the closest pair found last for this pair (at
                        # another point of the edge) is measured first: a bound from the start
                        sja = seeds[p, 0] if shrink < 1.0 else none
                        sjb = seeds[p, 1] if shrink < 1.0 else none
                        d, lo = _pair_bound(
                            r, Ta, Tb, u, shrink, sja, sjb, pairs, meta, topo, bv, tris, scale, link_obb, obj_obb,
                            dstack, dlbs, dbuf, drow, dstats,
                        )  # fmt: skip
                        if shrink < 1.0 and d > thr[p] and lo <= thr[p]:
                            # EXACT: the approximate distance cannot say whether the pair is
                            # within its threshold: the exact one decides (the reference's hit)
                            calls += 1
                            d, lo = _pair_bound(
                                r, Ta, Tb, u, 1.0, sja, sjb, pairs, meta, topo, bv, tris, scale, link_obb, obj_obb,
                                dstack, dlbs, dbuf, drow, dstats,
                            )  # fmt: skip
                        if math.isfinite(d):
                            seeds[p, 0] = np.int64(drow[0, 7])
                            seeds[p, 1] = np.int64(drow[0, 8])
                    else:
                        d = math.inf
                        lo = u
                    if math.isnan(d):
                        return EDGE_FALLBACK
                    calls += 1
                    if math.isinf(d):
                        pt_low[s, p] = max(pt_low[s, p], lo - slack[p])
                    else:
                        # NOTE: with shrink < 1, d is a real pair of points' distance (a hit
                        # at d <= thr is real) and lo a certified lower bound (what certifies)
                        pt_ex[s, p] = 1.0
                        pt_hit[s, p] = 1.0 if d <= thr[p] else 0.0
                        pt_low[s, p] = max(lo - slack[p], 0.0)
            if side == 0:
                ncb = 0
                for j in range(nc):
                    i = cand[j]
                    p = pool[off + i]
                    need = need_of[p]
                    la = pt_low[sa, p]
                    hit_a |= pt_hit[sa, p] != 0.0
                    if la + pt_lb[sb, p] > need:
                        continue
                    if la + pt_ub[sb, p] <= need:
                        keep[i] = 1
                        continue
                    cand_b[ncb] = i
                    ncb += 1
                    la_of[p] = la
            else:
                for j in range(ncb):
                    i = cand_b[j]
                    p = pool[off + i]
                    hit_b |= pt_hit[sb, p] != 0.0
                    if la_of[p] + pt_low[sb, p] > need_of[p]:
                        continue
                    keep[i] = 1
        if hit_a:
            t_hit = min(t_hit, ta)
            prefix = False
            continue
        if hit_b:
            t_hit = min(t_hit, tb)
        nk = np.int64(0)
        for i in range(cnt):
            nk += keep[i]
        if nk == 0:
            if prefix and ta == frontier and not hit_b:
                frontier = tb
            prefix = prefix and not hit_b
            continue
        if depth >= max_depth or (t_hit < math.inf and h <= witness_gap):
            prefix = prefix and ta != frontier
            continue
        # split: the kept pairs (one list for both halves), right half pushed first
        koff = pool_top
        for i in range(cnt):
            if keep[i] != 0:
                pool[pool_top] = pool[off + i]
                pool_top += 1
        if n_pts >= pt_t.shape[0]:
            nn = 2 * pt_t.shape[0]
            t2 = np.empty(nn)
            d2 = np.zeros(nn, np.int64)
            for i in range(n_pts):  # NOTE: loops, not slice copies (_grow)
                t2[i] = pt_t[i]
                d2[i] = pt_done[i]
            pt_t = t2
            pt_done = d2
            pt_lb = _grow(pt_lb, nn)
            pt_ub = _grow(pt_ub, nn)
            pt_low = _grow(pt_low, nn)
            pt_ex = _grow(pt_ex, nn)
            pt_hit = _grow(pt_hit, nn)
        sm = n_pts
        n_pts += 1
        pt_t[sm] = 0.5 * (ta + tb)
        pt_done[sm] = 0
        top = _push_segment(st, top, sm, sb, depth + 1, koff, nk)
        top = _push_segment(st, top, sa, sm, depth + 1, koff, nk)
    out[0] = frontier
    out[1] = t_hit
    out[2] = 1.0 if (prefix and frontier == 1.0 and t_hit == math.inf) else 0.0
    out[3] = segments
    out[4] = calls
    if t_hit < math.inf:
        # the same expression as each point's configuration above: the witness is the
        # configuration whose distances were measured (``motion.check_motion``)
        for d in range(dof):
            out[5 + d] = q1[d] if t_hit == 1.0 else q0[d] + t_hit * dq[d]
    return EDGE_DONE
