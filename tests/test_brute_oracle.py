"""The brute-force oracle (``tests/brute.py``) is right on its own terms.

* its float verdicts are never wrong: every certain answer agrees with the exact rational
  test (``tests.oracles.tri_tri_rational``), on random, touching, coplanar and degenerate
  triangle pairs;
* its mapping (own numpy code written from ARCHITECTURE.md's contract) gives the same
  bits as the library's ``map_triangle``: the contract the exact pair sets rest on;
* on a small scene its pair set equals the all-rational one.
"""

from __future__ import annotations

import numpy as np
from tests.brute import _float_verdict, brute_colliding, brute_pairs, map_points, rational_pairs, signed_perm
from tests.oracles import tri_tri_rational

import collisionkit as ck


def _pairs(rng, n):
    """Triangle pairs of every awkward kind: random, shared vertex, shared edge, coplanar,
    touching at a vertex, degenerate (segment, point), and a few ulps apart."""
    out = []
    for k in range(n):
        P = rng.normal(size=(3, 3))
        Q = rng.normal(size=(3, 3)) * 0.7 + rng.normal(size=3) * 0.5
        kind = k % 8
        if kind == 1:
            Q[0] = P[0]
        elif kind == 2:
            Q[0], Q[1] = P[0], P[1]
        elif kind == 3:  # coplanar with P (z = 0 for both)
            P[:, 2] = 0.0
            Q[:, 2] = 0.0
        elif kind == 4:  # Q's vertex on P's plane, at a point inside P
            w = rng.dirichlet([1, 1, 1])
            Q[0] = w @ P
        elif kind == 5:  # degenerate Q: a segment
            Q[2] = 0.5 * (Q[0] + Q[1])
        elif kind == 6:  # degenerate Q: a point on P's edge
            Q[:] = 0.5 * (P[0] + P[1])
        elif kind == 7:  # Q shifted a few ulps off touching P at a vertex
            Q[0] = np.nextafter(P[0], P[0] + rng.choice([-1.0, 1.0], size=3))
        out.append((P, Q))
    return out


def test_float_verdicts_are_never_wrong():
    rng = np.random.default_rng(20)
    counts = {1: 0, 0: 0, -1: 0}
    generic_unsure = 0
    for k, (P, Q) in enumerate(_pairs(rng, 1600)):
        v = _float_verdict(np.ascontiguousarray(P), np.ascontiguousarray(Q))
        counts[int(v)] += 1
        generic_unsure += k % 8 == 0 and v == -1
        if v != -1:
            assert bool(v) == tri_tri_rational(P.tolist(), Q.tolist()), (P, Q, v)
    # random pairs are all decided in float; touching / coplanar / degenerate ones go to the
    # rationals (measured: {1: 155, 0: 448, -1: 997})
    assert generic_unsure == 0
    assert counts[1] > 100 and counts[0] > 300 and counts[-1] > 500, counts


def test_huge_and_tiny_coordinates_go_to_the_rationals():
    """Regression: at 1e150 the float products overflow; the filter must not decide there."""
    P = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    Q = np.array([[0.2, 0.2, -1], [0.3, 0.2, 1], [0.2, 0.3, 1]])
    for scale in (1e150, 1e-160):
        assert _float_verdict(P * scale, Q * scale) == -1
        assert tri_tri_rational((P * scale).tolist(), (Q * scale).tolist())
    assert _float_verdict(P * 1e-100, Q * 1e-100) in (-1, 1)  # never a wrong "disjoint"


def test_unsure_pairs_are_exactly_the_hard_ones():
    # exactly touching at a vertex and sharing an edge: never decided in float
    P = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    for Q in (np.array([[1.0, 0, 0], [2, 0, 1], [2, 1, 0]]), np.array([[0.0, 0, 0], [1, 0, 0], [0, -1, 1]])):
        assert _float_verdict(P, Q) == -1
        assert tri_tri_rational(P.tolist(), Q.tolist())
    # clearly crossing / clearly apart: decided in float
    assert _float_verdict(P, np.array([[0.2, 0.2, -1], [0.3, 0.2, 1], [0.2, 0.3, 1]])) == 1
    assert _float_verdict(P, np.array([[0.2, 0.2, 1], [0.3, 0.2, 2], [0.2, 0.3, 2]])) == 0


def test_mapping_has_the_library_bits():
    """map_points (own code) and the library's relative_pose + map_triangle agree bit for bit."""
    from collisionkit.kernels.core.linalg import map_triangle, relative_pose

    rng = np.random.default_rng(3)
    tris = rng.normal(size=(50, 3, 3)) * 10.0
    pa = ck.random_poses(20, radius=5.0, seed=1)
    pb = ck.random_poses(20, radius=5.0, seed=2)
    for Ta, Tb in zip(pa, pb, strict=True):
        Ta, Tb = np.ascontiguousarray(Ta), np.ascontiguousarray(Tb)
        R, t = relative_pose(Ta, Tb)
        lib = np.array([map_triangle(R, t, *map(float, T.ravel())) for T in tris]).reshape(-1, 3, 3)
        np.testing.assert_array_equal(map_points(Ta, Tb, tris), lib)


def test_brute_pairs_equal_the_rational_pairs():
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    sphere = ck.primitives.uv_sphere_mesh(0.6, 5, 8)
    poses = [ck.translation([0.9, 0.1, 0.0]), ck.rotation([1, 2, 3], 0.4) @ ck.translation([1.0, 0.5, 0.2]),
             signed_perm((1, 0, 2), (1, -1, 1), (1.0, 0.0, 0.0)), ck.translation([3.0, 0, 0])]  # fmt: skip
    for T in poses:
        got = brute_pairs(box, sphere, None, T)[:, 1:]
        truth = rational_pairs(box, sphere, None, T)
        np.testing.assert_array_equal(got, truth)
    hits = brute_colliding(box, sphere, None, np.stack(poses))
    assert hits.tolist() == [True, True, True, False]
    # and the library agrees with the oracle on these scenes
    assert ck.intersects(box, sphere, None, np.stack(poses)).tolist() == hits.tolist()
