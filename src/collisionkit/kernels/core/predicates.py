"""Exact orientation predicates on float64 inputs (Shewchuk-style adaptive filter).

``orient2d`` and ``orient3d`` return a float whose SIGN is exactly the sign of
the real determinant of the float64 inputs they are given; the magnitude is
only an approximation (or +-1 when the exact path decided).

Method (Shewchuk 1997, "Adaptive precision floating-point arithmetic and fast
robust geometric predicates"):

1. Fast path: evaluate the determinant in float64 and bound its rounding error
   by ``errbound * permanent`` with Shewchuk's static constants
   (ccwerrboundA = (3 + 16 eps) eps, o3derrboundA = (7 + 56 eps) eps,
   eps = 2**-53). If |det| exceeds the bound its sign is certain. The bound
   assumes no underflow or overflow, so a permanent below 1e-200 or not finite
   also goes to step 2. No allocation.
   Before the exact path, exact shortcuts (``_orient2d_fallback``,
   ``_orient3d_fallback``) decide the configurations of CAD data that defeat
   the filter without being hard: a repeated point, an axis-parallel edge
   (2-D), three of the four points in one axis-aligned plane (3-D). There the
   determinant factors into float differences and a lower-degree predicate,
   whose signs are exact. No allocation.
2. Exact path: scale every input by one power of two so the largest magnitude
   lies in [0.5, 1) (exact: frexp/ldexp), take each coordinate difference as an
   exact two-term expansion (two_diff), expand the determinant into products of
   two (orient2d) or three (orient3d) doubles, each exact as a two- or
   four-term expansion (Dekker's split, no FMA needed), sum every term exactly
   with grow-expansion and zero elimination, and return the sign of the most
   significant component. Allocates one small scratch array.

Limit (the only one): if the nonzero input magnitudes of ONE call span more
than about 2**300 (~1e90) -- e.g. a coordinate of 1e-100 next to one of 1 --
the low bits of the triple products may underflow and the sign can be wrong.
Within that span every input, scaled so the largest is ~1, is a multiple of
2**-353, so every product of three is a multiple of 2**-1059 and nothing
underflows. Zeros are fine, and so are uniformly huge (1e200) or tiny (1e-200)
inputs, since the scaling removes the common magnitude. Inputs must be finite
(non-finite inputs return NaN).

Conventions:

* ``orient2d(a, b, c) = (b - a) x (c - a)``: positive when a, b, c turn
  counter-clockwise (c left of the directed line a -> b).
* ``orient3d(a, b, c, d) = ((b - a) x (c - a)) . (d - a)``: positive when d
  lies on the side of plane abc toward which the normal (b - a) x (c - a)
  points, i.e. when a, b, c are counter-clockwise seen from d. (This is the
  NEGATIVE of Shewchuk's ``orient3d``.)

EXACT: no fastmath anywhere in this module: the error-free transformations
(two_sum, two_diff, two_product) and the static error bound are only valid
under strict IEEE-754 round-to-nearest without reassociation.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types

from .jit import njit, njit_internal
from .lazy import njit_lazy

_EPS = 2.0**-53
#: Shewchuk's static bound for the 2x2 determinant of differences.
_CCW_ERRBOUND_A = (3.0 + 16.0 * _EPS) * _EPS
#: Shewchuk's static bound for the 3x3 determinant of differences.
_O3D_ERRBOUND_A = (7.0 + 56.0 * _EPS) * _EPS
#: Below this permanent, products may be subnormal and the relative bound fails.
_PERM_MIN = 1e-200
#: Dekker's splitter 2**27 + 1: splits a double into two 26-bit halves.
_SPLITTER = 134217729.0
#: Terms of the exact sums: orient3d has 6 x 8 triple products of 4 terms.
_SCRATCH = 200


# --- error-free transformations ------------------------------------------------


@njit(cache=True, nogil=True)
def _two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e == a + b exactly (Knuth)."""
    s = a + b
    b_virt = s - a
    a_virt = s - b_virt
    return s, (a - a_virt) + (b - b_virt)


@njit(cache=True, nogil=True)
def _two_diff(a, b):
    """(d, e) with d = fl(a - b) and d + e == a - b exactly."""
    d = a - b
    b_virt = a - d
    a_virt = d + b_virt
    return d, (a - a_virt) + (b_virt - b)


@njit(cache=True, nogil=True)
def _split(a):
    """(hi, lo) with hi + lo == a, each fitting in 26 bits (Dekker)."""
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


@njit(cache=True, nogil=True)
def _two_product(a, b):
    """(p, e) with p = fl(a * b) and p + e == a * b exactly (Dekker, no FMA)."""
    p = a * b
    ahi, alo = _split(a)
    bhi, blo = _split(b)
    err = p - ahi * bhi
    err -= alo * bhi
    err -= ahi * blo
    return p, alo * blo - err


@njit(cache=True, nogil=True)
def _grow(e, n, b):
    """Add the double b to the expansion e[:n] in place; return the new length.

    e holds a nonoverlapping expansion in increasing magnitude; zero
    components are dropped, so e[n - 1] carries the sign of the sum.
    """
    if b == 0.0:
        return n
    q = b
    k = 0
    for i in range(n):
        q, h = _two_sum(q, e[i])
        if h != 0.0:
            e[k] = h
            k += 1
    if q != 0.0 or k == 0:
        e[k] = q
        k += 1
    return k


@njit_internal(nogil=True)
def _add_product2(e, n, sign, a0, a1, b0, b1):
    """Add sign * (a0 + a1)(b0 + b1) exactly to the expansion e[:n] (sign = +-1.0).

    NOTE: sign is a float, n an int64 at every call site: constant bool/int
    arguments would compile one specialisation per literal value.
    """
    for i in range(2):
        a = a0 if i == 0 else a1
        if a == 0.0:
            continue
        for j in range(2):
            b = b0 if j == 0 else b1
            if b == 0.0:
                continue
            p, q = _two_product(a, b)
            p = sign * p
            q = sign * q
            n = _grow(e, n, q)
            n = _grow(e, n, p)
    return n


@njit_internal(nogil=True)
def _add_product3(e, n, sign, a0, a1, b0, b1, c0, c1):
    """Add sign * (a0 + a1)(b0 + b1)(c0 + c1) exactly to the expansion e[:n] (sign = +-1.0)."""
    for i in range(2):
        a = a0 if i == 0 else a1
        if a == 0.0:
            continue
        for j in range(2):
            b = b0 if j == 0 else b1
            if b == 0.0:
                continue
            p, q = _two_product(a, b)
            for k in range(2):
                c = c0 if k == 0 else c1
                if c == 0.0:
                    continue
                r0, r1 = _two_product(p, c)
                r2, r3 = _two_product(q, c)
                r0 = sign * r0  # exact: sign is +-1.0
                r1 = sign * r1
                r2 = sign * r2
                r3 = sign * r3
                n = _grow(e, n, r3)
                n = _grow(e, n, r2)
                n = _grow(e, n, r1)
                n = _grow(e, n, r0)
    return n


@njit_internal(nogil=True)
def _expansion_sign(e, n):
    top = e[n - 1]
    return 1.0 if top > 0.0 else (-1.0 if top < 0.0 else 0.0)


# --- exact paths -----------------------------------------------------------------


@njit(cache=True, nogil=True)
def _orient2d_exact(ax, ay, bx, by, cx, cy):
    """Sign (+1.0, -1.0, 0.0) of (b - a) x (c - a), exactly."""
    m = max(abs(ax), abs(ay), abs(bx), abs(by), abs(cx), abs(cy))
    if not m < math.inf:
        return math.nan
    if m == 0.0:
        return 0.0
    s = -math.frexp(m)[1]  # NOTE: scaling by 2**s is exact; max |input| -> [0.5, 1)
    ax = math.ldexp(ax, s)
    ay = math.ldexp(ay, s)
    bx = math.ldexp(bx, s)
    by = math.ldexp(by, s)
    cx = math.ldexp(cx, s)
    cy = math.ldexp(cy, s)
    ux0, ux1 = _two_diff(bx, ax)
    uy0, uy1 = _two_diff(by, ay)
    vx0, vx1 = _two_diff(cx, ax)
    vy0, vy1 = _two_diff(cy, ay)
    e = np.empty(_SCRATCH)
    n = np.int64(0)
    n = _add_product2(e, n, 1.0, ux0, ux1, vy0, vy1)
    n = _add_product2(e, n, -1.0, uy0, uy1, vx0, vx1)
    if n == 0:
        return 0.0
    return _expansion_sign(e, n)


@njit(cache=True, nogil=True)
def _orient3d_exact(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz):
    """Sign (+1.0, -1.0, 0.0) of ((b - a) x (c - a)) . (d - a), exactly."""
    m = max(
        max(abs(ax), abs(ay), abs(az), abs(bx), abs(by), abs(bz)),
        max(abs(cx), abs(cy), abs(cz), abs(dx), abs(dy), abs(dz)),
    )
    if not m < math.inf:
        return math.nan
    if m == 0.0:
        return 0.0
    s = -math.frexp(m)[1]  # NOTE: scaling by 2**s is exact; max |input| -> [0.5, 1)
    ax = math.ldexp(ax, s)
    ay = math.ldexp(ay, s)
    az = math.ldexp(az, s)
    bx = math.ldexp(bx, s)
    by = math.ldexp(by, s)
    bz = math.ldexp(bz, s)
    cx = math.ldexp(cx, s)
    cy = math.ldexp(cy, s)
    cz = math.ldexp(cz, s)
    dx = math.ldexp(dx, s)
    dy = math.ldexp(dy, s)
    dz = math.ldexp(dz, s)
    ux0, ux1 = _two_diff(bx, ax)
    uy0, uy1 = _two_diff(by, ay)
    uz0, uz1 = _two_diff(bz, az)
    vx0, vx1 = _two_diff(cx, ax)
    vy0, vy1 = _two_diff(cy, ay)
    vz0, vz1 = _two_diff(cz, az)
    wx0, wx1 = _two_diff(dx, ax)
    wy0, wy1 = _two_diff(dy, ay)
    wz0, wz1 = _two_diff(dz, az)
    # (u x v) . w expanded into its six signed triple products
    e = np.empty(_SCRATCH)
    n = np.int64(0)
    n = _add_product3(e, n, 1.0, wx0, wx1, uy0, uy1, vz0, vz1)
    n = _add_product3(e, n, -1.0, wx0, wx1, uz0, uz1, vy0, vy1)
    n = _add_product3(e, n, 1.0, wy0, wy1, uz0, uz1, vx0, vx1)
    n = _add_product3(e, n, -1.0, wy0, wy1, ux0, ux1, vz0, vz1)
    n = _add_product3(e, n, 1.0, wz0, wz1, ux0, ux1, vy0, vy1)
    n = _add_product3(e, n, -1.0, wz0, wz1, uy0, uy1, vx0, vx1)
    if n == 0:
        return 0.0
    return _expansion_sign(e, n)


# --- exact shortcuts before the expansion path ---------------------------------------
#
# EXACT: each shortcut uses only two facts of IEEE-754 round-to-nearest arithmetic on
# finite doubles: fl(x - y) has the sign of the real x - y (it is zero iff x == y, with
# gradual underflow), and comparisons are exact. A determinant that factors into such
# differences (or into a difference and an exact lower-degree predicate) therefore has
# its exact sign without any product being formed: no rounding, no overflow, no
# underflow, at every magnitude. They run only when the float filter failed, so they
# cost nothing on the fast path. PERF: on CAD assemblies at their nominal pose most
# filter failures are such exact zeros (faces in one axis-aligned plane, shared
# vertices): 150-250 ns each through the expansion (benchmarks/leaf_tests.py).


@njit_internal(nogil=True)
def _sign_of_product(p, q):
    """Sign (+1.0, -1.0, 0.0) of the real product p * q (no product is formed)."""
    if p == 0.0 or q == 0.0:
        return 0.0
    return 1.0 if (p > 0.0) == (q > 0.0) else -1.0


@njit(cache=True, nogil=True)
def _orient2d_aligned(ax, ay, bx, by, cx, cy):
    """(decided, sign) of orient2d when an edge is axis-parallel or a point repeats.

    (b - a) x (c - a) = (bx - ax)(cy - ay) - (by - ay)(cx - ax): when two points share
    a coordinate one product vanishes exactly and the sign is that of the other, a
    product of two differences (cyclic forms for the edge b c). A repeated point makes
    two coordinates equal, so it is covered. Inputs must be finite.
    """
    if ax == bx:
        return True, -_sign_of_product(by - ay, cx - ax)
    if ay == by:
        return True, _sign_of_product(bx - ax, cy - ay)
    if ax == cx:
        return True, _sign_of_product(bx - ax, cy - ay)
    if ay == cy:
        return True, -_sign_of_product(by - ay, cx - ax)
    if bx == cx:
        return True, _sign_of_product(bx - ax, cy - by)
    if by == cy:
        return True, _sign_of_product(by - ay, bx - cx)
    return False, 0.0


# Cold: compiled on the first call that needs it (kernels/core/lazy.py); the float filter
# decides generic inputs, so most first queries never compile the exact path.
@njit_lazy(types.float64(*[types.float64] * 6), nogil=True)
def _orient2d_fallback(ax, ay, bx, by, cx, cy):
    """Exact sign of orient2d after the float filter failed: shortcuts, then expansions."""
    s = ax + ay + bx + by + cx + cy
    if s - s == 0.0:  # all finite (an overflowing sum only skips the shortcuts)
        done, sign = _orient2d_aligned(ax, ay, bx, by, cx, cy)
        if done:
            return sign
    return _orient2d_exact(ax, ay, bx, by, cx, cy)


@njit_internal(nogil=True)
def _plane_shared_axis(px, py, pz, qx, qy, qz, rx, ry, rz):
    """An axis k with p_k == q_k == r_k (the plane pqr is perpendicular to it), or -1."""
    if pz == qz and pz == rz:
        return 2
    if px == qx and px == rx:
        return 0
    if py == qy and py == ry:
        return 1
    return -1


@njit_internal(nogil=True)
def _aligned_volume_sign(px, py, pz, qx, qy, qz, rx, ry, rz, sx, sy, sz, k):
    """Exact sign of orient3d(p, q, r, s) when p, q, r share coordinate k.

    Then (q - p) and (r - p) have a zero component k, their cross product is
    (0, 0, n) up to the axis order with n = orient2d of p, q, r projected on the
    axes (k + 1, k + 2) (the triangle's normal component k), and the volume is
    (s_k - p_k) * n.
    """
    if k == 0:
        d = sx - px
        n = orient2d(py, pz, qy, qz, ry, rz)
    elif k == 1:
        d = sy - py
        n = orient2d(pz, px, qz, qx, rz, rx)
    else:
        d = sz - pz
        n = orient2d(px, py, qx, qy, rx, ry)
    return _sign_of_product(d, n)


@njit(cache=True, nogil=True)
def _orient3d_aligned(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz):
    """(decided, sign) of orient3d when three of the four points share a coordinate.

    orient3d is alternating in its four points: with the triple (a, b, c) the sign is
    the plane formula's; orient3d(a, b, c, d) = -orient3d(a, b, d, c)
    = orient3d(a, c, d, b) = -orient3d(b, c, d, a) give the other triples. Covers the
    exact zeros of four points in one axis-aligned plane and of repeated points in
    such a plane. Inputs must be finite.
    """
    k = _plane_shared_axis(ax, ay, az, bx, by, bz, cx, cy, cz)
    if k >= 0:
        return True, _aligned_volume_sign(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz, k)
    k = _plane_shared_axis(ax, ay, az, bx, by, bz, dx, dy, dz)
    if k >= 0:
        return True, -_aligned_volume_sign(ax, ay, az, bx, by, bz, dx, dy, dz, cx, cy, cz, k)
    k = _plane_shared_axis(ax, ay, az, cx, cy, cz, dx, dy, dz)
    if k >= 0:
        return True, _aligned_volume_sign(ax, ay, az, cx, cy, cz, dx, dy, dz, bx, by, bz, k)
    k = _plane_shared_axis(bx, by, bz, cx, cy, cz, dx, dy, dz)
    if k >= 0:
        return True, -_aligned_volume_sign(bx, by, bz, cx, cy, cz, dx, dy, dz, ax, ay, az, k)
    return False, 0.0


# Cold, as _orient2d_fallback.
@njit_lazy(types.float64(*[types.float64] * 12), nogil=True)
def _orient3d_fallback(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz):
    """Exact sign of orient3d after the float filter failed: shortcuts, then expansions.

    A repeated point makes the volume zero exactly (cheap comparisons first: shared
    vertices of parts at their nominal pose).
    """
    s = ax + ay + az + bx + by + bz + cx + cy + cz + dx + dy + dz
    if s - s == 0.0:  # all finite (an overflowing sum only skips the shortcuts)
        if (
            (dx == ax and dy == ay and dz == az)
            or (dx == bx and dy == by and dz == bz)
            or (dx == cx and dy == cy and dz == cz)
            or (ax == bx and ay == by and az == bz)
            or (ax == cx and ay == cy and az == cz)
            or (bx == cx and by == cy and bz == cz)
        ):
            return 0.0
        done, sign = _orient3d_aligned(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz)
        if done:
            return sign
    return _orient3d_exact(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz)


# --- public predicates -------------------------------------------------------------


@njit(cache=True, nogil=True)
def orient2d(ax, ay, bx, by, cx, cy):
    """Orientation of three 2-D points: sign of (b - a) x (c - a), exactly.

    Parameters
    ----------
    ax, ay, bx, by, cx, cy : float
        float64 coordinates of the points a, b, c.

    Returns
    -------
    float
        Positive if a, b, c turn counter-clockwise, negative if clockwise,
        exactly 0.0 if they are collinear. Only the sign is meaningful.
    """
    ux = bx - ax
    uy = by - ay
    vx = cx - ax
    vy = cy - ay
    left = ux * vy
    right = uy * vx
    det = left - right
    perm = abs(left) + abs(right)
    if perm >= _PERM_MIN and perm < math.inf:
        bound = _CCW_ERRBOUND_A * perm
        if det > bound or -det > bound:
            return det
    return _orient2d_fallback(ax, ay, bx, by, cx, cy)


@njit_internal(nogil=True)
def orient2d_filter(left, right):
    """True if the float64 value left - right already has the exact orient2d sign.

    ``left = (bx - ax) * (cy - ay)`` and ``right = (by - ay) * (cx - ax)``
    must be evaluated in float64 exactly so (as :func:`orient2d` does); this
    is its fast-path test, for callers that form those products anyway (a
    triangle's float normal has one such pair per component).
    """
    perm = abs(left) + abs(right)
    if perm >= _PERM_MIN and perm < math.inf:
        det = left - right
        bound = _CCW_ERRBOUND_A * perm
        return det > bound or -det > bound
    return False


@njit_internal(nogil=True)
def _o3d_certain(det, perm):
    """orient3d's float filter: is the sign of the float det certainly the exact sign?

    (The same test as in :func:`orient3d`, which writes it with short-circuit
    branches: measured faster there; this branch-free form suits the three
    vertices of :func:`orient3d_sides_float`, decided together.)

    det is the 3x3 determinant of coordinate differences w . (u x v), each
    difference rounded once, the cross product's components as differences of
    two rounded products, then (wx nx + wy ny) + wz nz; perm is the same
    expression on absolute values. Bound (Shewchuk 1997, section 4.3, his
    o3derrboundA), with eps = 2**-53 and every rounding error at most eps
    times the magnitude of its result: a triple product w_i u_j v_k collects
    three difference roundings, the minor's product and subtraction, the
    product w_i n_i and the first of the two additions, 7 in all, each
    bounded by eps times a sub-sum of the permanent; the last addition cannot
    change the sign (round-to-nearest keeps the sign of an exact sum). So the
    sign is certain when |det| > (7 + 56 eps) eps perm, the eps**2 term
    absorbing the products of errors and perm's own rounding.
    Model: IEEE-754 binary64, round-to-nearest-even, no fused multiply-add
    contraction and no fastmath (numba contracts nothing unless asked;
    tests/kernels/test_predicates.py guards the error-free transformations).
    The bound is relative, so it also needs every product to be normal and
    finite: perm >= 1e-200 (a product of magnitude below that may have lost
    bits to underflow) and perm < inf (no overflow); outside that range the
    answer is "not certain" and the exact path decides.
    """
    return (perm >= _PERM_MIN) & (perm < math.inf) & (abs(det) > _O3D_ERRBOUND_A * perm)


@njit_internal(nogil=True)
def normal_products(ax, ay, az, bx, by, bz, cx, cy, cz):
    """The six float products (m1, ..., m6) of the normal (b - a) x (c - a) =
    (m1 - m2, m3 - m4, m5 - m6), kept apart: the float filters bound the rounding of
    each component by |m1| + |m2| etc. (orient3d, orient3d_sides_float, Moller's test)."""
    ux = bx - ax
    uy = by - ay
    uz = bz - az
    vx = cx - ax
    vy = cy - ay
    vz = cz - az
    return uy * vz, uz * vy, uz * vx, ux * vz, ux * vy, uy * vx


@njit(cache=True, nogil=True)
def orient3d(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz):
    """Orientation of four 3-D points: sign of ((b - a) x (c - a)) . (d - a), exactly.

    Parameters
    ----------
    ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz : float
        float64 coordinates of the points a, b, c, d.

    Returns
    -------
    float
        Positive if d lies on the side of plane abc that the normal
        (b - a) x (c - a) points to (a, b, c counter-clockwise seen from d),
        negative on the other side, exactly 0.0 if the four points are
        coplanar (always so when a, b, c are collinear). Only the sign is
        meaningful.
    """
    m1, m2, m3, m4, m5, m6 = normal_products(ax, ay, az, bx, by, bz, cx, cy, cz)
    wx = dx - ax
    wy = dy - ay
    wz = dz - az
    det = wx * (m1 - m2) + wy * (m3 - m4) + wz * (m5 - m6)
    perm = abs(wx) * (abs(m1) + abs(m2)) + abs(wy) * (abs(m3) + abs(m4)) + abs(wz) * (abs(m5) + abs(m6))
    if perm >= _PERM_MIN and perm < math.inf:
        bound = _O3D_ERRBOUND_A * perm
        if det > bound or -det > bound:
            return det
    return _orient3d_fallback(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz)


@njit(cache=True, nogil=True)
def orient3d_sides_float(T, P):
    """The float pass of :func:`orient3d_sides`: (d0, d1, d2, c0, c1, c2).

    d_i is the float orient3d(T0, T1, T2, P_i) and c_i whether its sign is
    certain (:func:`_o3d_certain`); the float values and the test are those of
    :func:`orient3d`, operation for operation. No branch on the data: the
    caller decides on all three at once and sends only the uncertain ones to
    :func:`orient3d_sides_settle`.
    """
    ax, ay, az, bx, by, bz, cx, cy, cz = T
    m1, m2, m3, m4, m5, m6 = normal_products(ax, ay, az, bx, by, bz, cx, cy, cz)
    nx = m1 - m2
    ny = m3 - m4
    nz = m5 - m6
    px = abs(m1) + abs(m2)
    py = abs(m3) + abs(m4)
    pz = abs(m5) + abs(m6)
    w0x = P[0] - ax
    w0y = P[1] - ay
    w0z = P[2] - az
    w1x = P[3] - ax
    w1y = P[4] - ay
    w1z = P[5] - az
    w2x = P[6] - ax
    w2y = P[7] - ay
    w2z = P[8] - az
    d0 = w0x * nx + w0y * ny + w0z * nz
    d1 = w1x * nx + w1y * ny + w1z * nz
    d2 = w2x * nx + w2y * ny + w2z * nz
    c0 = _o3d_certain(d0, abs(w0x) * px + abs(w0y) * py + abs(w0z) * pz)
    c1 = _o3d_certain(d1, abs(w1x) * px + abs(w1y) * py + abs(w1z) * pz)
    c2 = _o3d_certain(d2, abs(w2x) * px + abs(w2y) * py + abs(w2z) * pz)
    return d0, d1, d2, c0, c1, c2


#: one triangle's coordinates as a flat 9-tuple (x0, y0, z0, x1, ..., z2)
TRI_TUPLE = types.UniTuple(types.float64, 9)


# Cold, as _orient2d_fallback: generic pairs leave no vertex uncertain.
@njit_lazy(
    types.UniTuple(types.float64, 3)(TRI_TUPLE, TRI_TUPLE, *[types.float64] * 3, *[types.boolean] * 3), nogil=True
)
def orient3d_sides_settle(T, P, d0, d1, d2, c0, c1, c2):
    """Exact signs for the vertices the float pass left uncertain (c_i False).

    PERF: when T lies in an axis-aligned plane x_k = c (CAD faces at their
    nominal pose) every volume factors as (P_i,k - c) * n_k with n_k T's exact
    normal component k (see :func:`_aligned_volume_sign`): one orient2d for
    all three vertices instead of a fallback each.
    """
    s = T[0] + T[1] + T[2] + T[3] + T[4] + T[5] + T[6] + T[7] + T[8] + P[0] + P[1] + P[2]
    s += P[3] + P[4] + P[5] + P[6] + P[7] + P[8]
    k = _plane_shared_axis(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8])
    if k >= 0 and s - s == 0.0:  # all finite (an overflowing sum only skips this)
        i = (k + 1) % 3
        j = (k + 2) % 3
        n = orient2d(T[i], T[j], T[3 + i], T[3 + j], T[6 + i], T[6 + j])
        c = T[k]
        if not c0:
            d0 = _sign_of_product(P[k] - c, n)
        if not c1:
            d1 = _sign_of_product(P[3 + k] - c, n)
        if not c2:
            d2 = _sign_of_product(P[6 + k] - c, n)
        return d0, d1, d2
    if not c0:
        d0 = _orient3d_fallback(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], P[0], P[1], P[2])
    if not c1:
        d1 = _orient3d_fallback(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], P[3], P[4], P[5])
    if not c2:
        d2 = _orient3d_fallback(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], P[6], P[7], P[8])
    return d0, d1, d2


@njit(cache=True, nogil=True)
def orient3d_sides(T, P):
    """orient3d(T0, T1, T2, Pi) for the three vertices Pi of P, sharing T's plane.

    ``T`` and ``P`` are triangles as flat 9-tuples (x0, y0, z0, x1, ..., z2).
    Returns a tuple of three floats with the same exact-sign contract as
    :func:`orient3d`. PERF: the plane's cross product is formed once, and the
    three vertices pass the float filter together before any exact fallback
    (:func:`orient3d_sides_float`, :func:`orient3d_sides_settle`).
    """
    d0, d1, d2, c0, c1, c2 = orient3d_sides_float(T, P)
    if c0 & c1 & c2:
        return d0, d1, d2
    return orient3d_sides_settle(T, P, d0, d1, d2, c0, c1, c2)
