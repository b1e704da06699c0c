"""Triangle-triangle kernels against the exact rational oracle (tests.oracles).

Guigue-Devillers is exact: it must equal ``tri_tri_rational`` everywhere.
Moller is float64: it must equal the oracle where all its products are exact
(small integer coordinates, and exact rescalings / translations of them) and
agree with it on generic float inputs.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from tests.oracles import orient3d_rational, tri_tri_rational

from collisionkit.constants import TRI_TEST_GUIGUE, TRI_TEST_MOLLER
from collisionkit.kernels.triangle.tri_tri import (
    _common_axis_plane,
    tri_is_degenerate,
    tri_tri_guigue,
    tri_tri_intersect,
    tri_tri_moller,
)

METHODS = {"guigue": TRI_TEST_GUIGUE, "moller": TRI_TEST_MOLLER}
GUIGUE = TRI_TEST_GUIGUE
MOLLER = TRI_TEST_MOLLER


def tri(*rows) -> np.ndarray:
    return np.array(rows, dtype=np.float64)


def hit(t1, t2, method) -> bool:
    return bool(tri_tri_intersect(np.ascontiguousarray(t1), np.ascontiguousarray(t2), method))


T0 = tri((0, 0, 0), (4, 0, 0), (0, 4, 0))  # in the plane z = 0
TILT = tri((3, 0, 0), (0, 3, 0), (0, 0, 3))  # in the plane x + y + z = 3

# (name, t1, t2, expected); integer coordinates: every method must be exact here.
CASES = [
    # --- proper, non-coplanar
    ("parallel_planes", T0, tri((0, 0, 1), (4, 0, 1), (0, 4, 1)), False),
    ("separated", T0, tri((5, 5, -1), (6, 5, 1), (5, 6, 1)), False),
    ("piercing", T0, tri((1, 1, -2), (1, 1, 2), (5, 5, 0)), True),
    ("crossing_plane_x1", T0, tri((1, -1, -1), (1, 3, -1), (1, 1, 2)), True),
    ("vertex_on_vertex", T0, tri((0, 0, 0), (-1, -1, 3), (-2, 1, 2)), True),
    ("vertex_on_edge", T0, tri((2, 0, 0), (2, -2, 3), (3, -1, 3)), True),
    ("vertex_on_face", T0, tri((1, 1, 0), (1, 1, 3), (2, 0, 3)), True),
    ("vertex_above_face", T0, tri((1, 1, 1), (1, 1, 3), (2, 0, 3)), False),
    ("edge_crosses_edge", T0, tri((2, -1, -1), (2, 1, 1), (2, -3, 1)), True),
    ("edge_misses_edge", T0, tri((2, -2, -1), (2, 0, 1), (2, -4, 1)), False),
    ("edge_on_edge_overlap", T0, tri((2, 0, 0), (6, 0, 0), (3, 0, 3)), True),
    ("edge_on_edge_touch", T0, tri((4, 0, 0), (6, 0, 0), (5, 0, 3)), True),
    ("edge_on_edge_disjoint", T0, tri((5, 0, 0), (7, 0, 0), (6, 0, 3)), False),
    ("shared_edge_folded", T0, tri((0, 0, 0), (4, 0, 0), (2, 0, 3)), True),
    ("shared_edge_folded_down", T0, tri((4, 0, 0), (0, 0, 0), (2, -1, -3)), True),
    ("edge_in_plane_outside", T0, tri((3, 3, 0), (5, 1, 0), (4, 4, 4)), False),
    ("edge_in_plane_crossing", T0, tri((-1, 1, 0), (5, 1, 0), (2, 1, 4)), True),
    ("tilted_piercing", TILT, tri((1, 1, 0), (1, 1, 3), (0, 0, 5)), True),
    ("tilted_vertex_on_face", TILT, tri((1, 1, 1), (2, 2, 2), (1, 3, 3)), True),
    ("tilted_miss", TILT, tri((2, 2, 0), (3, 3, 0), (2, 3, -1)), False),
    # --- coplanar, proper
    ("coplanar_overlap", T0, tri((1, 1, 0), (5, 1, 0), (1, 5, 0)), True),
    ("coplanar_inside", T0, tri((1, 1, 0), (2, 1, 0), (1, 2, 0)), True),
    ("coplanar_identical", T0, T0.copy(), True),
    ("coplanar_disjoint", T0, tri((3, 3, 0), (5, 3, 0), (3, 5, 0)), False),
    ("coplanar_vertex_on_edge", T0, tri((2, 2, 0), (4, 4, 0), (3, 5, 0)), True),
    ("coplanar_shared_edge", T0, tri((4, 0, 0), (0, 4, 0), (4, 4, 0)), True),
    ("coplanar_shared_vertex", T0, tri((4, 0, 0), (8, 0, 0), (6, -3, 0)), True),
    ("coplanar_star", tri((0, 0, 0), (6, 0, 0), (3, 6, 0)), tri((0, 4, 0), (6, 4, 0), (3, -2, 0)), True),
    ("coplanar_near_miss", T0, tri((3, 2, 0), (5, 2, 0), (4, 4, 0)), False),
    ("coplanar_collinear_edges", T0, tri((4, 0, 0), (6, 0, 0), (5, -2, 0)), True),
    ("coplanar_tilted_inside", TILT, tri((1, 1, 1), (2, 1, 0), (1, 2, 0)), True),
    ("coplanar_tilted_disjoint", TILT, tri((4, 0, -1), (5, -1, -1), (4, -1, 0)), False),
    # --- degenerate: segment against triangle
    ("seg_pierces", T0, tri((1, 1, -1), (1, 1, 1), (1, 1, 0)), True),
    ("seg_touches_edge", T0, tri((2, 0, 0), (2, -3, 3), (2, -1, 1)), True),
    ("seg_touches_face_at_end", T0, tri((1, 1, 0), (1, 1, 2), (1, 1, 1)), True),
    ("seg_misses", T0, tri((5, 5, -1), (5, 5, 1), (5, 5, 0)), False),
    ("seg_passes_beside_edge", T0, tri((2, -1, -1), (2, -1, 1), (2, -1, 0)), False),
    # its xy shadow crosses T0, but it meets z = 0 at (5, 5, 0): the published G-D
    # code calls an all-zero sign pattern "coplanar" and would answer from the shadow
    ("seg_shadow_overlaps", T0, tri((1, 1, 1), (9, 9, -1), (5, 5, 0)), False),
    ("seg_in_plane_crossing", T0, tri((-1, 1, 0), (5, 1, 0), (2, 1, 0)), True),
    ("seg_in_plane_outside", T0, tri((3, 3, 0), (5, 5, 0), (4, 4, 0)), False),
    ("seg_in_plane_touch_vertex", T0, tri((4, 0, 0), (6, 0, 0), (5, 0, 0)), True),
    ("seg_repeated_vertex", T0, tri((1, 1, -1), (1, 1, -1), (1, 1, 1)), True),
    ("seg_tilted_through", TILT, tri((0, 0, 0), (2, 2, 2), (1, 1, 1)), True),
    # --- degenerate: point against triangle
    ("point_on_face", T0, tri((1, 1, 0), (1, 1, 0), (1, 1, 0)), True),
    ("point_on_vertex", T0, tri((0, 0, 0), (0, 0, 0), (0, 0, 0)), True),
    ("point_on_edge", T0, tri((2, 0, 0), (2, 0, 0), (2, 0, 0)), True),
    ("point_above", T0, tri((1, 1, 1), (1, 1, 1), (1, 1, 1)), False),
    ("point_in_plane_outside", T0, tri((3, 3, 0), (3, 3, 0), (3, 3, 0)), False),
    ("point_on_tilted_face", TILT, tri((1, 1, 1), (1, 1, 1), (1, 1, 1)), True),
    # --- degenerate against degenerate
    ("seg_seg_cross", tri((0, 0, 0), (2, 2, 0), (1, 1, 0)), tri((0, 2, 0), (2, 0, 0), (1, 1, 0)), True),
    ("seg_seg_cross_3d", tri((0, 0, 0), (2, 2, 2), (1, 1, 1)), tri((0, 2, 0), (2, 0, 2), (1, 1, 1)), True),
    ("seg_seg_skew", tri((0, 0, 0), (2, 2, 0), (1, 1, 0)), tri((0, 2, 1), (2, 0, 1), (1, 1, 1)), False),
    ("seg_seg_collinear_overlap", tri((0, 0, 0), (2, 2, 2), (1, 1, 1)), tri((1, 1, 1), (3, 3, 3), (2, 2, 2)), True),
    ("seg_seg_collinear_touch", tri((0, 0, 0), (2, 2, 2), (1, 1, 1)), tri((2, 2, 2), (4, 4, 4), (3, 3, 3)), True),
    ("seg_seg_collinear_gap", tri((0, 0, 0), (2, 2, 2), (1, 1, 1)), tri((3, 3, 3), (5, 5, 5), (4, 4, 4)), False),
    ("seg_seg_parallel", tri((0, 0, 0), (2, 2, 0), (1, 1, 0)), tri((1, 0, 0), (3, 2, 0), (2, 1, 0)), False),
    ("seg_seg_t_junction", tri((0, 0, 0), (4, 0, 0), (2, 0, 0)), tri((2, 0, 0), (2, 3, 0), (2, 1, 0)), True),
    ("seg_seg_coplanar_miss", tri((0, 0, 0), (4, 0, 0), (2, 0, 0)), tri((2, 1, 0), (2, 3, 0), (2, 2, 0)), False),
    ("seg_point_inside", tri((0, 0, 0), (4, 4, 4), (2, 2, 2)), tri((1, 1, 1), (1, 1, 1), (1, 1, 1)), True),
    ("seg_point_endpoint", tri((0, 0, 0), (4, 4, 4), (2, 2, 2)), tri((4, 4, 4), (4, 4, 4), (4, 4, 4)), True),
    ("seg_point_on_line_outside", tri((0, 0, 0), (4, 4, 4), (2, 2, 2)), tri((5, 5, 5), (5, 5, 5), (5, 5, 5)), False),
    ("seg_point_off_line", tri((0, 0, 0), (4, 4, 4), (2, 2, 2)), tri((1, 1, 0), (1, 1, 0), (1, 1, 0)), False),
    ("point_point_equal", tri((1, 2, 3), (1, 2, 3), (1, 2, 3)), tri((1, 2, 3), (1, 2, 3), (1, 2, 3)), True),
    ("point_point_differ", tri((1, 2, 3), (1, 2, 3), (1, 2, 3)), tri((1, 2, 4), (1, 2, 4), (1, 2, 4)), False),
]
CASE_IDS = [c[0] for c in CASES]

PERMS = list(itertools.permutations(range(3)))


@pytest.mark.parametrize("name, t1, t2, expected", CASES, ids=CASE_IDS)
def test_cases_agree_with_oracle(name, t1, t2, expected):
    assert tri_tri_rational(t1, t2) is expected
    assert tri_tri_rational(t2, t1) is expected


@pytest.mark.parametrize("method", METHODS.values(), ids=METHODS.keys())
@pytest.mark.parametrize("name, t1, t2, expected", CASES, ids=CASE_IDS)
def test_cases_all_vertex_orders_and_swap(name, t1, t2, expected, method):
    for p in PERMS:
        for q in PERMS:
            a, b = t1[list(p)], t2[list(q)]
            assert hit(a, b, method) is expected, (p, q)
            assert hit(b, a, method) is expected, (p, q, "swapped")


def _exact_transforms():
    """Maps that keep every incidence of integer inputs exact in float64."""
    yield "identity", lambda t: t
    yield "axes_zxy", lambda t: t[:, [2, 0, 1]]
    yield "axes_yxz", lambda t: t[:, [1, 0, 2]]  # a reflection
    yield "mirror_x", lambda t: t * np.array([-1.0, 1.0, 1.0])
    yield "offset_1e8", lambda t: t + np.array([1e8, -3e8, 2e8])
    yield "small_far", lambda t: t * 2.0**-20 + np.array([1e8, 1e8, -1e8])
    yield "scale_2^100", lambda t: t * 2.0**100
    yield "scale_2^-100", lambda t: t * 2.0**-100
    yield "huge_1e199", lambda t: t * 2.0**660  # 4 * 2**660 ~ 1.9e199
    yield "huge_offset", lambda t: t * 2.0**600 + 2.0**650
    yield "tiny_1e-199", lambda t: t * 2.0**-660
    yield "tiny_offset", lambda t: t * 2.0**-660 + 2.0**-620


TRANSFORMS = list(_exact_transforms())
# Moller's products have degree 7: keep it inside float64's range.
MOLLER_SAFE = {"identity", "axes_zxy", "axes_yxz", "mirror_x", "offset_1e8", "small_far"}
MOLLER_SAFE |= {"scale_2^100", "scale_2^-100"}


@pytest.mark.parametrize("tname, f", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_cases_under_exact_transforms(tname, f):
    for name, t1, t2, expected in CASES:
        a, b = f(t1), f(t2)
        assert hit(a, b, GUIGUE) is expected, name
        assert hit(b, a, GUIGUE) is expected, name
        if tname in MOLLER_SAFE:
            assert hit(a, b, MOLLER) is expected, name
            assert hit(b, a, MOLLER) is expected, name


# --- random small-integer inputs: every method must be exact -------------------------------


def _random_pairs(seed, n, radius):
    rng = np.random.default_rng(seed)
    return [rng.integers(-radius, radius + 1, (2, 3, 3)).astype(np.float64) for _ in range(n)]


def _structured_pairs(seed, n):
    """Coplanar pairs, collinear (degenerate) triangles, segments in a plane."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        o = rng.integers(-2, 3, 3)
        e1, e2 = rng.integers(-2, 3, (2, 3))
        kind = k % 4
        if kind == 0:  # coplanar pair
            c = rng.integers(-2, 3, (6, 2))
            p = o + c[:, :1] * e1 + c[:, 1:] * e2
            t1, t2 = p[:3], p[3:]
        elif kind == 1:  # collinear t1 against anything
            t1 = o + np.outer(rng.integers(-2, 3, 3), e1)
            t2 = rng.integers(-2, 3, (3, 3))
        elif kind == 2:  # two collinear triangles, often on one line
            t1 = o + np.outer(rng.integers(-2, 3, 3), e1)
            d = e1 if rng.random() < 0.5 else e2
            o2 = o + rng.integers(-1, 2) * e1 if rng.random() < 0.5 else rng.integers(-2, 3, 3)
            t2 = o2 + np.outer(rng.integers(-2, 3, 3), d)
        else:  # a segment or point in the plane of t1
            c = rng.integers(-2, 3, (5, 2))
            p = o + c[:, :1] * e1 + c[:, 1:] * e2
            t1 = p[:3]
            t2 = np.array([p[3], p[4], p[rng.integers(3, 5)]])
        out.append((t1.astype(np.float64), t2.astype(np.float64)))
    return out


RANDOM_SETS = {
    "radius1": _random_pairs(11, 150, 1),
    "radius2": _random_pairs(12, 150, 2),
    "radius32": _random_pairs(13, 150, 32),
    "structured": _structured_pairs(14, 300),
}


@pytest.mark.parametrize("set_name", RANDOM_SETS.keys())
def test_random_small_integers_exact(set_name):
    for t1, t2 in RANDOM_SETS[set_name]:
        expected = tri_tri_rational(t1, t2)
        for method in METHODS.values():
            assert hit(t1, t2, method) is expected, (t1.tolist(), t2.tolist(), method)


small_int_tri = st.lists(st.integers(-3, 3), min_size=9, max_size=9).map(
    lambda v: np.array(v, dtype=np.float64).reshape(3, 3)
)


@settings(deadline=None, max_examples=150)
@given(small_int_tri, small_int_tri, st.permutations(range(3)), st.permutations(range(3)))
def test_property_small_integers(t1, t2, p, q):
    expected = tri_tri_rational(t1, t2)
    for method in METHODS.values():
        assert hit(t1, t2, method) is expected
        # symmetric and invariant under vertex permutations
        assert hit(t2[list(q)], t1[list(p)], method) is expected


@settings(deadline=None, max_examples=100)
@given(
    st.lists(st.integers(-2, 2), min_size=2, max_size=2),
    st.lists(st.integers(-2, 2), min_size=18, max_size=18),
    st.integers(-2, 2),
)
def test_property_coplanar_small_integers(basis, coeffs, shift):
    # both triangles in the plane spanned by two integer vectors
    e1 = np.array([1, basis[0], shift], dtype=np.float64)
    e2 = np.array([basis[1], 1, -shift], dtype=np.float64)
    c = np.array(coeffs, dtype=np.float64).reshape(6, 3)[:, :2]
    pts = c[:, :1] * e1 + c[:, 1:] * e2
    t1, t2 = pts[:3], pts[3:]
    expected = tri_tri_rational(t1, t2)
    for method in METHODS.values():
        assert hit(t1, t2, method) is expected
        assert hit(t2, t1, method) is expected


# --- one ulp either side of touching --------------------------------------------------------


def _touch_configs(seed, n):
    """Touching configurations with generic (dyadic) float coordinates.

    Yields (t1, t2, i, axis): t2's vertex i touches t1, and moving that vertex
    along ``axis`` by one ulp either way separates or crosses.
    """
    rng = np.random.default_rng(seed)
    plane = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])  # x + y + z = 1
    for _ in range(n):
        a, b = rng.integers(2**18, 2**19, 2) * 2.0**-21  # inside, exactly on the plane
        p = np.array([a, b, 1.0 - a - b])
        up = rng.random(3) + 0.1
        yield plane, np.array([p, p + up, p + up[::-1] + 0.3]), 0, 2  # vertex on face
        q = np.array([a, 1.0 - a, 0.0])  # on the edge (1,0,0)-(0,1,0) of the plane triangle
        yield plane, np.array([q, q + up, q + (0.2, 0.1, 0.7)]), 0, 0  # vertex on edge
        c = 0.1 + rng.random() * 0.01  # horizontal plane z = c: non-dyadic height
        h = np.array([[0.0, 0, c], [1.0, 0, c], [0.0, 1.0, c]])
        r = np.array([a, b, c])
        yield h, np.array([r, r + (0.3, 0.2, 1.0), r + (-0.1, 0.4, 2.0)]), 0, 2


def test_one_ulp_near_misses_guigue():
    n_true = n_false = 0
    for t1, t2, i, axis in _touch_configs(21, 25):
        assert hit(t1, t2, GUIGUE) is tri_tri_rational(t1, t2) is True
        for direction in (np.inf, -np.inf):
            moved = t2.copy()
            moved[i, axis] = np.nextafter(moved[i, axis], direction)
            expected = tri_tri_rational(t1, moved)
            n_true += expected
            n_false += not expected
            assert hit(t1, moved, GUIGUE) is expected
            assert hit(moved, t1, GUIGUE) is expected
            big = 2.0**600  # the same configuration at ~1e180, then ~1e-180
            assert hit(t1 * big, moved * big, GUIGUE) is expected
            assert hit(t1 / big, moved / big, GUIGUE) is expected
    assert n_true > 0 and n_false > 0


def test_edge_edge_one_ulp_guigue():
    rng = np.random.default_rng(22)
    for _ in range(40):
        # two segments crossing exactly at a dyadic point x; triangles built on them
        x = rng.integers(1, 2**20, 3) * 2.0**-20
        d1, d2 = rng.integers(1, 64, (2, 3)) * 2.0**-6
        t1 = np.array([x - d1, x + d1, x + rng.random(3) + 0.5])
        t2 = np.array([x - d2, x + d2, x - rng.random(3) - 0.5])
        assert hit(t1, t2, GUIGUE) is tri_tri_rational(t1, t2)
        for direction in (np.inf, -np.inf):
            moved = t2.copy()
            moved[:2, 1] = np.nextafter(moved[:2, 1], direction)
            assert hit(t1, moved, GUIGUE) is tri_tri_rational(t1, moved)


# --- float inputs: Guigue exact, Moller agrees on generic ones --------------------------------


def _near_coplanar_pairs(seed, n, scale=1.0, offset=0.0):
    """t2 has a vertex on t1's plane up to rounding: the float filter cannot decide."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        t1 = rng.random((3, 3))
        s, t = rng.random(2) * 0.5
        d = t1[0] + s * (t1[1] - t1[0]) + t * (t1[2] - t1[0])
        n1 = np.cross(t1[1] - t1[0], t1[2] - t1[0])
        t2 = np.array([d, d + n1 + rng.random(3) * 0.1, d + n1 - rng.random(3) * 0.1])
        out.append((t1 * scale + offset, t2 * scale + offset))
    return out


def test_near_coplanar_vertices_guigue():
    naive_wrong = 0
    for t1, t2 in _near_coplanar_pairs(31, 100):
        expected = tri_tri_rational(t1, t2)
        assert hit(t1, t2, GUIGUE) is expected
        assert hit(t2, t1, GUIGUE) is expected
        n1 = np.cross(t1[1] - t1[0], t1[2] - t1[0])
        naive_wrong += np.sign(np.dot(n1, t2[0] - t1[0])) != orient3d_rational(*t1, t2[0])
    assert naive_wrong > 0  # the filter was defeated, the exact fallback decided


@pytest.mark.parametrize(
    "scale, offset",
    [(1e150, 0.0), (1e200, 0.0), (1e-150, 0.0), (1e-200, 0.0), (1.0, 1e8), (1e-3, -1e8), (1e190, 1e199)],
)
def test_extreme_scales_guigue(scale, offset):
    rng = np.random.default_rng(32)
    pairs = _near_coplanar_pairs(33, 40, scale, offset)
    pairs += [(rng.random((3, 3)) * scale + offset, rng.random((3, 3)) * scale + offset) for _ in range(40)]
    for t1, t2 in pairs:
        expected = tri_tri_rational(t1, t2)
        assert hit(t1, t2, GUIGUE) is expected
        assert hit(t2, t1, GUIGUE) is expected


def test_generic_floats_moller_agrees():
    rng = np.random.default_rng(34)
    for scale, offset in ((1.0, 0.0), (1e-3, 0.0), (1e3, 0.0), (1.0, 1e8)):
        for _ in range(60):
            t1 = rng.random((3, 3)) * scale + offset
            t2 = (rng.random((3, 3)) + 0.3) * scale + offset
            expected = tri_tri_rational(t1, t2)
            assert hit(t1, t2, GUIGUE) is expected
            assert hit(t1, t2, MOLLER) is expected


@settings(deadline=None, max_examples=60)
@given(st.lists(st.floats(-1.0, 1.0), min_size=18, max_size=18))
def test_property_floats_guigue(v):
    t1 = np.array(v[:9]).reshape(3, 3)
    t2 = np.array(v[9:]).reshape(3, 3)
    assert hit(t1, t2, GUIGUE) is tri_tri_rational(t1, t2)


# --- CAD flats: axis-aligned planes, shared vertices, collinear edges ------------------------

# (scale, offset) of the in-plane coordinates and of the plane's height
_CAD_RANGES = [(1.0, 0.0), (1e150, 0.0), (1e-150, 0.0), (1e-3, 1e8), (0.1, 0.0), (1e150, 1e152)]


def _cad_pairs(seed, n, scale, offset):
    """Pairs as CAD parts at their nominal pose give them: faces in one axis-aligned plane
    (a small grid, so vertices are shared and edges collinear; degenerate triangles too),
    walls standing on such a face with vertices or an edge in its plane, and the same one
    ulp off the plane (the coplanar fast path must not take them)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        axis = int(rng.integers(3))
        h = rng.choice([0.0, 1.0, 0.1, -7.0 / 3.0]) * scale + offset
        uv = (rng.integers(-2, 3, (6, 2)) + rng.choice([0.0, 1.0 / 3.0], (6, 2))) * scale + offset
        if k % 11 == 0:
            uv[2] = uv[0] + 2 * (uv[1] - uv[0])  # a collinear (degenerate) triangle
        pts = np.empty((6, 3))
        pts[:, axis] = h
        pts[:, [c for c in range(3) if c != axis]] = uv
        t1, t2 = pts[:3].copy(), pts[3:].copy()
        kind = k % 4
        if kind == 1:  # a wall on t1's plane: t2 keeps one or two vertices in the plane
            t2[2, axis] = h + rng.choice([-1.0, 1.0]) * scale
            if rng.random() < 0.5:
                t2[1, axis] = h + rng.choice([-1.0, 1.0]) * scale
        elif kind == 2:  # one ulp off the plane: nearly coplanar
            i = rng.integers(3)
            t2[i, axis] = np.nextafter(h, rng.choice([-np.inf, np.inf]))
        elif kind == 3:  # shared vertices with t1
            t2[0] = t1[rng.integers(3)]
            if rng.random() < 0.5:
                t2[1] = t1[rng.integers(3)]
        out.append((t1, t2, axis, kind))
    return out


@pytest.mark.parametrize("scale, offset", _CAD_RANGES)
def test_cad_flats_guigue(scale, offset):
    n_fast = n_true = n_false = 0
    for t1, t2, axis, kind in _cad_pairs(51, 240, scale, offset):
        expected = tri_tri_rational(t1, t2)
        n_true += expected
        n_false += not expected
        for a, b in ((t1, t2), (t2, t1), (t1[::-1], t2), (t1, t2[[1, 2, 0]])):
            assert hit(a, b, GUIGUE) is expected, (a.tolist(), b.tolist())
        fast = _common_axis_plane(tuple(t1.ravel()), tuple(t2.ravel()))
        if kind in (0, 3) and t2[:, axis].min() == t2[:, axis].max():
            assert fast == axis
            n_fast += 1
        elif kind == 2:
            assert fast < 0  # one ulp off the plane: the exact 3-D path decides
    assert n_fast >= 100 and n_true > 0 and n_false > 0


# --- the float stage decides only what the exact test would -----------------------------------


def _mixed_pairs(seed, n):
    """Random, touching, coplanar, near-coplanar and degenerate pairs at one magnitude each."""
    rng = np.random.default_rng(seed)
    out = []
    scales = [(1.0, 0.0), (1e150, 0.0), (1e-150, 0.0), (1e-3, 1e8), (1e3, -1e5)]
    for k in range(n):
        scale, offset = scales[k % len(scales)]
        kind = (k // len(scales)) % 6
        t1 = rng.random((3, 3))
        if kind == 0:  # generic, overlapping boxes
            t2 = rng.random((3, 3)) * 0.8 + 0.2
        elif kind == 1:  # sharing a vertex or an edge
            t2 = rng.random((3, 3)) + 0.1
            t2[0] = t1[rng.integers(3)]
            if rng.random() < 0.5:
                t2[1] = t1[(rng.integers(3))]
        elif kind == 2:  # coplanar (dyadic combinations: exactly in t1's plane when exact)
            c = rng.integers(-4, 5, (3, 2)) / 4.0
            t1 = rng.integers(-4, 5, (3, 3)) / 4.0
            t2 = t1[0] + c[:, :1] * (t1[1] - t1[0]) + c[:, 1:] * (t1[2] - t1[0])
        elif kind == 3:  # a vertex on t1's plane up to rounding
            ((t1, t2),) = _near_coplanar_pairs(int(rng.integers(1 << 30)), 1)
        elif kind == 4:  # degenerate: collinear or repeated vertices
            t2 = rng.random((3, 3))
            t2[2] = t2[0] + 2.0 * (t2[1] - t2[0]) if rng.random() < 0.5 else t2[0]
        else:  # touching at a vertex moved onto t1's edge midpoint (dyadic: exact)
            t1 = rng.integers(-8, 9, (3, 3)) / 8.0
            m = (t1[0] + t1[1]) / 2
            t2 = np.array([m, m + rng.random(3) + 0.1, m + rng.random(3) - 1.1])
        out.append((t1 * scale + offset, t2 * scale + offset))
    return out


def test_guigue_float_stage_against_rational():
    from collisionkit.kernels.core.predicates import orient3d_sides_float

    decided = passed_on = 0
    for t1, t2 in _mixed_pairs(61, 2400):
        expected = tri_tri_rational(t1, t2)
        assert hit(t1, t2, GUIGUE) is expected, (t1.tolist(), t2.tolist())
        assert hit(t2, t1, GUIGUE) is expected, (t1.tolist(), t2.tolist())
        _, _, _, c0, c1, c2 = orient3d_sides_float(tuple(t2.ravel()), tuple(t1.ravel()))
        if c0 and c1 and c2:
            decided += 1
        else:
            passed_on += 1
    # both branches ran: the float stage decided some first planes and passed others on
    assert decided > 500 and passed_on > 500


# --- API details ------------------------------------------------------------------------------


def test_tri_is_degenerate():
    assert not tri_is_degenerate(T0)
    assert not tri_is_degenerate(TILT)
    assert tri_is_degenerate(tri((0, 0, 0), (1, 1, 1), (2, 2, 2)))
    assert tri_is_degenerate(tri((0, 0, 0), (0, 0, 0), (2, 2, 2)))
    assert tri_is_degenerate(tri((1, 2, 3), (1, 2, 3), (1, 2, 3)))
    assert tri_is_degenerate(tri((0, 0, 1), (0, 0, 2), (0, 0, 3)))  # vertical: zero in xy too
    # one ulp off collinear: proper, though its float normal may round to zero
    x = 0.1
    assert not tri_is_degenerate(tri((0, 0, 0), (x, 3 * x, 0), (2 * x, np.nextafter(6 * x, 1), 0)))
    assert not tri_is_degenerate(tri((0, 0, 0), (1e-200, 0, 0), (0, 1e-200, 0)))
    assert not tri_is_degenerate(tri((1e200, 0, 0), (0, 1e200, 0), (0, 0, 1e200)))


def test_entry_points_and_codes():
    a = T0
    b = tri((1, 1, -2), (1, 1, 2), (5, 5, 0))
    assert tri_tri_guigue(a, b) and tri_tri_moller(a, b)
    with pytest.raises(ValueError):
        tri_tri_intersect(a, b, 7)
    tris = np.stack([a, b])  # rows of an (F, 3, 3) array, and a strided view
    assert tri_tri_intersect(tris[0], tris[1], GUIGUE)
    assert tri_tri_intersect(tris[0], tris[1].T.copy().T, MOLLER)


@njit(cache=False)
def _count_hits(A, B, method):
    n = 0
    for i in range(A.shape[0]):
        n += tri_tri_intersect(A[i], B[i], method)
    return n


def test_normal_path_allocates_nothing():
    _nrt = pytest.importorskip("numba.core.runtime._nrt_python")
    from numba.core.runtime import rtsys

    rng = np.random.default_rng(41)
    A = rng.random((20000, 3, 3))
    B = rng.random((20000, 3, 3)) + 0.2
    for method in METHODS.values():
        _count_hits(A[:2], B[:2], method)  # compile

    def allocations(n, method):
        a, b = A[:n], B[:n]
        before = rtsys.get_allocation_stats().alloc
        _count_hits(a, b, method)
        return rtsys.get_allocation_stats().alloc - before

    was_enabled = _nrt.memsys_stats_enabled()
    _nrt.memsys_enable_stats()
    try:
        for method in METHODS.values():
            # passing the arrays in costs the same few allocations either way
            assert allocations(len(A), method) == allocations(1, method)
    finally:
        if not was_enabled:
            _nrt.memsys_disable_stats()


# --- larger sweep (opt-in) ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_sweep_slow(seed):
    for radius in (1, 2, 4, 32):
        for t1, t2 in _random_pairs(100 + seed * 10 + radius, 500, radius):
            expected = tri_tri_rational(t1, t2)
            for method in METHODS.values():
                assert hit(t1, t2, method) is expected
    for t1, t2 in _structured_pairs(200 + seed, 2000):
        expected = tri_tri_rational(t1, t2)
        for method in METHODS.values():
            assert hit(t1, t2, method) is expected
    for t1, t2 in _near_coplanar_pairs(300 + seed, 1000):
        assert hit(t1, t2, GUIGUE) is tri_tri_rational(t1, t2)
