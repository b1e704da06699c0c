"""GJK (Gilbert, Johnson & Keerthi 1988) for pairs of convex shapes: boolean and distance.

Shapes reach the kernels as a *core* plus an inflation radius (van den Bergen
2003, "Collision Detection in Interactive 3D Environments", 4.3.5):

* ``SUPPORT_VERTICES``: the core is the convex hull of ``verts`` (V, 3): a
  polytope (Convex, Box), one point (Sphere: the centre) or two points
  (Capsule: the axis segment).
* ``SUPPORT_CYLINDER``: the core is a z-axis cylinder (p1 = radius, p2 = half
  height), whose support mapping is analytic.

The shape is the core grown by ``radius`` (0 for polytopes and cylinders), so
spheres and capsules converge like polytopes (their cores are polytopes).

Frames (ARCHITECTURE.md): everything happens in a's frame. b's support point is
found in b's frame (direction rotated by R^T) and the chosen core point is
mapped with the very arithmetic of ``linalg.map_triangle``, so a vertex of b
has bit-identical coordinates here, in the triangle tests and in the
containment test.

Exactness of the boolean (polytope pairs, radius 0): the float GJK only
decides when it can *certify* its answer with a margin of
``GJK_CERTIFY_REL * (scale_a + scale_b + |t|_1)`` (constants.py):

* separated: the lower bound v.w / |v| of the distance (w = support point of
  A - B in direction -v; a true lower bound for the hulls of the float64
  vertices) exceeds the margin;
* intersecting: the origin lies inside a tetrahedron of A - B support points
  at a depth above the margin plus a bound of the rounding of that depth, or
  the distance upper bound |v| is below ``radius - margin``.

Anything else (pairs within ~1e-12 relative of touching, degenerate
simplices, the iteration cap) goes to the exact test of the two closed solids
bounded by the hull triangles: any triangle pair intersecting
(``tri_tri.tri_tri_guigue_tuples``, exact Guigue-Devillers) or, failing
that, one solid containing a vertex of the other (exact ``orient3d`` against
every face). So for polytopes the boolean is the exact answer on the float64
vertices; the double hierarchy (``double_box.py``) uses the same definition
and agrees with it bit for bit. Pairs with a curved core (cylinder) are
decided by the GJK bounds alone: they count as touching within the margin.

The simplex sub-algorithm is Ericson's closest point on a triangle /
tetrahedron by Voronoi regions (Real-Time Collision Detection, 5.1.5-5.1.6).

PERF: the simplex helpers are plain calls (issue 16): inlined, gjk_core took 26 s of
CPU to compile; LLVM inlines the small ones and numba's reference-count pruning
removes the incref/decref of their array arguments.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ...constants import GJK_CERTIFY_REL, GJK_MAX_ITERS, GJK_REL_TOL
from ..core.jit import njit, njit_internal
from ..core.linalg import map_triangle, relative_pose, triangle_box
from ..core.predicates import orient3d
from ..core.tri_rows import box_misses, map_point, mapped_row, pose_code, tri_row
from ..core.unlinked import call_unlinked, njit_driver
from ..triangle.tri_tri import tri_tri_guigue_tuples

_U = 2.0**-53

SUPPORT_VERTICES = 0
SUPPORT_CYLINDER = 1

# Outcome codes of _gjk.
GJK_SEPARATED = 0
GJK_INTERSECTING = 1
GJK_UNDECIDED = 2

# Columns of the per-pose record of the batch kernels (int64 stats).
GJK_STAT_ITERS = 0  # support-mapping rounds
GJK_STAT_TRI_TESTS = 1  # exact triangle tests of the fallback
GJK_STAT_FALLBACK = 2  # 1 when the exact fallback decided
GJK_STAT_CERTIFIED = 3  # 1 when the float GJK decided


@njit_internal(nogil=True)
def _support_local(kind, verts, p1, p2, dx, dy, dz):
    """Support point of the core in its own frame for direction (dx, dy, dz)."""
    if kind == SUPPORT_CYLINDER:
        s = math.sqrt(dx * dx + dy * dy)
        if s > 0.0:
            x = p1 * dx / s
            y = p1 * dy / s
        else:
            x = 0.0
            y = 0.0
        z = p2 if dz >= 0.0 else -p2
        return x, y, z
    best = -math.inf
    k = 0
    for i in range(verts.shape[0]):
        s = verts[i, 0] * dx + verts[i, 1] * dy + verts[i, 2] * dz
        if s > best:
            best = s
            k = i
    return verts[k, 0], verts[k, 1], verts[k, 2]


@njit_internal(nogil=True)
def _support_b(kind, verts, p1, p2, R, t, dx, dy, dz):
    """b's support point for a's-frame direction d, mapped into a's frame like map_triangle."""
    lx = R[0] * dx + R[3] * dy + R[6] * dz
    ly = R[1] * dx + R[4] * dy + R[7] * dz
    lz = R[2] * dx + R[5] * dy + R[8] * dz
    x, y, z = _support_local(kind, verts, p1, p2, lx, ly, lz)
    return map_point(R, t, x, y, z)


@njit_internal(nogil=True)
def _dot(W, i, x, y, z):
    return W[i, 0] * x + W[i, 1] * y + W[i, 2] * z


@njit_internal(nogil=True)
def _diff(W, j, i):
    """W_j - W_i, 3 floats."""
    return W[j, 0] - W[i, 0], W[j, 1] - W[i, 1], W[j, 2] - W[i, 2]


@njit_internal(nogil=True)
def _closest_segment(W, i, j, lam):
    """Closest point of segment W_i W_j to the origin: barycentrics into lam."""
    ex, ey, ez = _diff(W, j, i)
    ee = ex * ex + ey * ey + ez * ez
    s = -_dot(W, i, ex, ey, ez)
    if s <= 0.0 or ee <= 0.0:
        lam[i] = 1.0
        lam[j] = 0.0
    elif s >= ee:
        lam[i] = 0.0
        lam[j] = 1.0
    else:
        u = s / ee
        lam[i] = 1.0 - u
        lam[j] = u


@njit_internal(nogil=True)
def _closest_triangle(W, i, j, k, lam):
    """Closest point of triangle W_i W_j W_k to the origin (Ericson 5.1.5, p = 0)."""
    abx, aby, abz = _diff(W, j, i)
    acx, acy, acz = _diff(W, k, i)
    d1 = -_dot(W, i, abx, aby, abz)
    d2 = -_dot(W, i, acx, acy, acz)
    lam[i] = 0.0
    lam[j] = 0.0
    lam[k] = 0.0
    if d1 <= 0.0 and d2 <= 0.0:
        lam[i] = 1.0
        return
    d3 = -_dot(W, j, abx, aby, abz)
    d4 = -_dot(W, j, acx, acy, acz)
    if d3 >= 0.0 and d4 <= d3:
        lam[j] = 1.0
        return
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        lam[i] = 1.0 - v
        lam[j] = v
        return
    d5 = -_dot(W, k, abx, aby, abz)
    d6 = -_dot(W, k, acx, acy, acz)
    if d6 >= 0.0 and d5 <= d6:
        lam[k] = 1.0
        return
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        lam[i] = 1.0 - w
        lam[k] = w
        return
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        lam[j] = 1.0 - w
        lam[k] = w
        return
    den = va + vb + vc
    if not den > 0.0:
        # Degenerate (collinear) triangle that slipped past the regions: the
        # closest of its three edges.
        best = math.inf
        bi = 0
        for e in range(3):
            p = i if e != 2 else j
            q = j if e == 0 else k
            _closest_segment(W, p, q, lam)
            x = lam[p] * W[p, 0] + lam[q] * W[q, 0]
            y = lam[p] * W[p, 1] + lam[q] * W[q, 1]
            z = lam[p] * W[p, 2] + lam[q] * W[q, 2]
            d = x * x + y * y + z * z
            if d < best:
                best = d
                bi = e
            lam[p] = 0.0
            lam[q] = 0.0
        p = i if bi != 2 else j
        q = j if bi == 0 else k
        _closest_segment(W, p, q, lam)
        return
    v = vb / den
    w = vc / den
    lam[i] = 1.0 - v - w
    lam[j] = v
    lam[k] = w


@njit_internal(nogil=True)
def _origin_outside(W, i, j, k, m):
    """Origin and W_m on opposite sides of plane W_i W_j W_k (or the tetra is flat)."""
    abx, aby, abz = _diff(W, j, i)
    acx, acy, acz = _diff(W, k, i)
    nx = aby * acz - abz * acy
    ny = abz * acx - abx * acz
    nz = abx * acy - aby * acx
    sp = -_dot(W, i, nx, ny, nz)
    sd = (W[m, 0] - W[i, 0]) * nx + (W[m, 1] - W[i, 1]) * ny + (W[m, 2] - W[i, 2]) * nz
    if sd == 0.0:
        return True
    return sp * sd < 0.0


@njit_internal(nogil=True)
def _closest_simplex(W, n, lam, tmp, force):
    """Barycentrics (into lam[:n]) of the point of conv(W[:n]) closest to the origin.

    Returns False when the origin lies inside the tetrahedron (n == 4);
    ``force`` != 0 takes the closest point of its boundary instead (used when
    an "inside" verdict on a flat tetrahedron cannot be trusted).
    """
    # int64 values, not literals: one compiled signature per helper
    i0 = np.int64(0)
    i1 = np.int64(1)
    i2 = np.int64(2)
    if n == 1:
        lam[0] = 1.0
        return True
    if n == 2:
        _closest_segment(W, i0, i1, lam)
        return True
    if n == 3:
        _closest_triangle(W, i0, i1, i2, lam)
        return True
    best = math.inf
    inside = True
    for f in range(4):
        # faces (0,1,2|3), (0,2,3|1), (0,3,1|2), (1,3,2|0)
        if f == 0:
            i, j, k, m = i0, i1, i2, np.int64(3)
        elif f == 1:
            i, j, k, m = i0, i2, np.int64(3), i1
        elif f == 2:
            i, j, k, m = i0, np.int64(3), i1, i2
        else:
            i, j, k, m = i1, np.int64(3), i2, i0
        if force == 0 and not _origin_outside(W, i, j, k, m):
            continue
        inside = False
        for q in range(4):
            tmp[q] = 0.0
        _closest_triangle(W, i, j, k, tmp)
        x = 0.0
        y = 0.0
        z = 0.0
        for q in range(4):
            x += tmp[q] * W[q, 0]
            y += tmp[q] * W[q, 1]
            z += tmp[q] * W[q, 2]
        d = x * x + y * y + z * z
        if d < best:
            best = d
            for q in range(4):
                lam[q] = tmp[q]
    if inside:
        for q in range(4):
            lam[q] = 0.25
    return not inside


@njit_internal(nogil=True)
def _tetra_depth_certified(W, margin, scale):
    """The origin is inside tetrahedron W[:4] deeper than ``margin`` from every
    face, allowing for the rounding of the computed depths."""
    for f in range(4):
        if f == 0:
            i, j, k, m = 0, 1, 2, 3
        elif f == 1:
            i, j, k, m = 0, 2, 3, 1
        elif f == 2:
            i, j, k, m = 0, 3, 1, 2
        else:
            i, j, k, m = 1, 3, 2, 0
        abx, aby, abz = _diff(W, j, i)
        acx, acy, acz = _diff(W, k, i)
        nx = aby * acz - abz * acy
        ny = abz * acx - abx * acz
        nz = abx * acy - aby * acx
        sd = (W[m, 0] - W[i, 0]) * nx + (W[m, 1] - W[i, 1]) * ny + (W[m, 2] - W[i, 2]) * nz
        if sd == 0.0:
            return False
        # n.(0 - W_i), signed so that it is > 0 when the origin is on W_m's side
        depth = -_dot(W, i, nx, ny, nz)
        if sd < 0.0:
            depth = -depth
        nn = math.sqrt(nx * nx + ny * ny + nz * nz)
        la = math.sqrt(abx * abx + aby * aby + abz * abz) + scale
        lc = math.sqrt(acx * acx + acy * acy + acz * acz) + scale
        lw = math.sqrt(W[i, 0] * W[i, 0] + W[i, 1] * W[i, 1] + W[i, 2] * W[i, 2]) + scale
        err = 64.0 * _U * la * lc * lw
        if not depth > margin * nn + err:
            return False
    return True


# LENGTH (~175 lines): the GJK iteration with its certification of the answer (boolean
# stop, distance bounds, stall and cycle checks) reads and writes the simplex and the bounds
# in every branch; the closest-point sub-problems are calls (_closest_simplex).
@njit(cache=True, nogil=True)
def gjk_core(
    kind_a, verts_a, pa1, pa2, kind_b, verts_b, pb1, pb2, R, t,
    radius, margin, scale, boolean, sim, out,
):
    """GJK on the cores of a and b (b at R, t in a's frame).

    Parameters
    ----------
    radius : float
        Sum of the two inflation radii: the shapes touch when the cores are
        ``radius`` apart.
    margin, scale : float
        Certification margin and the scene's size (see module docstring).
    boolean : int64
        Stop as soon as the answer is certified (intersects); else run to
        convergence (distance).
    sim : (4, 11) float64 scratch: columns 0-2 simplex points of A - B, 3-5 a's
        support points, 6-8 b's, 9 barycentrics, 10 scratch; reused per call.
    out : (8,) float64
        Written: core distance upper bound |v|, its lower bound, closest point
        on a's core (3), on b's core (3).

    Returns
    -------
    (code, iterations): GJK_SEPARATED / GJK_INTERSECTING (certified) or
    GJK_UNDECIDED (near touching, degenerate or out of iterations).
    """
    W = sim[:, 0:3]
    A = sim[:, 3:6]
    B = sim[:, 6:9]
    lam = sim[:, 9]
    tmp = sim[:, 10]  # scratch for the tetrahedron faces (same layout as lam: one signature)
    # Initial point of A - B: support points along the centre offset.
    dx = t[0]
    dy = t[1]
    dz = t[2]
    if dx * dx + dy * dy + dz * dz == 0.0:
        dx = 1.0
    ax, ay, az = _support_local(kind_a, verts_a, pa1, pa2, dx, dy, dz)
    bx, by, bz = _support_b(kind_b, verts_b, pb1, pb2, R, t, -dx, -dy, -dz)
    vx = ax - bx
    vy = ay - by
    vz = az - bz
    pax, pay, paz = ax, ay, az
    pbx, pby, pbz = bx, by, bz
    # the initial point is the first simplex vertex, so |v| decreases monotonically
    W[0, 0] = vx
    W[0, 1] = vy
    W[0, 2] = vz
    A[0, 0] = ax
    A[0, 1] = ay
    A[0, 2] = az
    B[0, 0] = bx
    B[0, 1] = by
    B[0, 2] = bz
    lam[0] = 1.0
    n = 1
    lower = 0.0
    code = GJK_UNDECIDED
    it = 0
    done = False
    while it < GJK_MAX_ITERS:
        it += 1
        vv = vx * vx + vy * vy + vz * vz
        if vv == 0.0:
            break  # origin on the simplex: touching or intersecting, undecided here
        ax, ay, az = _support_local(kind_a, verts_a, pa1, pa2, -vx, -vy, -vz)
        bx, by, bz = _support_b(kind_b, verts_b, pb1, pb2, R, t, vx, vy, vz)
        wx = ax - bx
        wy = ay - by
        wz = az - bz
        vw = vx * wx + vy * wy + vz * wz
        if vw > 0.0:
            lb = vw / math.sqrt(vv)
            if lb > lower:
                lower = lb
            if boolean != 0 and lower > radius + margin:
                code = GJK_SEPARATED
                done = True
                break
        # Converged: no support point gets closer than |v| (relative tolerance).
        if vv - vw <= GJK_REL_TOL * vv:
            break
        dup = False
        for q in range(n):
            if W[q, 0] == wx and W[q, 1] == wy and W[q, 2] == wz:
                dup = True
        if dup:
            break
        W[n, 0] = wx
        W[n, 1] = wy
        W[n, 2] = wz
        A[n, 0] = ax
        A[n, 1] = ay
        A[n, 2] = az
        B[n, 0] = bx
        B[n, 1] = by
        B[n, 2] = bz
        n += 1
        outside = _closest_simplex(W, n, lam, tmp, np.int64(0))
        if not outside and (boolean != 0 or lower > margin) and not _tetra_depth_certified(W, margin, scale):
            # "Inside" a flat tetrahedron or within the margin of a face: not
            # trusted by the boolean (the bounds or the exact fallback decide),
            # nor by the distance when a positive lower bound contradicts it;
            # continue from the closest boundary point instead.
            outside = _closest_simplex(W, n, lam, tmp, np.int64(1))
        if not outside:
            # Origin inside the tetrahedron, certified: the cores overlap.
            code = GJK_INTERSECTING
            vx = 0.0
            vy = 0.0
            vz = 0.0
            pax = 0.0
            pay = 0.0
            paz = 0.0
            pbx = 0.0
            pby = 0.0
            pbz = 0.0
            for q in range(4):
                pax += lam[q] * A[q, 0]
                pay += lam[q] * A[q, 1]
                paz += lam[q] * A[q, 2]
                pbx += lam[q] * B[q, 0]
                pby += lam[q] * B[q, 1]
                pbz += lam[q] * B[q, 2]
            done = True
            break
        # new v and the reduced simplex (keep the points with weight > 0)
        nvx = 0.0
        nvy = 0.0
        nvz = 0.0
        m = 0
        for q in range(n):
            if lam[q] > 0.0:
                nvx += lam[q] * W[q, 0]
                nvy += lam[q] * W[q, 1]
                nvz += lam[q] * W[q, 2]
                if m != q:
                    for c in range(9):
                        sim[m, c] = sim[q, c]
                    lam[m] = lam[q]
                m += 1
        n = m
        nv = nvx * nvx + nvy * nvy + nvz * nvz
        if nv >= vv:
            break  # no progress: v is as close as float64 gets
        vx = nvx
        vy = nvy
        vz = nvz
        pax = 0.0
        pay = 0.0
        paz = 0.0
        pbx = 0.0
        pby = 0.0
        pbz = 0.0
        for q in range(n):
            pax += lam[q] * A[q, 0]
            pay += lam[q] * A[q, 1]
            paz += lam[q] * A[q, 2]
            pbx += lam[q] * B[q, 0]
            pby += lam[q] * B[q, 1]
            pbz += lam[q] * B[q, 2]
    upper = math.sqrt(vx * vx + vy * vy + vz * vz)
    if not done:
        if upper < radius - margin:
            code = GJK_INTERSECTING
        elif lower > radius + margin:
            code = GJK_SEPARATED
    out[0] = upper
    out[1] = lower
    out[2] = pax
    out[3] = pay
    out[4] = paz
    out[5] = pbx
    out[6] = pby
    out[7] = pbz
    return code, it


# --- the exact fallback: closed solids bounded by hull triangles ------------------------


@njit(cache=True, nogil=True)
def point_in_solid(tris, px, py, pz):
    """The point lies in the closed convex solid bounded by the outward triangles (exact).

    Exact orientation of p against every face plane: inside or on every plane.
    """
    for i in range(tris.shape[0]):
        T = tri_row(tris, i)
        if orient3d(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], px, py, pz) > 0.0:
            return False
    return True


@njit_internal(nogil=True)
def point_in_mapped_solid(tris, R, t, px, py, pz):
    """``point_in_solid`` against b's triangles mapped by (R, t) as map_triangle maps them."""
    for i in range(tris.shape[0]):
        T = mapped_row(R, t, tris, i)
        if orient3d(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], px, py, pz) > 0.0:
            return False
    return True


@njit_internal(nogil=True)
def exact_solids_intersect(tris_a, tris_b, R, t, counter):
    """Do the closed convex solids bounded by tris_a and by tris_b (mapped by R, t) meet?

    Exact: some triangle pair intersects (closed triangles, exact test), or
    one solid contains a vertex of the other (then, the surfaces being
    disjoint, it contains the whole other solid). ``counter[0]`` += triangle tests.
    """
    nb = tris_b.shape[0]
    mb = np.empty((nb, 9))
    for j in range(nb):
        B = mapped_row(R, t, tris_b, j)
        for c in range(9):
            mb[j, c] = B[c]
    ntests = 0
    for i in range(tris_a.shape[0]):
        A = tri_row(tris_a, i)
        alx, ahx, aly, ahy, alz, ahz = triangle_box(A)
        for j in range(nb):
            B = (mb[j, 0], mb[j, 1], mb[j, 2], mb[j, 3], mb[j, 4], mb[j, 5], mb[j, 6], mb[j, 7], mb[j, 8])
            if box_misses(B, alx, ahx, aly, ahy, alz, ahz):
                continue
            ntests += 1
            if tri_tri_guigue_tuples(A, B):
                counter[0] += ntests
                return True
    counter[0] += ntests
    if point_in_solid(tris_a, mb[0, 0], mb[0, 1], mb[0, 2]):
        return True
    return point_in_mapped_solid(tris_b, R, t, tris_a[0, 0, 0], tris_a[0, 0, 1], tris_a[0, 0, 2])


@njit(cache=True, nogil=True)
def exact_convex_pair(tris_a, tris_b, Ta, Tb):
    """The exact solid test alone for one pose pair (the referee of benchmarks and tests)."""
    R, t = relative_pose(Ta, Tb)
    counter = np.zeros(1, np.int64)
    return exact_solids_intersect(tris_a, tris_b, R, t, counter)


# --- entries -------------------------------------------------------------------------------------


@njit_internal(nogil=True)
def _scale_of(kind, verts, p1, p2, radius):
    """Largest absolute coordinate of the shape's core, plus its radius."""
    if kind == SUPPORT_CYLINDER:
        return max(p1, p2) + radius
    m = 0.0
    for i in range(verts.shape[0]):
        for c in range(3):
            m = max(m, abs(verts[i, c]))
    return m + radius


@njit_internal(nogil=True)
def intersect_convex_convex(
    kind_a, verts_a, params_a, tris_a, scale_a, Ta,
    kind_b, verts_b, params_b, tris_b, scale_b, Tb,
    sim, out, stat,
):
    """Boolean for one pose pair; the GJK statistics go to ``stat`` (4,) int64.

    ``params`` = (inflation radius, p1, p2, exact flag): p1, p2 are the
    cylinder's radius and half height; the exact flag (1.0) says the shape is
    a polytope whose hull triangles ``tris`` bound it (used by the fallback).
    """
    R, t = relative_pose(Ta, Tb)
    radius = params_a[0] + params_b[0]
    scale = scale_a + scale_b + abs(t[0]) + abs(t[1]) + abs(t[2])
    margin = GJK_CERTIFY_REL * scale
    code, it = gjk_core(
        kind_a, verts_a, params_a[1], params_a[2], kind_b, verts_b, params_b[1], params_b[2],
        R, t, radius, margin, scale, np.int64(1), sim, out,
    )  # fmt: skip
    stat[GJK_STAT_ITERS] += it
    if code == GJK_SEPARATED:
        stat[GJK_STAT_CERTIFIED] += 1
        return False
    if code == GJK_INTERSECTING:
        stat[GJK_STAT_CERTIFIED] += 1
        return True
    if params_a[3] == 1.0 and params_b[3] == 1.0:
        stat[GJK_STAT_FALLBACK] += 1
        counter = stat[GJK_STAT_TRI_TESTS : GJK_STAT_TRI_TESTS + 1]
        return exact_solids_intersect(tris_a, tris_b, R, t, counter)
    # a curved core: touching within the margin counts
    return out[0] <= radius + margin


@njit(cache=True)
def gjk_intersect_one(
    kind_a, verts_a, params_a, tris_a, scale_a, Ta,
    kind_b, verts_b, params_b, tris_b, scale_b, Tb, stat,
):
    """The per-call boolean entry (poses validated by the caller); counters added to stat (4,)."""
    sim = np.empty((4, 11))
    out = np.empty(8)
    return intersect_convex_convex(
        kind_a, verts_a, params_a, tris_a, scale_a, Ta,
        kind_b, verts_b, params_b, tris_b, scale_b, Tb, sim, out, stat,
    )  # fmt: skip


@njit(cache=True)
def gjk_intersect_call(
    kind_a, verts_a, params_a, tris_a, scale_a, Ta,
    kind_b, verts_b, params_b, tris_b, scale_b, Tb,
):
    """The public per-call boolean: validates both poses, then 1 / 0, or
    -(1 + code) for a bad Ta and -(11 + code) for a bad Tb (codes of
    ``linalg.pose_error``), like ``bvh_traverse.intersect_one``."""
    code = pose_code(Ta, Tb)
    if code != 0:
        return code
    stat = np.zeros(4, np.int64)
    hit = gjk_intersect_one(
        kind_a, verts_a, params_a, tris_a, scale_a, Ta,
        kind_b, verts_b, params_b, tris_b, scale_b, Tb, stat,
    )  # fmt: skip
    return 1 if hit else 0


@njit(cache=True, nogil=True)
def distance_convex_convex(
    kind_a, verts_a, params_a, scale_a, Ta,
    kind_b, verts_b, params_b, scale_b, Tb,
    sim, out,
):
    """Distance between two convex shapes and their closest points, in a's frame.

    Returns the distance (0.0 when the shapes overlap; the closest points are
    then one point of the overlap, approximately). ``out[2:5]`` and
    ``out[5:8]`` receive the closest points on a and on b (in a's frame,
    inflation radii applied). Accuracy: GJK's relative tolerance
    (constants.GJK_REL_TOL) on the core distance.

    This is the kernel API other queries call (distance, issue 7): cores as
    (kind, verts, params) as built by ``convex.shapes``.
    """
    R, t = relative_pose(Ta, Tb)
    radius = params_a[0] + params_b[0]
    scale = scale_a + scale_b + abs(t[0]) + abs(t[1]) + abs(t[2])
    margin = GJK_CERTIFY_REL * scale
    gjk_core(
        kind_a, verts_a, params_a[1], params_a[2], kind_b, verts_b, params_b[1], params_b[2],
        R, t, radius, margin, scale, np.int64(0), sim, out,
    )  # fmt: skip
    d = out[0]
    if d <= radius:
        # overlapping (cores closer than the radii): distance 0
        return 0.0
    # move the core points out to the inflated surfaces along the core offset
    ux = (out[5] - out[2]) / d
    uy = (out[6] - out[3]) / d
    uz = (out[7] - out[4]) / d
    ra = params_a[0]
    rb = params_b[0]
    out[2] += ra * ux
    out[3] += ra * uy
    out[4] += ra * uz
    out[5] -= rb * ux
    out[6] -= rb * uy
    out[7] -= rb * uz
    return d - radius


@njit_internal(nogil=True)
def _gjk_chunk(
    c, nchunks, kind_a, verts_a, params_a, tris_a, scale_a, poses_a,
    kind_b, verts_b, params_b, tris_b, scale_b, poses_b, ia, ib, distance, hit, dist, points, stats,
):
    sim = np.empty((4, 11))
    out = np.empty(8)
    for k in range(c, ia.shape[0], nchunks):
        if distance:
            d = distance_convex_convex(
                kind_a, verts_a, params_a, scale_a, poses_a[ia[k]],
                kind_b, verts_b, params_b, scale_b, poses_b[ib[k]], sim, out,
            )  # fmt: skip
            dist[k] = d
            for q in range(6):
                points[k, q] = out[2 + q]
            hit[k] = d == 0.0
        else:
            hit[k] = intersect_convex_convex(
                kind_a, verts_a, params_a, tris_a, scale_a, poses_a[ia[k]],
                kind_b, verts_b, params_b, tris_b, scale_b, poses_b[ib[k]], sim, out, stats[k],
            )  # fmt: skip


@njit_driver(_gjk_chunk)
def gjk_batch_serial(
    kind_a, verts_a, params_a, tris_a, scale_a, poses_a,
    kind_b, verts_b, params_b, tris_b, scale_b, poses_b, ia, ib, distance, hit, dist, points, stats, nchunks,
):
    """Boolean (distance False) or distance for each task k = (poses_a[ia[k]], poses_b[ib[k]]),
    chunk after chunk (the layout of ``gjk_batch_parallel``)."""
    args = (kind_a, verts_a, params_a, tris_a, scale_a, poses_a, kind_b, verts_b, params_b, tris_b, scale_b, poses_b, ia, ib, distance, hit, dist, points, stats)  # fmt: skip
    for c in range(nchunks):
        call_unlinked(_gjk_chunk, c, nchunks, args)  # kernels/core/unlinked.py


@njit_driver(_gjk_chunk, parallel=True)
def gjk_batch_parallel(
    kind_a, verts_a, params_a, tris_a, scale_a, poses_a,
    kind_b, verts_b, params_b, tris_b, scale_b, poses_b, ia, ib, distance, hit, dist, points, stats, nchunks,
):
    """``gjk_batch_serial`` over numba threads (tasks interleaved over chunks)."""
    args = (kind_a, verts_a, params_a, tris_a, scale_a, poses_a, kind_b, verts_b, params_b, tris_b, scale_b, poses_b, ia, ib, distance, hit, dist, points, stats)  # fmt: skip
    for c in prange(nchunks):
        call_unlinked(_gjk_chunk, np.int64(c), nchunks, args)  # kernels/core/unlinked.py


# --- convex solid against a mesh surface: a mesh triangle inside the solid -------------------


@njit(cache=True, nogil=True)
def mesh_vertex_inside(tris_c, verts_m, Ta, Tb, convex_is_a, mapped):
    """Does some vertex of the mesh lie in the closed convex solid (exact)?

    Frames as the triangle tests see them: b is mapped into a's frame by
    ``map_triangle``'s arithmetic. convex_is_a = 1: the convex shape is a, the
    mesh vertices are mapped; 0: the mesh is a, the convex triangles are mapped
    (into ``mapped``, (F, 9) scratch).
    """
    R, t = relative_pose(Ta, Tb)
    nf = tris_c.shape[0]
    lox = math.inf
    loy = math.inf
    loz = math.inf
    hix = -math.inf
    hiy = -math.inf
    hiz = -math.inf
    for i in range(nf):
        if convex_is_a == 1:
            T = tri_row(tris_c, i)
        else:
            T = mapped_row(R, t, tris_c, i)
            for c in range(9):
                mapped[i, c] = T[c]
        for v in range(3):
            lox = min(lox, T[3 * v])
            hix = max(hix, T[3 * v])
            loy = min(loy, T[3 * v + 1])
            hiy = max(hiy, T[3 * v + 1])
            loz = min(loz, T[3 * v + 2])
            hiz = max(hiz, T[3 * v + 2])
    for k in range(verts_m.shape[0]):
        x = verts_m[k, 0]
        y = verts_m[k, 1]
        z = verts_m[k, 2]
        if convex_is_a == 1:
            P = map_triangle(R, t, x, y, z, x, y, z, x, y, z)
            x = P[0]
            y = P[1]
            z = P[2]
        if x < lox or x > hix or y < loy or y > hiy or z < loz or z > hiz:
            continue
        inside = True
        for i in range(nf):
            if convex_is_a == 1:
                T = tri_row(tris_c, i)
            else:
                T = (
                    mapped[i, 0], mapped[i, 1], mapped[i, 2], mapped[i, 3], mapped[i, 4],
                    mapped[i, 5], mapped[i, 6], mapped[i, 7], mapped[i, 8],
                )  # fmt: skip
            if orient3d(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], x, y, z) > 0.0:
                inside = False
                break
        if inside:
            return True
    return False


@njit(cache=True, nogil=True, parallel=True)
def mesh_vertices_in_solid(tris_c, verts_m, poses_a, poses_b, ia, ib, convex_is_a, todo, out):
    """out[k] = some mesh vertex lies in the convex solid, for each task k in ``todo``."""
    for q in prange(todo.shape[0]):
        k = todo[q]
        mapped = np.empty((tris_c.shape[0], 9))
        out[k] = mesh_vertex_inside(tris_c, verts_m, poses_a[ia[k]], poses_b[ib[k]], convex_is_a, mapped)
