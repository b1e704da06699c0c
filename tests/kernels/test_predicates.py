"""Exact orientation predicates against rational arithmetic (tests.oracles)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.oracles import orient2d_rational, orient3d_rational

from collisionkit.kernels.core.predicates import (
    _orient2d_aligned,
    _orient2d_exact,
    _orient2d_fallback,
    _orient3d_aligned,
    _orient3d_exact,
    _orient3d_fallback,
    _two_diff,
    _two_product,
    _two_sum,
    orient2d,
    orient3d,
    orient3d_sides,
    orient3d_sides_float,
)


def sgn(x: float) -> int:
    return int(x > 0) - int(x < 0)


def o2(a, b, c) -> int:
    return sgn(orient2d(a[0], a[1], b[0], b[1], c[0], c[1]))


def o3(a, b, c, d) -> int:
    return sgn(orient3d(*a, *b, *c, *d))


def naive3(a, b, c, d) -> int:
    a, b, c, d = (np.asarray(p, dtype=np.float64) for p in (a, b, c, d))
    u, v, w = b - a, c - a, d - a
    n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
    return sgn(w[0] * n[0] + w[1] * n[1] + w[2] * n[2])


def near_coplanar(rng, n, scale=1.0, offset=0.0):
    """n quadruples whose 4th point is a rounded affine combination of the first 3."""
    out = []
    for _ in range(n):
        a, b, c = rng.random((3, 3)) * scale + offset
        s, t = rng.random(2)
        d = a + s * (b - a) + t * (c - a)
        out.append((a, b, c, d))
    return out


# --- error-free transformations ----------------------------------------------------


def test_error_free_transformations_are_exact():
    # Guards against fastmath / FMA contraction breaking Dekker and Knuth.
    rng = np.random.default_rng(1)
    for _ in range(3000):
        a, b = rng.standard_normal(2) * 2.0 ** rng.integers(-60, 60, 2)
        s, e = _two_sum(a, b)
        assert Fraction(s) + Fraction(e) == Fraction(a) + Fraction(b)
        d, e = _two_diff(a, b)
        assert Fraction(d) + Fraction(e) == Fraction(a) - Fraction(b)
        p, e = _two_product(a, b)
        assert Fraction(p) + Fraction(e) == Fraction(a) * Fraction(b)


# --- orient2d ----------------------------------------------------------------------


def test_orient2d_sign_convention():
    assert orient2d(0.0, 0.0, 1.0, 0.0, 0.0, 1.0) > 0  # counter-clockwise
    assert orient2d(0.0, 0.0, 0.0, 1.0, 1.0, 0.0) < 0
    assert orient2d(0.0, 0.0, 1.0, 1.0, 2.0, 2.0) == 0.0


def test_orient2d_classroom_grid():
    # Kettner et al. 2008, "Classroom examples of robustness problems": points
    # within a few ulps of the line y = x, where naive float64 gets signs wrong.
    q, r = (12.0, 12.0), (24.0, 24.0)
    ulp = 2.0**-53
    naive_wrong = 0
    for i in range(48):
        for j in range(48):
            p = (0.5 + i * ulp, 0.5 + j * ulp)
            exact = orient2d_rational(p, q, r)
            assert o2(p, q, r) == exact
            assert o2(q, r, p) == exact
            naive = sgn((q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]))
            naive_wrong += naive != exact
    assert naive_wrong > 0  # the float filter was defeated: the exact path decided


@pytest.mark.parametrize("scale", [1.0, 1e150, 1e200, 1e300, 1e-150, 1e-200, 1e-300, 2.0**-1060])
def test_orient2d_random_and_scaled(scale):
    rng = np.random.default_rng(2)
    for _ in range(300):
        a, b = rng.random((2, 2)) * scale
        t = rng.random()
        c = a + t * (b - a)  # nearly collinear after rounding
        for p in ((a, b, c), (a, b, rng.random(2) * scale)):
            assert o2(*p) == orient2d_rational(*p)


def test_orient2d_exact_path_directly():
    rng = np.random.default_rng(3)
    for _ in range(500):
        pts = rng.standard_normal((3, 2)) * 2.0 ** rng.integers(-40, 40)
        if rng.random() < 0.3:
            pts[2] = pts[0] + 0.5 * (pts[1] - pts[0])
        assert sgn(_orient2d_exact(*pts.ravel())) == orient2d_rational(*pts)


# --- orient3d ----------------------------------------------------------------------


def test_orient3d_sign_convention():
    a, b, c = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)
    assert orient3d(*a, *b, *c, 0.0, 0.0, 1.0) > 0  # d on the side of (b-a)x(c-a)
    assert orient3d(*a, *b, *c, 0.0, 0.0, -1.0) < 0
    assert orient3d(*a, *b, *c, 5.0, -7.0, 0.0) == 0.0
    assert orient3d(*a, *a, *c, 1.0, 2.0, 3.0) == 0.0  # degenerate plane
    assert orient3d(*a, *b, *(2.0, 0.0, 0.0), 1.0, 2.0, 3.0) == 0.0


def test_orient3d_near_coplanar_defeats_filter():
    rng = np.random.default_rng(4)
    naive_wrong = 0
    for a, b, c, d in near_coplanar(rng, 1500):
        exact = orient3d_rational(a, b, c, d)
        assert o3(a, b, c, d) == exact
        naive_wrong += naive3(a, b, c, d) != exact
    # a good share of these have a wrong naive sign: the exact fallback ran
    assert naive_wrong > 50


def test_orient3d_permutations_antisymmetric():
    rng = np.random.default_rng(5)
    for a, b, c, d in near_coplanar(rng, 200):
        s = o3(a, b, c, d)
        assert o3(b, c, a, d) == s
        assert o3(b, a, c, d) == -s
        assert o3(a, b, d, c) == -s
        assert o3(d, a, b, c) == -s  # odd permutation of four points


@pytest.mark.parametrize(
    "scale, offset",
    [
        (1e150, 0.0),
        (1e200, 0.0),
        (1e300, 0.0),  # differences overflow in float64
        (1e-150, 0.0),
        (1e-200, 0.0),
        (1e-300, 0.0),  # products underflow
        (2.0**-1050, 0.0),  # subnormal coordinates
        (1.0, 1e8),  # small configuration far from the origin
        (1e-4, 1e8),
        (1e180, 1e190),
    ],
)
def test_orient3d_extreme_scales(scale, offset):
    rng = np.random.default_rng(6)
    for a, b, c, d in near_coplanar(rng, 200, scale, offset):
        assert o3(a, b, c, d) == orient3d_rational(a, b, c, d)
        e = rng.random(3) * scale + offset
        assert o3(a, b, c, e) == orient3d_rational(a, b, c, e)


def test_orient3d_exact_zero_on_integer_planes():
    rng = np.random.default_rng(7)
    for _ in range(300):
        o = rng.integers(-50, 50, 3)
        e1, e2 = rng.integers(-5, 6, (2, 3))
        pts = [o + i * e1 + j * e2 for i, j in rng.integers(-9, 10, (4, 2))]
        pts = [p.astype(np.float64) for p in pts]
        assert orient3d(*pts[0], *pts[1], *pts[2], *pts[3]) == 0.0
        # one ulp off the plane (a nonzero coordinate: nudging an exact 0 to
        # 5e-324 next to coordinates ~1e2 leaves the documented 2**300 span)
        bumped = pts[3].copy()
        k = int(np.argmax(np.abs(bumped)))
        bumped[k] = np.nextafter(bumped[k], np.inf)
        assert o3(pts[0], pts[1], pts[2], bumped) == orient3d_rational(*pts[:3], bumped)


def test_orient3d_exact_path_directly():
    rng = np.random.default_rng(8)
    for a, b, c, d in near_coplanar(rng, 300, 2.0 ** rng.integers(-30, 30)):
        assert sgn(_orient3d_exact(*a, *b, *c, *d)) == orient3d_rational(a, b, c, d)


def test_orient3d_sides_matches_orient3d():
    rng = np.random.default_rng(9)
    for a, b, c, d in near_coplanar(rng, 200):
        p = np.array([d, rng.random(3), a])
        sides = orient3d_sides(tuple(np.r_[a, b, c]), tuple(p.ravel()))
        for q, s in zip(p, sides, strict=True):
            assert sgn(s) == orient3d_rational(a, b, c, q)


@pytest.mark.parametrize("scale, offset", [(1.0, 0.0), (1e150, 0.0), (1e-150, 0.0), (1e-3, 1e8), (2.0**-1060, 0.0)])
def test_orient3d_sides_float_certain_means_exact(scale, offset):
    # the float pass may only say "certain" where its sign is the exact one
    rng = np.random.default_rng(13)
    certain = uncertain = 0
    quads = near_coplanar(rng, 300, scale, offset) + [tuple(rng.random((4, 3)) * scale + offset) for _ in range(300)]
    quads += [tuple(P) for P in _aligned_quadruples(rng, 300, scale, offset)]
    for a, b, c, d in quads:
        T = tuple(np.r_[a, b, c])
        P = tuple(np.r_[d, a, (np.asarray(b) + np.asarray(d)) / 2])
        d0, d1, d2, c0, c1, c2 = orient3d_sides_float(T, P)
        for q, val, ok in zip((d, a, P[6:]), (d0, d1, d2), (c0, c1, c2), strict=True):
            if ok:
                certain += 1
                assert sgn(val) == orient3d_rational(a, b, c, tuple(q))
            else:
                uncertain += 1
    assert uncertain > 0
    if scale < 1e-100:
        assert certain == 0  # products below the normal range: the filter refuses, the exact path decides
    else:
        assert certain > 0


def test_non_finite_inputs_give_nan():
    # float arguments only: int arguments would compile another specialisation
    assert math.isnan(orient3d(math.inf, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
    assert math.isnan(orient2d(math.nan, 0.0, 1.0, 0.0, 0.0, 1.0))
    # aligned configurations take the shortcuts, which must not hide a non-finite input
    assert math.isnan(orient3d(math.inf, 0.0, 0.0, math.inf, 1.0, 0.0, math.inf, 0.0, 1.0, 0.0, 0.0, 0.0))
    assert math.isnan(orient2d(math.inf, 0.0, math.inf, 1.0, 0.0, 0.0))


# --- exact shortcuts (axis-aligned planes and edges, repeated points) ---------------------

# (scale, offset) of the coordinates: unit, huge, tiny, far from the origin, mixed
_ALIGNED_RANGES = [(1.0, 0.0), (1e150, 0.0), (1e-150, 0.0), (1e-3, 1e8), (1e150, -1e152), (2.0**-1060, 0.0)]


def _aligned_quadruples(rng, n, scale, offset):
    """Quadruples with three points sharing a coordinate (any triple, any axis), often
    with the fourth in that plane too, repeated points or collinear triples: the exact
    zeros and near zeros of CAD data that defeat the float filter."""
    out = []
    for k in range(n):
        kind = k % 4
        if kind == 0:  # small integers (many exact zeros)
            P = rng.integers(-3, 4, (4, 3)).astype(np.float64)
        elif kind == 1:  # generic floats
            P = rng.random((4, 3))
        elif kind == 2:  # dyadic grid of 1/8 (exact under the offsets below)
            P = rng.integers(-16, 17, (4, 3)) / 8.0
        else:  # thirds: inexact decimal-like coordinates
            P = rng.integers(-9, 10, (4, 3)) / 3.0
        P = P * scale + offset
        axis = rng.integers(3)
        triple = rng.choice(4, 3, replace=False)
        P[triple, axis] = P[triple[0], axis]
        r = rng.random()
        if r < 0.3:  # all four in the plane
            P[:, axis] = P[triple[0], axis]
        elif r < 0.45:  # a repeated point
            i, j = rng.choice(4, 2, replace=False)
            P[i] = P[j]
        elif r < 0.6:  # the fourth point one ulp off the plane
            other = ({0, 1, 2, 3} - set(triple.tolist())).pop()
            P[other, axis] = np.nextafter(P[triple[0], axis], rng.choice([-np.inf, np.inf]))
        out.append(P)
    return out


@pytest.mark.parametrize("scale, offset", _ALIGNED_RANGES)
def test_orient3d_shortcuts_against_rational(scale, offset):
    rng = np.random.default_rng(10)
    decided = 0
    quads = _aligned_quadruples(rng, 400, scale, offset)
    for P in quads:
        a, b, c, d = (tuple(p) for p in P)
        expected = orient3d_rational(a, b, c, d)
        assert o3(a, b, c, d) == expected, P.tolist()
        assert sgn(_orient3d_fallback(*a, *b, *c, *d)) == expected, P.tolist()
        done, s = _orient3d_aligned(*a, *b, *c, *d)
        if done:
            decided += 1
            assert sgn(s) == expected, P.tolist()
            # the shortcut and the expansion path agree where the expansion is exact (nonzero
            # inputs within 2**300; a one-ulp nudge of an exact 0 leaves that span, the
            # shortcut forms no product and has no such limit)
            nz = np.abs(P[P != 0])
            if nz.size == 0 or nz.max() <= 2.0**300 * nz.min():
                assert sgn(_orient3d_exact(*a, *b, *c, *d)) == expected
    assert decided >= 0.9 * len(quads)  # a repeated point can undo the shared coordinate


@pytest.mark.parametrize("scale, offset", _ALIGNED_RANGES)
def test_orient2d_shortcuts_against_rational(scale, offset):
    rng = np.random.default_rng(11)
    decided = 0
    for k in range(400):
        P = (rng.integers(-3, 4, (3, 2)) if k % 2 else rng.random((3, 2))) * scale + offset
        axis = rng.integers(2)
        i, j = rng.choice(3, 2, replace=False)
        if k % 5:
            P[i, axis] = P[j, axis]  # an axis-parallel edge (or a repeated point)
        if k % 7 == 0:
            P[i] = P[j]
        a, b, c = (tuple(p) for p in P)
        expected = orient2d_rational(a, b, c)
        assert o2(a, b, c) == expected, P.tolist()
        assert sgn(_orient2d_fallback(*a, *b, *c)) == expected, P.tolist()
        done, s = _orient2d_aligned(*a, *b, *c)
        if done:
            decided += 1
            assert sgn(s) == expected, P.tolist()
    assert decided >= 300


def test_shortcuts_leave_generic_inputs_to_the_expansions():
    rng = np.random.default_rng(12)
    for a, b, c, d in near_coplanar(rng, 200):
        assert not _orient3d_aligned(*a, *b, *c, *d)[0]
        assert not _orient2d_aligned(a[0], a[1], b[0], b[1], d[0], d[1])[0]


# --- property-based ---------------------------------------------------------------------

# Coordinates sharing one binary exponent range (the documented limit: nonzero
# inputs of one call within ~2**300 of each other), plus exact zeros.
_mant = st.integers(-(2**53) + 1, 2**53 - 1)


@st.composite
def points(draw, n, dim):
    e = draw(st.integers(-1074, 850))
    spread = draw(st.integers(0, 120))
    out = []
    for _ in range(n):
        out.append(tuple(math.ldexp(draw(_mant), e + draw(st.integers(0, spread))) for _ in range(dim)))
    return out


@settings(deadline=None, max_examples=200)
@given(points(4, 3), st.floats(0, 1), st.floats(0, 1))
def test_orient3d_property(pts, s, t):
    a, b, c, d = pts
    assert o3(a, b, c, d) == orient3d_rational(a, b, c, d)
    # and a nearly coplanar fourth point, when it can be formed without overflow
    with np.errstate(all="ignore"):
        A, B, C = (np.array(p) for p in (a, b, c))
        e = A + s * (B - A) + t * (C - A)
    # Documented domain of the exact path: the nonzero inputs of one predicate
    # span at most ~2**300. Mixing subnormal offsets with O(1) coordinates leaves it
    # (regression: s = 2.2e-311 beside 354 underflowed the expansion products).
    nonzero = np.abs(np.concatenate([np.ravel(pts[:3]), e]))
    nonzero = nonzero[nonzero > 0]
    in_domain = nonzero.size == 0 or nonzero.max() <= 2.0**300 * nonzero.min()
    if np.all(np.isfinite(e)) and in_domain:
        assert o3(a, b, c, e) == orient3d_rational(a, b, c, e)


@settings(deadline=None, max_examples=200)
@given(points(3, 2))
def test_orient2d_property(pts):
    a, b, c = pts
    assert o2(a, b, c) == orient2d_rational(a, b, c)
    assert o2(b, c, a) == orient2d_rational(a, b, c)


@pytest.mark.parametrize("scale, offset", _ALIGNED_RANGES)
def test_orient3d_sides_on_axis_aligned_planes(scale, offset):
    # T in a plane x_k = c (CAD faces): the settle step factors every volume at once
    rng = np.random.default_rng(14)
    for it in range(300):
        k = it % 3
        T = (rng.integers(-3, 4, (3, 3)) / (3.0 if it % 2 else 4.0)) * scale + offset
        P = (rng.integers(-3, 4, (3, 3)) / 4.0) * scale + offset
        T[:, k] = T[0, k]
        P[rng.random(3) < 0.5, k] = T[0, k]  # some vertices in the plane
        if it % 5 == 0:
            P[0, k] = np.nextafter(T[0, k], np.inf)  # one ulp off it
        if it % 7 == 0:
            T[2] = T[0] + 2.0 * (T[1] - T[0])  # T degenerate (collinear in its plane)
            T[2, k] = T[0, k]
        sides = orient3d_sides(tuple(T.ravel()), tuple(P.ravel()))
        for q, v in zip(P, sides, strict=True):
            assert sgn(v) == orient3d_rational(*map(tuple, T), tuple(q)), (T.tolist(), P.tolist())
