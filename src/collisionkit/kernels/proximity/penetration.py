"""Exact penetration depth of two convex polytopes (separating-axis form).

For convex A and B the minimal translation of B that separates them is the
distance from the origin to the boundary of the Minkowski difference
A - B = {a - b} (Cameron & Culley 1986). Along a unit direction n, B must
move by f(n) = max_a a.n - min_b b.n (the support function of A - B), and
the depth is min f(n) over unit n, attained at a facet normal of A - B.
Every facet normal of A - B is a face normal of A, the reverse of a face
normal of B, or the cross product of an edge of A and an edge of B whose
arcs cross on the Gauss map (Gregorius 2013, "The separating axis test
between convex polyhedra"). Evaluating f on a superset of those normals and
taking the minimum is therefore exact: every other direction only gives a
larger f. This is the value EPA converges to; we compute it directly.

Gauss-map pruning of edge pairs keeps a pair whenever the float64 signs
are not clearly against it (a relative margin of 1e-9): pruning may keep
extra axes (harmless, f is only larger there) but never drops a facet
normal unless rounding flips a sign by more than that margin.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ..core.jit import njit, njit_internal
from ..core.linalg import relative_pose
from ..core.scaling import OUT_OF_BAND, in_band
from ..core.tri_rows import pose_code
from ..core.unlinked import call_unlinked, njit_driver


# inline: penetration per call ran 8% slower with its scan helpers as calls (issue 16).
@njit(cache=True, nogil=True, inline="always")
def _support_gap(VA, VB, nx, ny, nz):
    hi = -math.inf
    for i in range(VA.shape[0]):
        v = VA[i, 0] * nx + VA[i, 1] * ny + VA[i, 2] * nz
        if v > hi:
            hi = v
    lo = math.inf
    for i in range(VB.shape[0]):
        v = VB[i, 0] * nx + VB[i, 1] * ny + VB[i, 2] * nz
        if v < lo:
            lo = v
    return hi - lo


@njit(cache=True, nogil=True)
def convex_depth(VA, VB, NA, NB, EA, EB, out):
    """Minimal separating translation of hull B (vertices VB, in A's frame) from hull A.

    NA, NB: (F, 3) unit outward face normals; EA, EB: (E, 3, 3) rows per edge:
    direction, normal of one adjacent face, normal of the other (all in A's
    frame). Writes out = (depth, nx, ny, nz, axes tested): moving B by depth * n
    makes them touch. A depth <= 0 means they do not overlap (separating axis).
    """
    best = math.inf
    bx = 0.0
    by = 0.0
    bz = 0.0
    tested = 0
    for i in range(NA.shape[0]):
        f = _support_gap(VA, VB, NA[i, 0], NA[i, 1], NA[i, 2])
        tested += 1
        if f < best:
            best = f
            bx, by, bz = NA[i, 0], NA[i, 1], NA[i, 2]
    for i in range(NB.shape[0]):
        # facet of A - B from a face of B: normal -m
        f = _support_gap(VA, VB, -NB[i, 0], -NB[i, 1], -NB[i, 2])
        tested += 1
        if f < best:
            best = f
            bx, by, bz = -NB[i, 0], -NB[i, 1], -NB[i, 2]
    margin = 1e-9
    for i in range(EA.shape[0]):
        ex, ey, ez = EA[i, 0, 0], EA[i, 0, 1], EA[i, 0, 2]
        ax, ay, az = EA[i, 1, 0], EA[i, 1, 1], EA[i, 1, 2]
        bxx, byy, bzz = EA[i, 2, 0], EA[i, 2, 1], EA[i, 2, 2]
        # b x a (for the arc of A's edge)
        bax = byy * az - bzz * ay
        bay = bzz * ax - bxx * az
        baz = bxx * ay - byy * ax
        for j in range(EB.shape[0]):
            # B's normals reversed: Minkowski difference A - B
            cx, cy, cz = -EB[j, 1, 0], -EB[j, 1, 1], -EB[j, 1, 2]
            dx, dy, dz = -EB[j, 2, 0], -EB[j, 2, 1], -EB[j, 2, 2]
            dcx = dy * cz - dz * cy
            dcy = dz * cx - dx * cz
            dcz = dx * cy - dy * cx
            cba = cx * bax + cy * bay + cz * baz
            dba = dx * bax + dy * bay + dz * baz
            adc = ax * dcx + ay * dcy + az * dcz
            bdc = bxx * dcx + byy * dcy + bzz * dcz
            if cba * dba > margin or adc * bdc > margin or cba * bdc < -margin:
                continue
            fx, fy, fz = EB[j, 0, 0], EB[j, 0, 1], EB[j, 0, 2]
            nx = ey * fz - ez * fy
            ny = ez * fx - ex * fz
            nz = ex * fy - ey * fx
            L = math.sqrt(nx * nx + ny * ny + nz * nz)
            if not L > 1e-12:
                continue  # parallel edges: their facets are face normals, already tested
            nx /= L
            ny /= L
            nz /= L
            for sgn in (1.0, -1.0):
                f = _support_gap(VA, VB, sgn * nx, sgn * ny, sgn * nz)
                tested += 1
                if f < best:
                    best = f
                    bx, by, bz = sgn * nx, sgn * ny, sgn * nz
    out[0] = best
    out[1] = bx
    out[2] = by
    out[3] = bz
    out[4] = tested


# --------------------------------------------------------------------------- pruned form
#
# The same minimum over the same candidate axes, with two changes that make it
# cheap (module notes of query.penetration):
#
# * an edge pair whose Gauss arcs clearly cross gives f(n) = n.(p_a - p_b) in
#   O(1) (the two edges are the supports along n and -n); only pairs within the
#   rounding margin of the crossing test are evaluated by scanning the vertices;
# * an axis is skipped when a lower bound of f over it is above the best f found
#   so far (plus a slack for rounding). The bound: f(n) = h_A(n) + h_B(-n) with
#   h_B(-n) >= -n.c_B + r_B for a point c_B inside B whose distance to every face
#   plane of B is at least r_B (the hull's inner radius about c_B). For a face of
#   A, h_A(n) is the face's offset; for an edge of A, h_A(n) = n.p_a on its whole
#   arc, whose minimum over the arc is bounded below from its end normals.
#   Features are grouped in buckets (a cone on the Gauss map each, axis and
#   half-angle, and the smallest g = min over the feature of h_A(n) - n.c_A):
#   f >= g - max_{n in cone} n.(c_B - c_A) + r_B skips a whole bucket. Skipped
#   axes cannot hold the minimum: the result is the unpruned minimum.
#
# Packed hull (one float64 array per hull, built by query.penetration.pack_hull):
#   [0] nv, [1] nf, [2] ne, [3] nk, [4:7] inner point c, [7] inner radius r,
#   [8] size (largest absolute coordinate), [9] unused; then V (nv, 3); N (nf, 3)
#   unit outward face normals; D (nf,) face offsets max_v v.n; E (ne, 13): edge
#   direction, the two adjacent face normals, one endpoint, 1 / cos(half the arc
#   angle); K (nk, 10): cone axis, cos and sin of its half-angle, g, then the
#   bucket's faces [f0, f1) and edges [e0, e1) (features are stored by bucket).

HULL_HEADER = 10
EDGE_ROW = 13
BUCKET_ROW = 10


# inline: penetration per call ran 8% slower with its scan helpers as calls (issue 16).
@njit(cache=True, nogil=True, inline="always")
def _layout(H):
    nv = np.int64(H[0])
    nf = np.int64(H[1])
    ne = np.int64(H[2])
    nk = np.int64(H[3])
    ov = np.int64(HULL_HEADER)
    on = ov + 3 * nv
    od = on + 3 * nf
    oe = od + nf
    ok = oe + EDGE_ROW * ne
    return nv, nk, ov, on, od, oe, ok


def scratch_size(HA, HB) -> int:
    """Length of the float64 scratch buffer ``depth_pruned`` needs for these hulls."""
    return int(HA[3] + HB[3] + EDGE_ROW * HB[2])


# inline: penetration per call ran 8% slower with its scan helpers as calls (issue 16).
@njit(cache=True, nogil=True, inline="always")
def _scan(H, off, nv, dx, dy, dz):
    """max over the packed vertices of v . d."""
    hi = -math.inf
    for i in range(nv):
        k = off + 3 * i
        v = H[k] * dx + H[k + 1] * dy + H[k + 2] * dz
        if v > hi:
            hi = v
    return hi


# inline: penetration per call ran 8% slower with its scan helpers as calls (issue 16).
@njit(cache=True, nogil=True, inline="always")
def _arc_min(H, k, wx, wy, wz):
    """A lower bound of n . w over the Gauss arc of the edge row at H[k] (unit n on
    the arc between its two face normals): the smaller end value, divided by the
    arc's smallest normalisation (cos of half the arc) when negative."""
    m1 = H[k + 3] * wx + H[k + 4] * wy + H[k + 5] * wz
    m2 = H[k + 6] * wx + H[k + 7] * wy + H[k + 8] * wz
    m = min(m1, m2)
    if m < 0.0:
        m *= H[k + 12]
    return m


# inline: penetration per call ran 8% slower with its scan helpers as calls (issue 16).
@njit(cache=True, nogil=True, inline="always")
def _bucket_lb(H, k, dx, dy, dz, dn):
    """g - max over the bucket's cone of n . d (|d| = dn)."""
    if not dn > 0.0:
        return H[k + 5]
    cphi = (H[k] * dx + H[k + 1] * dy + H[k + 2] * dz) / dn
    if cphi >= H[k + 3]:
        return H[k + 5] - dn
    sphi = math.sqrt(max(0.0, 1.0 - cphi * cphi))
    return H[k + 5] - dn * (cphi * H[k + 3] + sphi * H[k + 4])


# LENGTH (~190 lines): face axes of A, face axes of B, then the pruned edge-edge axes, each
# keeping the best axis so far and stopping at the first separating one; the three loops
# share that running state and the mapped vertices in scratch.
@njit_internal(nogil=True)
def depth_pruned(HA, HB, R, t, scratch):
    """Minimal separating translation of packed hull B (at R, t in A's frame) from A.

    R is a row-major 9-tuple, t a 3-tuple (``linalg.relative_pose``); scratch a
    float64 buffer of ``scratch_size(HA, HB)``. Returns (depth, nx, ny, nz, axes
    evaluated) in A's frame; depth <= 0 means no overlap (it stops at the first
    such axis).
    """
    nva, nka, ova, ona, oda, oea, oka = _layout(HA)
    nvb, nkb, ovb, onb, odb, oeb, okb = _layout(HB)
    t0, t1, t2 = t[0], t[1], t[2]
    # B's inner point in A's frame, A's inner point in B's frame
    cbx = R[0] * HB[4] + R[1] * HB[5] + R[2] * HB[6] + t0
    cby = R[3] * HB[4] + R[4] * HB[5] + R[5] * HB[6] + t1
    cbz = R[6] * HB[4] + R[7] * HB[5] + R[8] * HB[6] + t2
    qx, qy, qz = HA[4] - t0, HA[5] - t1, HA[6] - t2
    cax = R[0] * qx + R[3] * qy + R[6] * qz
    cay = R[1] * qx + R[4] * qy + R[7] * qz
    caz = R[2] * qx + R[5] * qy + R[8] * qz
    ra = HA[7]
    rb = HB[7]
    # the other inner point seen from each hull's own
    gax, gay, gaz = cbx - HA[4], cby - HA[5], cbz - HA[6]
    gbx, gby, gbz = cax - HB[4], cay - HB[5], caz - HB[6]
    ga = math.sqrt(gax * gax + gay * gay + gaz * gaz)
    gb = math.sqrt(gbx * gbx + gby * gby + gbz * gbz)
    # bounds are compared with a slack far above their rounding error
    slack = 1e-9 * (HA[8] + HB[8] + abs(t0) + abs(t1) + abs(t2))
    tested = 0

    # bucket bounds; the faces of the lowest bucket first give a good starting best
    nk = nka + nkb
    lo = math.inf
    lo_k = np.int64(-1)
    for q in range(nk):
        if q < nka:
            lb = _bucket_lb(HA, oka + BUCKET_ROW * q, gax, gay, gaz, ga) + rb
        else:
            lb = _bucket_lb(HB, okb + BUCKET_ROW * (q - nka), gbx, gby, gbz, gb) + ra
        scratch[q] = lb
        if lb < lo:
            lo = lb
            lo_k = q
    best = math.inf
    bx = 0.0
    by = 0.0
    bz = 0.0
    for rnd in range(2):
        for q in range(nk):
            if rnd == 0 and q != lo_k:
                continue
            if rnd == 1 and (q == lo_k or scratch[q] > best + slack):
                continue
            if q < nka:
                k = oka + BUCKET_ROW * q
                for i in range(np.int64(HA[k + 6]), np.int64(HA[k + 7])):
                    k = ona + 3 * i
                    nx, ny, nz = HA[k], HA[k + 1], HA[k + 2]
                    if HA[oda + i] - (nx * cbx + ny * cby + nz * cbz) + rb > best + slack:
                        continue
                    # h_B(-n) = -n.t + max_vb (-(R^T n)).vb
                    mx = -(R[0] * nx + R[3] * ny + R[6] * nz)
                    my = -(R[1] * nx + R[4] * ny + R[7] * nz)
                    mz = -(R[2] * nx + R[5] * ny + R[8] * nz)
                    f = HA[oda + i] + _scan(HB, ovb, nvb, mx, my, mz) - (nx * t0 + ny * t1 + nz * t2)
                    tested += 1
                    if f < best:
                        best = f
                        bx, by, bz = nx, ny, nz
                        if best <= 0.0:
                            return best, bx, by, bz, tested
            else:
                k = okb + BUCKET_ROW * (q - nka)
                for j in range(np.int64(HB[k + 6]), np.int64(HB[k + 7])):
                    k = onb + 3 * j
                    mx, my, mz = HB[k], HB[k + 1], HB[k + 2]
                    if HB[odb + j] - (mx * cax + my * cay + mz * caz) + ra > best + slack:
                        continue
                    # axis n = -(R m): f = D_b + (R m).t + max_a (-(R m)).a
                    wx = R[0] * mx + R[1] * my + R[2] * mz
                    wy = R[3] * mx + R[4] * my + R[5] * mz
                    wz = R[6] * mx + R[7] * my + R[8] * mz
                    nx, ny, nz = -wx, -wy, -wz
                    f = HB[odb + j] + (wx * t0 + wy * t1 + wz * t2) + _scan(HA, ova, nva, nx, ny, nz)
                    tested += 1
                    if f < best:
                        best = f
                        bx, by, bz = nx, ny, nz
                        if best <= 0.0:
                            return best, bx, by, bz, tested

    # B's edges that can still beat `best`, mapped into A's frame (rows of 13 from `ks`)
    ks = nk
    nsb = 0
    for q in range(nkb):
        if scratch[nka + q] > best + slack:
            continue
        kq = okb + BUCKET_ROW * q
        for j in range(np.int64(HB[kq + 8]), np.int64(HB[kq + 9])):
            k = oeb + EDGE_ROW * j
            lb = _arc_min(HB, k, HB[k + 9] - cax, HB[k + 10] - cay, HB[k + 11] - caz) + ra
            if lb > best + slack:
                continue
            o = ks + EDGE_ROW * nsb
            for c in range(4):
                x, y, z = HB[k + 3 * c], HB[k + 3 * c + 1], HB[k + 3 * c + 2]
                scratch[o + 3 * c] = R[0] * x + R[1] * y + R[2] * z
                scratch[o + 3 * c + 1] = R[3] * x + R[4] * y + R[5] * z
                scratch[o + 3 * c + 2] = R[6] * x + R[7] * y + R[8] * z
            scratch[o + 9] += t0
            scratch[o + 10] += t1
            scratch[o + 11] += t2
            scratch[o + 12] = lb
            nsb += 1

    margin = 1e-9
    for q in range(nka):
        if scratch[q] > best + slack:
            continue
        kq = oka + BUCKET_ROW * q
        for i in range(np.int64(HA[kq + 8]), np.int64(HA[kq + 9])):
            k = oea + EDGE_ROW * i
            lb = _arc_min(HA, k, HA[k + 9] - cbx, HA[k + 10] - cby, HA[k + 11] - cbz) + rb
            if lb > best + slack:
                continue
            ex, ey, ez = HA[k], HA[k + 1], HA[k + 2]
            ax, ay, az = HA[k + 3], HA[k + 4], HA[k + 5]
            bxx, byy, bzz = HA[k + 6], HA[k + 7], HA[k + 8]
            px, py, pz = HA[k + 9], HA[k + 10], HA[k + 11]
            # b x a (for the arc of A's edge)
            bax = byy * az - bzz * ay
            bay = bzz * ax - bxx * az
            baz = bxx * ay - byy * ax
            for j in range(nsb):
                o = ks + EDGE_ROW * j
                if scratch[o + 12] > best + slack:
                    continue
                # B's normals reversed: Minkowski difference A - B
                cx, cy, cz = -scratch[o + 3], -scratch[o + 4], -scratch[o + 5]
                dx, dy, dz = -scratch[o + 6], -scratch[o + 7], -scratch[o + 8]
                dcx = dy * cz - dz * cy
                dcy = dz * cx - dx * cz
                dcz = dx * cy - dy * cx
                cba = cx * bax + cy * bay + cz * baz
                dba = dx * bax + dy * bay + dz * baz
                adc = ax * dcx + ay * dcy + az * dcz
                bdc = bxx * dcx + byy * dcy + bzz * dcz
                p1 = cba * dba
                p2 = adc * bdc
                p3 = cba * bdc
                if p1 > margin or p2 > margin or p3 < -margin:
                    continue
                fx, fy, fz = scratch[o], scratch[o + 1], scratch[o + 2]
                nx = ey * fz - ez * fy
                ny = ez * fx - ex * fz
                nz = ex * fy - ey * fx
                L = math.sqrt(nx * nx + ny * ny + nz * nz)
                if not L > 1e-12:
                    continue  # parallel edges: their facets are face normals, already tested
                nx /= L
                ny /= L
                nz /= L
                if p1 < -margin and p2 < -margin and p3 > margin:
                    # clearly crossing: n on A's arc (same side as its normals), the edges support
                    if nx * (ax + bxx) + ny * (ay + byy) + nz * (az + bzz) < 0.0:
                        nx, ny, nz = -nx, -ny, -nz
                    f = nx * (px - scratch[o + 9]) + ny * (py - scratch[o + 10]) + nz * (pz - scratch[o + 11])
                    tested += 1
                    if f < best:
                        best = f
                        bx, by, bz = nx, ny, nz
                else:
                    # within the rounding margin: evaluate both signs by scanning
                    for sgn in (1.0, -1.0):
                        ux, uy, uz = sgn * nx, sgn * ny, sgn * nz
                        mx = -(R[0] * ux + R[3] * uy + R[6] * uz)
                        my = -(R[1] * ux + R[4] * uy + R[7] * uz)
                        mz = -(R[2] * ux + R[5] * uy + R[8] * uz)
                        f = (
                            _scan(HA, ova, nva, ux, uy, uz)
                            + _scan(HB, ovb, nvb, mx, my, mz)
                            - (ux * t0 + uy * t1 + uz * t2)
                        )
                        tested += 1
                        if f < best:
                            best = f
                            bx, by, bz = ux, uy, uz
                if best <= 0.0:
                    return best, bx, by, bz, tested
    return best, bx, by, bz, tested


@njit(cache=True, nogil=True)
def penetration_one(HA, HB, Ta, Tb, u, error_rtol):
    """The per-call entry: (code, depth, error bound); the direction (world frame) into u (3,).

    code 0, a pose error: -(1 + code) for Ta, -(11 + code) for Tb
    (linalg.pose_error), or ``scaling.OUT_OF_BAND`` (nothing computed) when the
    pair must be prescaled (``query/scaling.py``). No overlap: depth 0 and a NaN direction. The error bound
    is ``error_rtol`` times the hulls' sizes plus each pose's largest translation.
    (PERF: returning a new array from a kernel costs ~0.9 us; the caller's costs 0.15.)
    """
    code = pose_code(Ta, Tb)
    if code != 0:
        return code, 0.0, 0.0
    if not in_band(HA[8] + HB[8], Ta, Tb):
        return OUT_OF_BAND, 0.0, 0.0
    R, t = relative_pose(Ta, Tb)
    scratch = np.empty(np.int64(HA[3] + HB[3] + EDGE_ROW * HB[2]))
    d, nx, ny, nz, _ = depth_pruned(HA, HB, R, t, scratch)
    sa = max(abs(Ta[0, 3]), abs(Ta[1, 3]), abs(Ta[2, 3]))
    sb = max(abs(Tb[0, 3]), abs(Tb[1, 3]), abs(Tb[2, 3]))
    err = error_rtol * (HA[8] + HB[8] + (sa + sb))
    if not d > 0.0:
        u[:] = math.nan
        return 0, 0.0, err
    u[0] = Ta[0, 0] * nx + Ta[0, 1] * ny + Ta[0, 2] * nz
    u[1] = Ta[1, 0] * nx + Ta[1, 1] * ny + Ta[1, 2] * nz
    u[2] = Ta[2, 0] * nx + Ta[2, 1] * ny + Ta[2, 2] * nz
    return 0, d, err


@njit_internal(nogil=True)
def _batch_chunk(c, nchunks, HA, HB, poses_a, poses_b, ia, ib, out):
    scratch = np.empty(np.int64(HA[3] + HB[3] + EDGE_ROW * HB[2]))
    for k in range(c, ia.shape[0], nchunks):
        Ta = poses_a[ia[k]]
        R, t = relative_pose(Ta, poses_b[ib[k]])
        d, nx, ny, nz, tested = depth_pruned(HA, HB, R, t, scratch)
        out[k, 0] = d
        out[k, 1] = Ta[0, 0] * nx + Ta[0, 1] * ny + Ta[0, 2] * nz
        out[k, 2] = Ta[1, 0] * nx + Ta[1, 1] * ny + Ta[1, 2] * nz
        out[k, 3] = Ta[2, 0] * nx + Ta[2, 1] * ny + Ta[2, 2] * nz
        out[k, 4] = tested


@njit_driver(_batch_chunk)
def penetration_serial(HA, HB, poses_a, poses_b, ia, ib, out, nchunks):
    """Rows out[k] = (depth, direction (world), axes evaluated) for pose pair k (validated poses)."""
    args = (HA, HB, poses_a, poses_b, ia, ib, out)  # fmt: skip
    for c in range(nchunks):
        call_unlinked(_batch_chunk, c, nchunks, args)  # kernels/core/unlinked.py


@njit_driver(_batch_chunk, parallel=True)
def penetration_parallel(HA, HB, poses_a, poses_b, ia, ib, out, nchunks):
    """penetration_serial over numba threads (poses interleaved over chunks)."""
    args = (HA, HB, poses_a, poses_b, ia, ib, out)  # fmt: skip
    for c in prange(nchunks):
        call_unlinked(_batch_chunk, np.int64(c), nchunks, args)  # kernels/core/unlinked.py
