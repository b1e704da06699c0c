"""The largest inscribed box (seed 003, section 4) on shapes with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from tests.convex_cases import octahedron, prism, random_hull

import collisionkit as ck
from collisionkit.convex.inscribed import inscribed_box, inscribed_box_oriented, largest_box


def test_box_is_its_own_inscribed_box():
    b = ck.Box([1.0, 2.0, 4.0])
    lo, hi = inscribed_box(b)
    np.testing.assert_allclose(lo, [-0.5, -1, -2], atol=1e-9)
    np.testing.assert_allclose(hi, [0.5, 1, 2], atol=1e-9)
    shifted = ck.Convex.from_points(np.asarray(b.vertices) + [10.0, -3.0, 0.25])
    lo, hi = inscribed_box(shifted)
    np.testing.assert_allclose(lo, [9.5, -4, -1.75], atol=1e-8)


def test_octahedron_cube_of_a_third():
    # |x| + |y| + |z| <= r: the best box is the cube of half side r / 3 (AM-GM)
    r = 0.75
    lo, hi = inscribed_box(octahedron(r))
    np.testing.assert_allclose(hi, [r / 3] * 3, atol=1e-9)
    np.testing.assert_allclose(lo, [-r / 3] * 3, atol=1e-9)


def test_hexagonal_prism():
    # regular hexagon of circumradius R: the best rectangle spans four of its vertices,
    # [-R/2, R/2] x [-R sqrt(3)/2, R sqrt(3)/2]; the prism keeps its full height
    R, H = 1.0, 0.6
    p = prism(6, R, H)
    lo, hi = inscribed_box(p)
    # the optimum sits where log-volume is stationary along the active edge, so the
    # corner is only determined to ~sqrt(gap); the volume to the gap itself
    assert np.prod(hi - lo) == pytest.approx(2 * R * np.sqrt(3) * H * R / 2, rel=1e-11)
    np.testing.assert_allclose(hi, [R / 2, R * np.sqrt(3) / 2, H / 2], atol=1e-6)
    np.testing.assert_allclose(lo, -hi, atol=1e-6)


def test_rotated_cube_oriented_box_recovers_it():
    T = ck.rotation([1, 2, 0.5], 0.9)
    c = ck.Convex.from_points(np.asarray(ck.Box([1, 1, 1]).vertices) @ T[:3, :3].T)
    aligned = inscribed_box(c)
    ob = inscribed_box_oriented(c, axes=T[:3, :3].T)
    assert ob.volume == pytest.approx(1.0, rel=1e-9)
    assert np.prod(aligned[1] - aligned[0]) < 0.5
    A, b = c.halfspaces
    assert (ob.corners() @ A.T <= b + 1e-9).all()


@pytest.mark.parametrize("seed", range(3))
def test_random_hulls_box_inside_and_locally_optimal(seed):
    c = random_hull(seed, 25)
    A, b = c.halfspaces
    lo, hi = largest_box(A, b)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    assert (corners @ A.T <= b + 1e-9).all()
    # compare with SLSQP on the same problem (a different solver)
    from scipy.optimize import minimize

    Ap, Am = np.maximum(A, 0), np.maximum(-A, 0)
    cons = {"type": "ineq", "fun": lambda z: b - Ap @ z[:3] + Am @ z[3:]}
    mid = (lo + hi) / 2
    res = minimize(
        lambda z: -np.log(np.maximum(z[:3] - z[3:], 1e-300)).sum(),
        np.concatenate([mid + 1e-3, mid - 1e-3]),
        constraints=[cons],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert -res.fun <= np.log(hi - lo).sum() + 1e-7


def test_no_interior_raises():
    A = np.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 1.0, 0], [0, -1.0, 0], [0, 0, 1.0], [0, 0, -1.0]])
    with pytest.raises(ck.InvalidMeshError):
        largest_box(A, np.array([1.0, -1.0, 1, 1, 1, 1]))  # x = 1 only: flat
