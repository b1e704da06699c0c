"""penetration(method="bounds"): the bracket depth_lower <= true depth <= depth_upper.

Oracles: hand-computed depths (boxes, a box inside a box, an L-shaped prism, a
plate through a torus), the exact convex method on convex pairs, and for the
lower bound an independent brute force (winding numbers for inside, all
point-triangle distances in numpy). The upper bound is checked by replaying
its translation through ``intersects`` and ``classify``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.distance_oracle import _point_seg

import collisionkit as ck
from collisionkit.kernels.triangle.point_in_mesh import winding_numbers
from collisionkit.query.penetration_bounds import RTOL

BOX = ck.primitives.box_mesh([1.0, 1.0, 1.0])
SPHERE = ck.primitives.uv_sphere_mesh(0.5, 10, 20)


def _moved(Tb, p, scale=1.0):
    """b's pose moved as the answer says (the same float operations)."""
    T = np.array(Tb, dtype=np.float64, copy=True)
    T[:3, 3] = T[:3, 3] + (scale * p.depth_upper) * p.direction
    return T


def _apart(a, b, Ta, Tb):
    """Closed solids disjoint: surfaces apart and neither inside the other."""
    return not ck.intersects(a, b, Ta, Tb) and ck.classify(a, b, Ta, Tb).labels == "disjoint"


def _check(a, b, Ta, Tb, want=None, tight=False, **kw):
    """The invariants of every answer; ``want`` the true depth when known."""
    Ta = np.eye(4) if Ta is None else Ta
    p = ck.penetration(a, b, Ta, Tb, method="bounds", **kw)
    assert p.method == "bounds" and not p.exact
    assert p.depth == p.depth_upper
    assert 0.0 <= p.depth_lower <= p.depth_upper
    assert p.error_bound == pytest.approx(p.depth_upper - p.depth_lower, abs=0.0)
    assert np.linalg.norm(p.direction) == pytest.approx(1.0, abs=1e-12)
    assert _apart(a, b, Ta, _moved(Tb, p)), "the upper bound's translation must separate"
    if want is not None:
        assert p.depth_lower <= want <= p.depth_upper
    if tight:
        # a bit short of the upper bound the solids still overlap: the bracket's top is sharp
        short = _moved(Tb, p, 1.0 - 2.0 * (RTOL if not kw.get("refine") else 1e-8))
        assert not _apart(a, b, Ta, short)
    return p


def _prism(poly, z0, z1):
    """Closed prism over a simple polygon (counter-clockwise, star-shaped from its first vertex)."""
    poly = np.asarray(poly, dtype=np.float64)
    n = len(poly)
    v = np.concatenate([np.c_[poly, np.full(n, z0)], np.c_[poly, np.full(n, z1)]])
    f = []
    for i in range(1, n - 1):
        f += [[0, i + 1, i], [n, n + i, n + i + 1]]
    for i in range(n):
        j = (i + 1) % n
        f += [[i, j, n + j], [i, n + j, n + i]]
    return ck.Mesh(v, f)


L_SHAPE = _prism([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)], 0.0, 1.0)


def test_boxes_hand_computed():
    """b = [0.3, 1.3] x [-0.4, 0.6] x [-0.4, 0.4] against the unit cube: the way out is
    +x by 0.2; b's vertex (0.3, -0.4, 0.4) is 0.1 deep (the y and z faces)."""
    b = ck.primitives.box_mesh([1.0, 1.0, 0.8])
    p = _check(BOX, b, None, ck.translation([0.8, 0.1, 0.0]), want=0.2, tight=True)
    assert p.depth_lower == pytest.approx(0.1, abs=1e-9)
    assert p.depth_upper <= 0.2 * (1 + 2 * RTOL)
    # along u the way out takes 0.2 / u_x, so the answer's direction is within its slack of +x
    assert p.direction[0] >= 0.2 / p.depth_upper - 1e-12


def test_box_inside_box():
    """Contained, surfaces apart: the depth is 1 + 0.1 (out through a face); the deepest
    vertex (0.1, 0.1, 0.1) is 0.9 below the big box's faces."""
    big = ck.primitives.box_mesh([2.0, 2.0, 2.0])
    small = ck.primitives.box_mesh([0.2, 0.2, 0.2])
    assert ck.classify(big, small).labels == "contained"
    p = _check(big, small, None, np.eye(4), want=1.1, tight=True)
    assert p.depth_lower == pytest.approx(0.9, abs=1e-9)
    assert p.depth_upper <= 1.1 * (1 + 2 * RTOL)
    # and the other way round: a inside b, b moves off a
    p = _check(small, big, None, np.eye(4), want=1.1, tight=True)
    assert p.depth_lower == pytest.approx(0.9, abs=1e-9)


def test_l_shape_hand_computed():
    """A 0.5 cube in the inner corner of an L-shaped prism: the way out is diagonal,
    (0.2, 0.2, 0) of length 0.2 sqrt 2 (not along any face normal, where it takes 0.75
    or 1.2); the deepest vertices of the cube sit 0.25 from the L's top and bottom."""
    cube = ck.primitives.box_mesh([0.5, 0.5, 0.5])
    Tb = ck.translation([1.05, 1.05, 0.5])
    want = 0.2 * math.sqrt(2.0)
    p = _check(L_SHAPE, cube, None, Tb, want=want, tight=True)
    assert p.depth_lower == pytest.approx(0.25, abs=1e-9)
    assert p.depth_upper <= want * (1 + 2 * RTOL)
    # along u the way out takes 0.2 / min(u_x, u_y) (u_z small): the direction is near the diagonal
    assert min(p.direction[:2]) >= 0.2 / p.depth_upper - 1e-12
    # rotated world: the same bracket, the direction rotated
    R = ck.rotation([1, 2, 3], 0.7)
    q = _check(L_SHAPE, cube, R, R @ Tb, want=want, tight=True)
    assert q.depth_lower == pytest.approx(0.25, abs=1e-9)
    assert q.depth_upper <= want * (1 + 2 * RTOL)
    assert min((R[:3, :3].T @ q.direction)[:2]) >= 0.2 / q.depth_upper - 1e-9


def test_plate_through_torus():
    """A 6 x 6 x 0.1 plate at z in [0.05, 0.15] cuts a torus tube (top at z = 0.25, a
    vertex ring): out by 0.2 upwards. The torus ring at v = pi / 8 (z = 0.25 sin(pi/8))
    lies inside the plate, 0.25 sin(pi/8) - 0.05 below its bottom face."""
    torus = ck.primitives.torus_mesh(1.0, 0.25, 32, 16)
    plate = ck.primitives.box_mesh([6.0, 6.0, 0.1])
    p = _check(torus, plate, None, ck.translation([0.0, 0.0, 0.1]), want=0.2, tight=True)
    assert p.depth_lower == pytest.approx(0.25 * math.sin(math.pi / 8) - 0.05, abs=1e-9)
    assert p.depth_upper <= 0.2 * (1 + 2 * RTOL)
    assert p.direction[2] >= 0.2 / p.depth_upper - 1e-12


def test_touching_and_apart_are_zero():
    torus = ck.primitives.torus_mesh(1.0, 0.25, 32, 16)
    rod = ck.primitives.box_mesh([0.2, 0.2, 3.0])  # through the hole, no contact
    p = ck.penetration(torus, rod, method="bounds")
    assert p.depth == p.depth_lower == p.depth_upper == 0.0 and p.exact and p.method == "none"
    p = ck.penetration(BOX, BOX, None, ck.translation([1.0, 0.3, 0.0]), method="bounds")  # faces touch
    assert p.depth == 0.0 and p.exact and p.method == "none"


def test_convex_pairs_bracket_the_exact_depth():
    """On convex pairs the exact method is the oracle: lower <= exact <= upper."""
    rng = np.random.default_rng(3)
    pairs = [(BOX, SPHERE), (SPHERE, SPHERE), (BOX, ck.primitives.box_mesh([0.3, 1.2, 0.6]))]
    checked = 0
    for a, b in pairs:
        for _ in range(4):
            Ta = ck.random_poses(1, 0.2, seed=int(rng.integers(1e6)))[0]
            Tb = ck.random_poses(1, 0.7, seed=int(rng.integers(1e6)))[0]
            exact = ck.penetration(a, b, Ta, Tb)
            if exact.depth <= 1e-6:
                continue
            p = _check(a, b, Ta, Tb)
            assert p.depth_lower <= exact.depth + exact.error_bound
            assert p.depth_upper >= exact.depth - exact.error_bound
            assert exact.depth_lower == exact.depth_upper == exact.depth  # the exact path's bracket is a point
            checked += 1
    assert checked >= 6


def _brute_lower(a, b, Ta, Tb):
    """max over vertices of one mesh strictly inside the other (winding number) of their
    distance to the other's surface (every triangle, numpy)."""
    best = 0.0
    for m, other, Tm, To in ((a, b, Ta, Tb), (b, a, Tb, Ta)):
        rel = np.linalg.inv(Tm) @ To
        pts = np.unique(np.asarray(other.vertices)[np.unique(other.faces)], axis=0) @ rel[:3, :3].T + rel[:3, 3]
        w = np.empty(len(pts))
        winding_numbers(np.ascontiguousarray(m.triangles), np.ascontiguousarray(pts), w)
        inside = pts[w > 0.5]
        if not len(inside):
            continue
        t = np.asarray(m.triangles)
        P = inside[:, None, :]
        A, B, C = t[None, :, 0], t[None, :, 1], t[None, :, 2]
        d2 = np.minimum(np.minimum(_point_seg(P, A, B), _point_seg(P, B, C)), _point_seg(P, C, A))
        n = np.cross(B - A, C - A)
        n = n / np.linalg.norm(n, axis=-1, keepdims=True)
        h = np.einsum("...i,...i->...", P - A, n)
        q = P - h[..., None] * n
        inside_tri = np.ones(d2.shape, bool)
        for U, V in ((A, B), (B, C), (C, A)):
            inside_tri &= np.einsum("...i,...i->...", np.cross(V - U, q - U), n) >= 0
        d2 = np.where(inside_tri, np.minimum(d2, h * h), d2)
        best = max(best, float(np.sqrt(d2.min(axis=1)).max()))
    return best


GEAR_A = ck.primitives.gear_mesh(teeth=12, samples=16)
GEAR_B = ck.primitives.gear_mesh(teeth=16, outer_radius=4 / 3, root_radius=4 / 3 - 0.15, bore_radius=0.4, samples=16)


@pytest.mark.parametrize("shift", [(2.0, 0.0, 0.05), (2.02, 0.3, 0.12), (0.3, 0.2, 0.2)])
def test_gears_bracket_and_brute_lower(shift):
    """Two meshing gears (1,536 and 2,048 triangles, non-convex, with bores): the lower
    bound equals the brute-force deepest vertex, and the upper bound separates."""
    Ta = ck.rotation([0, 0, 1], 0.1)
    Tb = ck.translation(shift) @ ck.rotation([0, 0, 1], 0.05)
    assert ck.classify(GEAR_A, GEAR_B, Ta, Tb).labels == "penetrating"
    p = _check(GEAR_A, GEAR_B, Ta, Tb)
    assert p.depth_lower > 0
    assert p.depth_lower == pytest.approx(_brute_lower(GEAR_A, GEAR_B, Ta, Tb), abs=1e-9)


def test_refine_tightens():
    """refine=True never loosens the bracket, and finds a tight direction where the
    default directions miss it (the L-shape rotated off every frame axis)."""
    cube = ck.primitives.box_mesh([0.5, 0.5, 0.5])
    R = ck.rotation([0, 0, 1], 0.3)
    Tb = ck.translation([1.05, 1.05, 0.5]) @ ck.rotation([1, 1, 0], 0.05)
    base = _check(L_SHAPE, cube, R, R @ Tb)
    fine = _check(L_SHAPE, cube, R, R @ Tb, refine=True)
    assert fine.depth_upper <= base.depth_upper
    assert fine.depth_lower >= base.depth_lower


def test_batch_and_errors():
    poses = np.stack([ck.translation([x, 0, 0.5]) for x in (1.05, 5.0, 1.2)])
    cube = ck.primitives.box_mesh([0.5, 0.5, 0.5])
    batch = ck.penetration(L_SHAPE, cube, None, poses, method="bounds")
    assert batch.depth.shape == (3,) and list(batch.method) == ["bounds", "none", "bounds"]
    assert batch.depth[1] == batch.depth_lower[1] == batch.depth_upper[1] == 0.0 and batch.exact[1]
    for k in (0, 2):
        one = ck.penetration(L_SHAPE, cube, None, poses[k], method="bounds")
        assert one.depth_lower == batch.depth_lower[k] and one.depth_upper == batch.depth_upper[k]
    # auto picks the bracket for closed non-convex meshes
    assert ck.penetration(L_SHAPE, cube, None, poses[0]).method == "bounds"
    open_mesh = ck.Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2]])
    with pytest.raises(ck.InvalidMeshError, match="closed"):
        ck.penetration(open_mesh, BOX, None, np.eye(4), method="bounds")
    with pytest.raises(ValueError, match="refine"):
        ck.penetration(L_SHAPE, cube, None, poses[0], refine="yes")


@pytest.mark.slow
def test_gear_size_meshes():
    """The issue's size: 15,360 and 57,600 triangles; the bracket holds and separates."""
    a = ck.primitives.gear_mesh(teeth=30, samples=64, layers=1)
    b = ck.primitives.gear_mesh(
        teeth=40, outer_radius=4 / 3, root_radius=4 / 3 - 0.15, bore_radius=0.4, samples=120, layers=2
    )
    assert a.n_faces == 15360 and b.n_faces == 57600
    Tb = ck.translation([2.05, 0.0, 0.05])
    p = _check(a, b, None, Tb)
    assert p.depth_lower > 0.0
