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

from numba import njit


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
