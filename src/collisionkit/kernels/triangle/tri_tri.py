"""Triangle-triangle intersection tests on CLOSED triangles.

Two closed triangles intersect when they share at least one point: touching
at a vertex, along an edge or anywhere on the boundary counts. Triangles are
float64 arrays of shape (3, 3): row = vertex, column = x, y, z.

Two methods, chosen at run time by a code from :mod:`collisionkit.constants`:

* ``TRI_TEST_GUIGUE`` -- Guigue & Devillers 2003, "Fast and robust
  triangle-triangle overlap test using orientation predicates". Every branch
  is decided by the exact predicates of :mod:`.predicates`, so the answer is
  the exact answer for the float64 inputs (no epsilon anywhere).
* ``TRI_TEST_MOLLER`` -- Moller 1997, "A fast triangle-triangle intersection
  test": interval overlap on the line where the planes meet, in plain float64
  and without divisions. Inexact near degeneracy (touching, nearly coplanar);
  exact on small integer coordinates (|coords| <= 32, where every product it
  forms is an integer below 2**53). Its products have degree 7 in the
  coordinates, so it needs coordinate differences within about 1e-40 .. 1e40.

Both methods send degenerate triangles (zero area: collinear or repeated
vertices; detected exactly) to one exact path that treats them as the closed
segment or point they span (triangle-segment, triangle-point, segment-segment,
segment-point, point-point), and both use the same exact 2-D test for the
coplanar case.

NOTE: a fact used by every coplanar or collinear sub-case: if all points of
two closed convex sets lie in one plane, the sets meet in 3-D iff their
projections meet in EVERY coordinate plane -- at least one projection is
injective on that plane and the others are only necessary conditions. When a
triangle of non-zero area is known, the projection that keeps its area
(checked exactly) is injective on its plane and one 2-D test suffices.

EXACT: no fastmath: the exact predicates rely on IEEE round-to-nearest.
"""

from __future__ import annotations

from numba import types

from ...constants import TRI_TEST_GUIGUE, TRI_TEST_MOLLER
from ..core.jit import njit, njit_internal
from ..core.lazy import njit_lazy
from ..core.predicates import (
    TRI_TUPLE,
    normal_products,
    orient2d,
    orient2d_filter,
    orient3d,
    orient3d_sides,
    orient3d_sides_float,
    orient3d_sides_settle,
)


@njit_internal(nogil=True)
def _sgn(x):
    if x > 0.0:
        return 1
    if x < 0.0:
        return -1
    return 0


@njit_internal(nogil=True)
def _vertex_edge_signs(ex, ey, p0x, p0y, p1x, p1y, p2x, p2y):
    """o[j][i]: side of point p_j w.r.t. edge i of the triangle (ex, ey) (``_edge_signs``)."""
    return (
        _edge_signs(ex, ey, p0x, p0y),
        _edge_signs(ex, ey, p1x, p1y),
        _edge_signs(ex, ey, p2x, p2y),
    )


@njit_internal(nogil=True)
def _outside_an_edge(o, s):
    """Whether one edge line of a proper triangle (orientation s != 0) has all three points
    of ``o`` (``_vertex_edge_signs``) strictly outside; False for s == 0."""
    if s != 0:
        for i in range(3):
            if o[0][i] * s < 0 and o[1][i] * s < 0 and o[2][i] * s < 0:
                return True
    return False


@njit(cache=True, nogil=True)
def _load(t):
    """Triangle (3, 3) array -> flat 9-tuple (x0, y0, z0, x1, ..., z2).

    PERF: the kernels pass triangles as tuples of scalars: an array argument
    of a function that calls others costs an atomic incref/decref per call
    (measured on random unit-cube pairs: Guigue 120 -> 67 ns per call).
    """
    return (
        t[0, 0], t[0, 1], t[0, 2], t[1, 0], t[1, 1], t[1, 2], t[2, 0], t[2, 1], t[2, 2],
    )  # fmt: skip


# inline: its callers pass literal vertex numbers; as a call it compiled 5 signatures
# (one per literal pattern, issue 16) for a body that is one orient3d call.
@njit(cache=True, nogil=True, inline="always")
def _o3(P, i, Q, j, R, k, S, m):
    """Exact orient3d(P_i, Q_j, R_k, S_m) on vertices of 9-tuple triangles."""
    return orient3d(
        P[3 * i], P[3 * i + 1], P[3 * i + 2], Q[3 * j], Q[3 * j + 1], Q[3 * j + 2],
        R[3 * k], R[3 * k + 1], R[3 * k + 2], S[3 * m], S[3 * m + 1], S[3 * m + 2],
    )  # fmt: skip


# --- 2-D closed tests --------------------------------------------------------------


@njit_internal(nogil=True)
def _edge_signs(ax, ay, px, py):
    """Signs of orient2d(a_i, a_{i+1}, p) for the three edges of triangle a."""
    return (
        _sgn(orient2d(ax[0], ay[0], ax[1], ay[1], px, py)),
        _sgn(orient2d(ax[1], ay[1], ax[2], ay[2], px, py)),
        _sgn(orient2d(ax[2], ay[2], ax[0], ay[0], px, py)),
    )


@njit_internal(nogil=True)
def _tri_tri_2d(a0x, a0y, a1x, a1y, a2x, a2y, b0x, b0y, b1x, b1y, b2x, b2y):
    """Closed 2-D triangle-triangle test, exact; either triangle may be degenerate.

    A degenerate 2-D triangle (collinear or repeated vertices) is the union
    of its three edges, i.e. the segment or point it spans. Two such sets meet
    iff an edge of one meets an edge of the other, or a vertex of one lies in
    the other where the other has non-zero area (Moller's coplanar test:
    edge crossings plus containment). 20 exact orient2d signs decide every case.
    """
    ax = (a0x, a1x, a2x)
    ay = (a0y, a1y, a2y)
    bx = (b0x, b1x, b2x)
    by = (b0y, b1y, b2y)
    sa = _sgn(orient2d(a0x, a0y, a1x, a1y, a2x, a2y))
    sb = _sgn(orient2d(b0x, b0y, b1x, b1y, b2x, b2y))
    # oa[j][i]: side of b_j w.r.t. edge i of a; ob[i][j]: side of a_i w.r.t. edge j of b
    # PERF: early exit when an edge line of a proper triangle has the whole
    # other triangle strictly outside (always a correct "disjoint"); a's edges
    # are tried before b's signs are computed (coplanar CAD faces side by side).
    oa = _vertex_edge_signs(ax, ay, b0x, b0y, b1x, b1y, b2x, b2y)
    if _outside_an_edge(oa, sa):
        return False
    ob = _vertex_edge_signs(bx, by, a0x, a0y, a1x, a1y, a2x, a2y)
    if _outside_an_edge(ob, sb):
        return False
    # containment of a vertex in the other (closed) triangle
    if sa != 0:
        for j in range(3):
            if oa[j][0] * sa >= 0 and oa[j][1] * sa >= 0 and oa[j][2] * sa >= 0:
                return True
    if sb != 0:
        for i in range(3):
            if ob[i][0] * sb >= 0 and ob[i][1] * sb >= 0 and ob[i][2] * sb >= 0:
                return True
    # closed segment-segment tests, edge by edge
    for i in range(3):
        i1 = (i + 1) % 3
        for j in range(3):
            j1 = (j + 1) % 3
            o1 = oa[j][i]
            o2 = oa[j1][i]
            if o1 == o2 and o1 != 0:
                continue  # b_j, b_j1 strictly on one side of line a_i a_i1
            o3 = ob[i][j]
            o4 = ob[i1][j]
            if o3 == o4 and o3 != 0:
                continue
            if o1 == 0 and o2 == 0 and o3 == 0 and o4 == 0:
                # collinear (or point) segments: overlap of both coordinate
                # ranges, one of which is injective on the common line
                if max(ax[i], ax[i1]) < min(bx[j], bx[j1]):
                    continue
                if max(bx[j], bx[j1]) < min(ax[i], ax[i1]):
                    continue
                if max(ay[i], ay[i1]) < min(by[j], by[j1]):
                    continue
                if max(by[j], by[j1]) < min(ay[i], ay[i1]):
                    continue
            return True
    return False


# Cold entries (kernels/core/lazy.py): coplanar and degenerate pairs compile on the first
# query that meets one.


@njit_lazy(types.boolean(TRI_TUPLE, TRI_TUPLE, types.int64), nogil=True)
def _coplanar_on_axis(P, Q, k):
    """2-D test of P and Q (9-tuples) projected along axis k (dropping coordinate k)."""
    i = (k + 1) % 3
    j = (k + 2) % 3
    return _tri_tri_2d(
        P[i], P[j], P[3 + i], P[3 + j], P[6 + i], P[6 + j],
        Q[i], Q[j], Q[3 + i], Q[3 + j], Q[6 + i], Q[6 + j],
    )  # fmt: skip


@njit_internal(nogil=True)
def _coplanar_all_axes(P, Q):
    """Coplanar P, Q (possibly degenerate): meet iff all three projections meet."""
    # a loop, not three literal axes: one compiled signature for _coplanar_on_axis
    for k in range(3):
        if not _coplanar_on_axis(P, Q, k):
            return False
    return True


# --- degeneracy --------------------------------------------------------------------


@njit_internal(nogil=True)
def _projected_orient(T, k):
    """Exact orient2d of T projected along axis k: equals T's normal component k."""
    i = (k + 1) % 3
    j = (k + 2) % 3
    return orient2d(T[i], T[j], T[3 + i], T[3 + j], T[6 + i], T[6 + j])


@njit_internal(nogil=True)
def injective_axis(T):
    """Axis k whose projection keeps T's area non-zero (exact), or -1 if degenerate.

    The axis of the largest float normal component is tried first: it is
    almost always the answer and keeps the exact fallback of orient2d away
    (an axis-aligned face has exact zeros in the other two).
    """
    m1, m2, m3, m4, m5, m6 = normal_products(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8])
    nx = abs(m1 - m2)
    ny = abs(m3 - m4)
    nz = abs(m5 - m6)
    if nx >= ny and nx >= nz:
        k0 = 0
    elif ny >= nz:
        k0 = 1
    else:
        k0 = 2
    for step in range(3):
        k = (k0 + step) % 3
        if _projected_orient(T, k) != 0.0:
            return k
    return -1


@njit(cache=True, nogil=True)
def tri_is_degenerate(t):
    """True iff triangle t, a (3, 3) float64 array, has zero area, exactly.

    Zero area means collinear or repeated vertices: the exact orient2d of the
    projections onto the xy, yz and zx planes are all zero.
    """
    return injective_axis(_load(t)) < 0


@njit_internal(nogil=True)
def _extremes(T):
    """Vertices (i0, i1) at the ends of the segment a degenerate T spans.

    i0 == i1 when T is a single point. On an axis where the collinear points
    differ, projection onto that axis is injective on their line, so its
    minimum and maximum are the ends. Comparisons only: exact.
    """
    for k in range(3):
        c0 = T[k]
        c1 = T[3 + k]
        c2 = T[6 + k]
        if c0 != c1 or c0 != c2:
            lo = 0
            hi = 0
            clo = c0
            chi = c0
            if c1 < clo:
                lo = 1
                clo = c1
            if c2 < clo:
                lo = 2
            if c1 > chi:
                hi = 1
                chi = c1
            if c2 > chi:
                hi = 2
            return lo, hi
    return 0, 0


# --- exact path for segment / point primitives ----------------------------------------


@njit_lazy(types.boolean(TRI_TUPLE, types.int64, TRI_TUPLE), nogil=True)
def _tri_vs_degenerate(T, k, S):
    """Proper triangle T (injective axis k) against degenerate S (segment or point)."""
    i0, i1 = _extremes(S)
    o0 = _sgn(_o3(T, 0, T, 1, T, 2, S, i0))
    o1 = o0 if i1 == i0 else _sgn(_o3(T, 0, T, 1, T, 2, S, i1))
    if o0 == o1 and o0 != 0:
        return False  # strictly on one side of T's plane
    if o0 == 0 and o1 == 0:
        return _coplanar_on_axis(T, S, k)  # S lies in T's plane
    # the segment meets T's plane in exactly one point X; X is in the closed
    # triangle iff the line s0 s1 passes each edge of T on the same side
    e0 = _sgn(_o3(S, i0, S, i1, T, 0, T, 1))
    e1 = _sgn(_o3(S, i0, S, i1, T, 1, T, 2))
    e2 = _sgn(_o3(S, i0, S, i1, T, 2, T, 0))
    has_pos = e0 > 0 or e1 > 0 or e2 > 0
    has_neg = e0 < 0 or e1 < 0 or e2 < 0
    return not (has_pos and has_neg)


@njit_lazy(types.boolean(TRI_TUPLE, TRI_TUPLE, types.int64, types.int64), nogil=True)
def _intersect_degenerate(A, B, ka, kb):
    """Exact test when A or B (9-tuples) is degenerate; ka, kb from _injective_axis."""
    if ka >= 0:
        return _tri_vs_degenerate(A, ka, B)
    if kb >= 0:
        return _tri_vs_degenerate(B, kb, A)
    # segments or points: two segments that are not coplanar are disjoint;
    # otherwise all their points lie in one plane and the projections decide
    i0, i1 = _extremes(A)
    j0, j1 = _extremes(B)
    if i0 != i1 and j0 != j1 and _o3(A, i0, A, i1, B, j0, B, j1) != 0.0:
        return False
    return _coplanar_all_axes(A, B)


# --- Guigue & Devillers 2003 ---------------------------------------------------------------


@njit_internal(nogil=True)
def _lone(s0, s1, s2):
    """Lone vertex of a triangle crossing or touching a plane, and a flip.

    Given the signs s of the three vertices against the other triangle's
    plane (not all equal and non-zero, not all zero), returns (i, f) with
    f * s[i] >= 0 >= f * s[m] for the other two vertices m, and s[i] != s[m]:
    vertex i alone on one (closed) side. f = -1 means "flip the other
    triangle" (swap its last two vertices), which negates every s.
    """
    pos = (s0 > 0) + (s1 > 0) + (s2 > 0)
    neg = (s0 < 0) + (s1 < 0) + (s2 < 0)
    if pos == 1:
        return (0 if s0 > 0 else (1 if s1 > 0 else 2)), 1
    if neg == 1:
        return (0 if s0 < 0 else (1 if s1 < 0 else 2)), -1
    # two on one strict side, one on the plane: the vertex on the plane is alone
    i = 0 if s0 == 0 else (1 if s1 == 0 else 2)
    return i, (-1 if pos == 2 else 1)


@njit(cache=True, nogil=True)
def _common_axis_plane(A, B):
    """Axis k if all six vertices of A and B have the same coordinate k, else -1.

    Faces of CAD parts at their nominal pose often lie in one axis-aligned
    plane (flats touching flats). Dropping coordinate k is then injective on
    that plane, so the exact 2-D test decides the pair (degenerate triangles
    included) without the orient3d calls, whose filter fails on every vertex
    (exact zeros). Comparisons only: exact. Called only when the float pass
    left a vertex undecided, so generic pairs never pay for it.
    """
    if A[2] == A[5] and A[2] == A[8] and A[2] == B[2] and A[2] == B[5] and A[2] == B[8]:
        return 2
    if A[0] == A[3] and A[0] == A[6] and A[0] == B[0] and A[0] == B[3] and A[0] == B[6]:
        return 0
    if A[1] == A[4] and A[1] == A[7] and A[1] == B[1] and A[1] == B[4] and A[1] == B[7]:
        return 1
    return -1


@njit(cache=True, nogil=True)
def _guigue(A, B):
    # Side of A's vertices against B's plane. PERF: the float pass comes first
    # for all three vertices; most pairs of generic data are decided from it
    # alone, and only an uncertain vertex reaches an exact path (benchmarks/
    # leaf_tests.py gives the share per scene).
    a0, a1, a2, c0, c1, c2 = orient3d_sides_float(B, A)
    if not (c0 & c1 & c2):
        # exact zeros first: both faces in one axis-aligned plane (CAD flats)
        k = _common_axis_plane(A, B)
        if k >= 0:
            return _coplanar_on_axis(A, B, k)
        a0, a1, a2 = orient3d_sides_settle(B, A, a0, a1, a2, c0, c1, c2)
    s0 = _sgn(a0)
    s1 = _sgn(a1)
    s2 = _sgn(a2)
    if s0 == s1 and s1 == s2:
        if s0 != 0:
            return False
        # B degenerate (orient3d against it is identically zero), or A in B's plane
        kb = injective_axis(B)
        if kb < 0:
            return _intersect_degenerate(A, B, injective_axis(A), kb)
        return _coplanar_on_axis(A, B, kb)  # injective on B's plane; A may be degenerate
    # side of B's vertices against A's plane
    b0, b1, b2 = orient3d_sides(A, B)
    r0 = _sgn(b0)
    r1 = _sgn(b1)
    r2 = _sgn(b2)
    if r0 == r1 and r1 == r2:
        if r0 != 0:
            return False
        # B is proper (the first signs were not all zero) and not in A's
        # plane, so all-zero here means A is degenerate
        return _tri_vs_degenerate(B, injective_axis(B), A)
    # canonical form: p alone, flips folded into the choice of q and r
    ia, fb = _lone(s0, s1, s2)
    ib, fa = _lone(r0, r1, r2)
    qa = (ia + 1) % 3 if fa > 0 else (ia + 2) % 3
    ra = (ia + 2) % 3 if fa > 0 else (ia + 1) % 3
    qb = (ib + 1) % 3 if fb > 0 else (ib + 2) % 3
    rb = (ib + 2) % 3 if fb > 0 else (ib + 1) % 3
    if _o3(A, ia, A, qa, B, ib, B, qb) > 0.0:
        return False
    return _o3(A, ia, A, ra, B, ib, B, rb) >= 0.0


@njit(cache=True, nogil=True)
def tri_tri_guigue(t1, t2):
    """Exact closed triangle-triangle test (Guigue & Devillers 2003).

    Parameters
    ----------
    t1, t2 : ndarray, shape (3, 3), float64
        Triangles, one vertex per row.

    Returns
    -------
    bool
        True iff the closed triangles share a point, exactly for the float64
        inputs. Degenerate triangles count as the segment or point they span.

    Notes
    -----
    With d2(x) = orient3d(t2, x) and d1(x) = orient3d(t1, x), each triangle is
    relabelled (p, q, r) so that p is alone: d(p) >= 0 >= d(q), d(r) with
    d(p) != d(q), d(r), flipping the other triangle as needed. Then t1 meets
    plane 2 in the segment [j, i] (i on p1q1, j on p1r1) and t2 meets plane 1
    in [k, l] (k on p2q2, l on p2r2), both ordered so along D = N1 x N2.
    orient3d(p1, q1, p2, q2) = D.(k - i) times the positive factor
    (d1(p2) - d1(q2)) (d2(p1) - d2(q1)) / |D|^2, and orient3d(p1, r1, p2, r2)
    likewise has the sign of D.(l - j): the triangles meet iff both
    k <= i and j <= l. The published branch table is equivalent.
    """
    return _guigue(_load(t1), _load(t2))


# --- Moller 1997 ---------------------------------------------------------------------------


@njit_internal(nogil=True)
def _certified_axis(mx1, mx2, my1, my2, mz1, mz2):
    """An axis whose float normal component n_k = mk1 - mk2 is certainly non-zero, or -1.

    The products are those of orient2d on the projections, so the orient2d
    filter applies: a certified axis proves the triangle proper and its
    projection along that axis injective, without the exact fallback.
    """
    ax = abs(mx1 - mx2)
    ay = abs(my1 - my2)
    az = abs(mz1 - mz2)
    if ax >= ay and ax >= az:
        if orient2d_filter(mx1, mx2):
            return 0
    elif ay >= az:
        if orient2d_filter(my1, my2):
            return 1
    elif orient2d_filter(mz1, mz2):
        return 2
    return -1


@njit_internal(nogil=True)
def _moller(A, B):
    u0x, u0y, u0z, u1x, u1y, u1z, u2x, u2y, u2z = A
    v0x, v0y, v0z, v1x, v1y, v1z, v2x, v2y, v2z = B
    # both normals first: the exact degeneracy checks reuse their products,
    # and a degenerate triangle must reach the exact path before any float test
    mx1, mx2, my1, my2, mz1, mz2 = normal_products(v0x, v0y, v0z, v1x, v1y, v1z, v2x, v2y, v2z)
    kb = _certified_axis(mx1, mx2, my1, my2, mz1, mz2)
    if kb < 0:
        kb = injective_axis(B)
    n2x = mx1 - mx2
    n2y = my1 - my2
    n2z = mz1 - mz2
    mx1, mx2, my1, my2, mz1, mz2 = normal_products(u0x, u0y, u0z, u1x, u1y, u1z, u2x, u2y, u2z)
    ka = _certified_axis(mx1, mx2, my1, my2, mz1, mz2)
    if ka < 0:
        ka = injective_axis(A)
    if ka < 0 or kb < 0:
        return _intersect_degenerate(A, B, ka, kb)
    n1x = mx1 - mx2
    n1y = my1 - my2
    n1z = mz1 - mz2
    # signed (scaled) distances of A's vertices to B's plane
    du0 = n2x * (u0x - v0x) + n2y * (u0y - v0y) + n2z * (u0z - v0z)
    du1 = n2x * (u1x - v0x) + n2y * (u1y - v0y) + n2z * (u1z - v0z)
    du2 = n2x * (u2x - v0x) + n2y * (u2y - v0y) + n2z * (u2z - v0z)
    su0 = _sgn(du0)
    su1 = _sgn(du1)
    su2 = _sgn(du2)
    if su0 == su1 and su1 == su2 and su0 != 0:
        return False
    # distances of B's vertices to A's plane
    dv0 = n1x * (v0x - u0x) + n1y * (v0y - u0y) + n1z * (v0z - u0z)
    dv1 = n1x * (v1x - u0x) + n1y * (v1y - u0y) + n1z * (v1z - u0z)
    dv2 = n1x * (v2x - u0x) + n1y * (v2y - u0y) + n1z * (v2z - u0z)
    sv0 = _sgn(dv0)
    sv1 = _sgn(dv1)
    sv2 = _sgn(dv2)
    if sv0 == sv1 and sv1 == sv2 and sv0 != 0:
        return False
    if (su0 == 0 and su1 == 0 and su2 == 0) or (sv0 == 0 and sv1 == 0 and sv2 == 0):
        return _coplanar_on_axis(A, B, ka)
    # project onto the coordinate axis closest to the intersection line D
    dx = abs(n1y * n2z - n1z * n2y)
    dy = abs(n1z * n2x - n1x * n2z)
    dz = abs(n1x * n2y - n1y * n2x)
    if dx >= dy and dx >= dz:
        up = (u0x, u1x, u2x)
        vp = (v0x, v1x, v2x)
    elif dy >= dz:
        up = (u0y, u1y, u2y)
        vp = (v0y, v1y, v2y)
    else:
        up = (u0z, u1z, u2z)
        vp = (v0z, v1z, v2z)
    du = (du0, du1, du2)
    dv = (dv0, dv1, dv2)
    iu = _lone(su0, su1, su2)[0]
    iv = _lone(sv0, sv1, sv2)[0]
    # A's ends: a + b_m / x_m; B's ends: c + d_n / y_n
    a = up[iu]
    ma = (iu + 1) % 3
    mb = (iu + 2) % 3
    b0 = (up[ma] - a) * du[iu]
    x0 = du[iu] - du[ma]
    b1 = (up[mb] - a) * du[iu]
    x1 = du[iu] - du[mb]
    c = vp[iv]
    na = (iv + 1) % 3
    nb = (iv + 2) % 3
    d0 = (vp[na] - c) * dv[iv]
    y0 = dv[iv] - dv[na]
    d1 = (vp[nb] - c) * dv[iv]
    y1 = dv[iv] - dv[nb]
    ac = a - c
    g00 = ac * x0 * y0 + b0 * y0 - d0 * x0
    g01 = ac * x0 * y1 + b0 * y1 - d1 * x0
    g10 = ac * x1 * y0 + b1 * y0 - d0 * x1
    g11 = ac * x1 * y1 + b1 * y1 - d1 * x1
    if g00 > 0.0 and g01 > 0.0 and g10 > 0.0 and g11 > 0.0:
        return False
    if g00 < 0.0 and g01 < 0.0 and g10 < 0.0 and g11 < 0.0:
        return False
    return True


@njit(cache=True, nogil=True)
def tri_tri_moller(t1, t2):
    """Closed triangle-triangle test by interval overlap (Moller 1997), float64.

    Parameters
    ----------
    t1, t2 : ndarray, shape (3, 3), float64
        Triangles, one vertex per row.

    Returns
    -------
    bool
        True if the closed triangles are found to share a point. Inexact near
        degeneracy (no epsilon: touching configurations are decided by float
        rounding); exact for integer coordinates with |coords| <= 32.

    Notes
    -----
    Division-free: an interval end e = a + b / x (a the lone vertex's
    coordinate on the projection axis, b = (c_m - a) d_lone,
    x = d_lone - d_m) is compared with an end f = c + d / y of the other
    triangle through (a - c) x y + b y - d x, whose sign is that of e - f
    times sign(x y) (the same for all four pairs). The closed intervals are
    disjoint iff the four differences have one strict sign. Comparing ends
    pairwise instead of scaling all four by x0 x1 y0 y1 (as the published
    code does) halves the degree of the products, 7 instead of 13: the
    integer range where every product is exact grows from |coords| <= 3 to
    |coords| <= 32, and overflow moves from ~1e23 to ~1e40.
    Degenerate triangles go to the shared exact path; the coplanar case
    (all float distances zero) uses the shared exact 2-D test.
    """
    return _moller(_load(t1), _load(t2))


# --- entry ---------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def tri_tri_intersect(t1, t2, method):
    """Do the closed triangles t1 and t2 share a point?

    Parameters
    ----------
    t1, t2 : ndarray, shape (3, 3), float64
        Triangles, one vertex per row (e.g. ``tris[i]`` of an (F, 3, 3) array).
    method : int
        ``TRI_TEST_GUIGUE`` (exact) or ``TRI_TEST_MOLLER`` (float64).

    Returns
    -------
    bool

    Notes
    -----
    Reads the 18 coordinates once; allocation-free except in the exact
    fallback of the predicates (near-degenerate inputs).

    Examples
    --------
    >>> import numpy as np
    >>> from collisionkit.constants import TRI_TEST_GUIGUE
    >>> a = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    >>> b = np.array([[0.0, 0, 0], [0, 0, 1], [1, 1, 1]])
    >>> bool(tri_tri_intersect(a, b, TRI_TEST_GUIGUE))  # they share a vertex
    True
    """
    A = _load(t1)
    B = _load(t2)
    if method == TRI_TEST_GUIGUE:
        return _guigue(A, B)
    if method == TRI_TEST_MOLLER:
        return _moller(A, B)
    raise ValueError("unknown triangle test code")


# inline: one branch per triangle pair of the traversal; LLVM kept it as a call (issue 16).
@njit(cache=True, nogil=True, inline="always")
def tri_tri_intersect_tuples(A, B, method):
    """``tri_tri_intersect`` on triangles given as flat 9-tuples (x0, y0, z0, ..., z2).

    The traversal kernels call this form: tuples are values, so no reference
    counting happens per call in their inner loop.
    """
    if method == TRI_TEST_MOLLER:
        return _moller(A, B)
    return _guigue(A, B)


#: Guigue's test on 9-tuples, for kernels that use no other: a run-time choice
#: (``tri_tri_intersect_tuples``) compiles Moller's test too (~0.8 CPU s, issue 32).
tri_tri_guigue_tuples = _guigue
