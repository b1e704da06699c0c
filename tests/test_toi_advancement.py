"""time_of_impact's per-pair directional advancement: rotations, screws, grazing
contacts, thin walls, OBB trees, the motion parameters (oracles: analytic
times, dense sampling of the motion with the exact ``intersects``, scipy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.test_toi import poses_at

import collisionkit as ck
from collisionkit.query.toi import MOTIONS, motion_parameters

BAR = ck.primitives.box_mesh([2.0, 0.02, 0.02])  # along x, half-length 1, half-width 0.01
CUBE = ck.primitives.box_mesh([0.1, 0.1, 0.1])
PLATE = ck.primitives.box_mesh([4.0, 4.0, 1e-3])
PEBBLE = ck.primitives.uv_sphere_mesh(0.01, 4, 6)


def dense_first(a, b, A0, A1, B0, B1, motion, n=4001):
    """First sampled t at which the meshes intersect (None: no sample does)."""
    A0, A1, B0, B1 = (np.eye(4) if T is None else T for T in (A0, A1, B0, B1))
    ts = np.linspace(0.0, 1.0, n)
    hits = ck.intersects(a, b, poses_at(A0, A1, motion, ts), poses_at(B0, B1, motion, ts))
    return (ts[np.argmax(hits)], ts, hits) if hits.any() else (None, ts, hits)


def check_against_dense(a, b, A0, A1, B0, B1, motion, **kw):
    r = ck.time_of_impact(a, b, A0, A1, B0, B1, motion=motion, **kw)
    first, ts, hits = dense_first(a, b, A0, A1, B0, B1, motion)
    if first is not None:
        assert r.colliding and r.t <= first  # never after a sampled real contact
    assert not hits[ts < r.t].any()  # nothing touches before t
    return r, first


@pytest.mark.parametrize("motion", ["linear", "screw"])
def test_rotating_bar_hits_a_cube_analytic(motion):
    # the bar turns 90 degrees about z (through its centre = the origin): both motions
    # are the same rotation; the cube's corner (0.05, 0.55) meets the bar's leading face
    # when the bar's angle is its polar angle less asin(0.01 / |corner|)
    end = ck.rotation([0, 0, 1], math.pi / 2)
    B = ck.translation([0.0, 0.6, 0.0])
    r = ck.time_of_impact(BAR, CUBE, None, end, B, B, motion=motion)
    corners = [(0.05, 0.55), (0.05, 0.65)]
    phi = min(math.atan2(y, x) - math.asin(0.01 / math.hypot(x, y)) for x, y in corners)
    true_t = phi / (math.pi / 2)
    assert r.colliding and r.converged
    assert r.t <= true_t and r.t == pytest.approx(true_t, abs=1e-5)
    assert r.distance <= 1e-6 * (math.sqrt(1 + 2e-4) + math.sqrt(0.03)) + 1e-15


@pytest.mark.parametrize("motion", ["linear", "screw"])
def test_rotation_sweeps_through_a_thin_wall(motion):
    # a bar turning 160 degrees about z crosses a 1 mm wall between two free end poses
    wall = ck.primitives.box_mesh([1e-3, 0.2, 0.2])
    W = ck.translation([0.6, 0.0, 0.0])
    start, end = ck.rotation([0, 0, 1], -80 * math.pi / 180), ck.rotation([0, 0, 1], 80 * math.pi / 180)
    assert not ck.intersects(BAR, wall, start, W) and not ck.intersects(BAR, wall, end, W)
    r, first = check_against_dense(BAR, wall, start, end, W, W, motion)
    assert first is not None and r.colliding
    assert r.t == pytest.approx(first, abs=2.0 / 4000)


def test_screw_slide_and_turn_against_dense_sampling():
    # a screw: the cube turns about a vertical line off its centre while sliding down onto the plate
    axis = ck.translation([0.3, 0.0, 0.0])
    turn = axis @ ck.translation([0, 0, -1.0]) @ ck.rotation([0, 0, 1], 2.0) @ np.linalg.inv(axis)
    A0 = ck.translation([0.0, 0.0, 0.7]) @ ck.rotation([1, 1, 0], 0.3)
    A1 = turn @ A0
    r, first = check_against_dense(CUBE, PLATE, A0, A1, None, None, "screw")
    assert first is not None and r.colliding and r.t == pytest.approx(first, abs=2.0 / 4000)
    # the slide is along the screw axis: the pose at t is T0 exp(t xi), checked at t = 1
    np.testing.assert_allclose(poses_at(A0, A1, "screw", [1.0])[0], A1, atol=1e-12)


@pytest.mark.parametrize("clearance", [2e-4, -2e-4])
def test_grazing_pass_over_a_plate(clearance):
    # the pebble skims over the plate's top face (half thickness 5e-4) and off its edge
    h = 5e-4 + 0.01 + clearance
    start, end = ck.translation([-3.0, 0.5, h]), ck.translation([3.0, 0.5, h])
    r, first = check_against_dense(PLATE, PEBBLE, None, None, start, end, "linear")
    if clearance > 0:
        assert not r.colliding and r.t == 1.0 and first is None
    else:
        # touches as it reaches the plate's edge x = -2 (pebble radius 0.01, pole points)
        assert r.colliding and first is not None and r.t <= first
        assert r.t > (3.0 - 2.0 - 0.011) / 6.0


def test_grazing_rotation_barely_misses_and_barely_hits():
    # the bar tip passes the cube corner at a gap of +-1e-4 (the tip turns on a circle of
    # radius sqrt(1 + 1e-4)); the tolerance (default ~1e-6) must not turn the miss into a hit
    R = math.hypot(1.0, 0.01)
    end = ck.rotation([0, 0, 1], math.pi / 2)
    for gap, hit in ((1e-4, False), (-1e-4, True)):
        B = ck.translation([0.0, R + gap + 0.05, 0.0])  # cube's near face at y = R + gap
        r, first = check_against_dense(BAR, CUBE, None, end, B, B, "linear")
        assert r.colliding is hit
        if hit:
            assert first is not None and r.t <= first


def test_objects_moving_apart_and_start_within_tolerance():
    # separating from 1e-3 apart: no hit however large the motion
    A1 = ck.translation([-5.0, 0, 0])
    B0 = ck.translation([1.0 + 1e-3, 0, 0])
    r = ck.time_of_impact(CUBE, CUBE, None, A1, B0, ck.translation([5.0, 0, 0]) @ ck.rotation([0, 1, 0], 2.0))
    assert not r.colliding and r.t == 1.0 and r.face_a == -1 and r.distance == math.inf
    # 1e-3 apart at the start with tolerance 2e-3: a hit at t = 0 with the exact distance
    B0 = ck.translation([0.1 + 1e-3, 0, 0])
    r = ck.time_of_impact(CUBE, CUBE, None, A1, B0, B0, tolerance=2e-3)
    assert r.colliding and r.t == 0.0 and r.distance == pytest.approx(1e-3, rel=1e-9)


def test_static_and_cap():
    B = ck.translation([3.0, 0, 0])
    r = ck.time_of_impact(CUBE, CUBE, None, None, B, B)
    assert not r.colliding and r.iterations == 1
    # a cap of one step: t stays a safe lower bound, the distance is measured there
    r = ck.time_of_impact(CUBE, CUBE, None, None, B, ck.translation([-3.0, 0, 0]), max_iterations=1)
    assert r.colliding and not r.converged and 0.0 <= r.t <= (3.0 - 0.1) / 6.0
    assert r.distance == pytest.approx(ck.distance(CUBE, CUBE, r.pose_a, r.pose_b).distance, rel=1e-12)


@pytest.mark.parametrize("motion", ["linear", "screw"])
def test_obb_trees_agree_with_aabb_trees(motion):
    from tests.brute import load_pb_mesh

    duck = load_pb_mesh("duck_vhacd.obj")
    a_obb, b_obb = duck.with_options(bv="obb"), CUBE.with_options(bv="obb")
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(4):
        A0 = ck.rotation(rng.normal(size=3), rng.uniform(0, 3))
        A1 = ck.rotation(rng.normal(size=3), rng.uniform(0, 3))
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        B0 = ck.translation(0.3 * d) @ ck.rotation(rng.normal(size=3), 1.0)
        B1 = ck.translation(-0.3 * d + rng.normal(scale=0.02, size=3)) @ ck.rotation(rng.normal(size=3), 2.5)
        r_obb, first = check_against_dense(a_obb, b_obb, A0, A1, B0, B1, motion)
        r_aabb = ck.time_of_impact(duck, CUBE, A0, A1, B0, B1, motion=motion)
        assert r_obb.colliding == r_aabb.colliding
        if r_obb.colliding:
            hits += 1
            assert r_obb.t == pytest.approx(r_aabb.t, abs=1e-4)
    assert hits >= 2


def test_motion_parameters_against_scipy():
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(3)
    angles = [0.0, 1e-13, 1e-7, 0.3, 2.0, math.pi - 1e-9, math.pi]
    for th in angles:
        for _ in range(3):
            axis = rng.normal(size=3)
            axis /= np.linalg.norm(axis)
            T0 = ck.translation(rng.normal(size=3)) @ ck.rotation(rng.normal(size=3), rng.uniform(0, 3))
            T1 = (
                T0 @ ck.translation(rng.normal(size=3)) @ ck.rotation(axis, th)
                if th
                else T0 @ ck.translation([1, 2, 3])
            )
            for motion in ("linear", "screw"):
                k, theta, u = motion_parameters(T0, T1, MOTIONS[motion])
                w = Rotation.from_matrix(T0[:3, :3].T @ T1[:3, :3]).as_rotvec()
                assert theta == pytest.approx(np.linalg.norm(w), abs=1e-7)
                if theta > 1e-6 and theta < math.pi - 1e-6:
                    np.testing.assert_allclose(k * theta, w, atol=1e-9)
                P = poses_at(T0, T1, motion, [0.0, 1.0])
                np.testing.assert_allclose(P[0], T0, atol=1e-12)
                np.testing.assert_allclose(P[1], T1, atol=1e-9)
