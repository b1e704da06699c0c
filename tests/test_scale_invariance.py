"""Every proximity query at every scale (issue 18, item 4; ``query/scaling.py``).

Multiplying a pair's lengths (both meshes and both translations) by s = 2**k is
exact in float64, so the scaling laws hold bit for bit, over the whole range:

* distance and closest points, penetration depth and error bound: times s;
* face ids, penetration direction, classify labels, time of impact t and hit: unchanged.

The default run checks a slice of exponents that crosses both ends of the band the
kernels take as given (2**-64 .. 2**64) and reaches 2**+-990; ``-m slow`` sweeps
every 30th exponent from -990 to 990.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import collisionkit as ck
from collisionkit import Box, Capsule, Convex, Cylinder, Mesh, Sphere

KS = (-990, -700, -300, -65, -64, -3, 0, 5, 64, 65, 200, 600, 990)
KS_SLOW = tuple(range(-990, 991, 30))
BV_KINDS = ("aabb", "obb", "sphere", "kdop6", "kdop14", "kdop18", "kdop26", "saabb")

BOX = ck.primitives.box_mesh([1.0, 1.0, 1.0])
BALL = ck.primitives.uv_sphere_mesh(0.75, rings=6, segments=10)
TORUS = ck.primitives.torus_mesh(1.0, 0.3, 12, 8)


def scaled(mesh: Mesh, k: int) -> Mesh:
    """The mesh with every vertex coordinate times 2**k (exact), same build options."""
    return Mesh(np.ldexp(np.asarray(mesh.vertices), k), np.asarray(mesh.faces), options=mesh.options)


def pose(angle: float, axis, t) -> np.ndarray:
    """A rigid pose: rotation by ``angle`` about ``axis``, then translation ``t``."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    T = np.eye(4)
    T[:3, :3] = np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K
    T[:3, 3] = t
    return T


def sp(T: np.ndarray, k: int) -> np.ndarray:
    """Pose(s) with translations times 2**k (exact)."""
    out = np.array(T, copy=True)
    out[..., :3, 3] = np.ldexp(out[..., :3, 3], k)
    return out


PA = pose(0.3, [1, 2, 3], [0.25, -0.5, 0.125])
PB_APART = pose(-0.7, [0, 1, 1], [2.0, 0.75, -0.5])
PB_OVERLAP = pose(0.2, [1, 0, 0], [0.875, 0.25, 0.0])


def _assert_distance_scaled(d, ref, k):
    assert np.array_equal(np.asarray(d.distance), np.ldexp(np.asarray(ref.distance), k))
    assert np.array_equal(d.point_a, np.ldexp(ref.point_a, k))
    assert np.array_equal(d.point_b, np.ldexp(ref.point_b, k))
    assert np.array_equal(np.asarray(d.face_a), np.asarray(ref.face_a))
    assert np.array_equal(np.asarray(d.face_b), np.asarray(ref.face_b))


# --- distance -------------------------------------------------------------------------------


@pytest.mark.parametrize("bv", BV_KINDS)
def test_mesh_distance_scales_bitwise_on_every_volume_kind(bv):
    a, b = BALL.with_options(bv=bv), TORUS.with_options(bv=bv)
    ref = ck.distance(a, b, PA, PB_APART)
    assert ref.distance > 0.0
    for k in KS:
        _assert_distance_scaled(ck.distance(scaled(a, k), scaled(b, k), sp(PA, k), sp(PB_APART, k)), ref, k)


def test_mesh_distance_batch_scales_bitwise_and_matches_single_calls():
    poses_b = np.stack([PB_APART, PB_OVERLAP, pose(1.0, [0, 0, 1], [0.0, 3.5, 1.0])])
    ref = ck.distance(BALL, TORUS, PA, poses_b)
    assert ref.distance[1] == 0.0 and ref.distance[0] > 0.0
    for k in KS:
        a, b = scaled(BALL, k), scaled(TORUS, k)
        d = ck.distance(a, b, sp(PA, k), sp(poses_b, k))
        _assert_distance_scaled(d, ref, k)
        one = ck.distance(a, b, sp(PA, k), sp(poses_b[2], k))
        assert one.distance == d.distance[2]


def test_distance_batch_with_poses_at_many_scales_prescales_each_pose():
    """One batch mixing translations from 1 to 1e280 (per-pose exponents)."""
    shifts = np.array([1.5, 1e30, 1e150, 1e200, 1e280])
    Pb = np.stack([pose(0.0, [0, 0, 1], [s, 0.0, 0.0]) for s in shifts])
    d = ck.distance(BOX, BOX, None, Pb)
    assert np.all(np.isfinite(d.distance))
    np.testing.assert_allclose(d.distance, shifts - 1.0, rtol=1e-15)
    for i in range(len(shifts)):
        assert ck.distance(BOX, BOX, None, Pb[i]).distance == d.distance[i]


def test_distance_of_boxes_5e89_apart_at_scale_1e90_is_not_zero():
    """Regression (issue 18): 0.0 was returned (squared gaps overflowed)."""
    box = ck.primitives.box_mesh([1e90, 1e90, 1e90])
    d = ck.distance(box, box, None, ck.translation([1.5e90, 0.0, 0.0]))
    assert d.distance == pytest.approx(5e89, rel=1e-14)
    assert not ck.intersects(box, box, None, ck.translation([1.5e90, 0.0, 0.0]))


def test_distance_upper_bound_is_prescaled_with_the_pair():
    k = 700
    a, b = scaled(BOX, k), scaled(BOX, k)
    far = sp(pose(0.0, [0, 0, 1], [3.0, 0.0, 0.0]), k)
    assert ck.distance(a, b, None, far, upper_bound=math.ldexp(2.5, k)).distance == math.ldexp(2.0, k)
    assert ck.distance(a, b, None, far, upper_bound=math.ldexp(1.5, k)).distance == math.inf


def test_distance_refuses_a_dynamic_range_it_cannot_prescale():
    """A unit box 1e300 away (2**997 times its size) would be flushed to subnormals."""
    with pytest.raises(ValueError, match="2\\*\\*969"):
        ck.distance(BOX, BOX, None, ck.translation([1e300, 0.0, 0.0]))
    with pytest.raises(ValueError, match="2\\*\\*969"):
        ck.distance(BOX, BOX, None, np.stack([np.eye(4), ck.translation([1e300, 0.0, 0.0])]))
    with pytest.raises(ValueError, match="2\\*\\*969"):
        ck.time_of_impact(BOX, BOX, None, None, None, ck.translation([1e300, 0.0, 0.0]))


# --- convex shapes (GJK) -----------------------------------------------------------------


def _convex_shapes(k: int):
    s = math.ldexp(1.0, k)
    pts = np.ldexp(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.5, 0.5, 0.75]]), k)
    return [
        Box([s, 0.5 * s, 0.75 * s]),
        Sphere(0.5 * s),
        Capsule(0.25 * s, 0.5 * s),
        Cylinder(0.5 * s, 0.75 * s),
        Convex(pts),
    ]


def test_convex_shape_distance_scales_bitwise():
    refs = _convex_shapes(0)
    Pb = pose(0.4, [1, 1, 0], [2.5, 0.5, -0.25])
    expected = [[ck.distance(x, y, PA, Pb) for y in refs] for x in refs]
    for k in (-990, -300, -65, 70, 300, 990):
        shapes = _convex_shapes(k)
        for i, x in enumerate(shapes):
            for j, y in enumerate(shapes):
                d = ck.distance(x, y, sp(PA, k), sp(Pb, k))
                ref = expected[i][j]
                assert ref.distance > 0.0
                assert d.distance == math.ldexp(ref.distance, k), (k, type(x).__name__, type(y).__name__)
                assert np.array_equal(d.point_a, np.ldexp(ref.point_a, k))


# --- penetration --------------------------------------------------------------------------


def test_convex_penetration_scales_bitwise():
    ref = ck.penetration(BOX, BALL, PA, PB_OVERLAP)
    ref_batch = ck.penetration(BOX, BALL, PA, np.stack([PB_OVERLAP, PB_APART]))
    assert ref.exact and ref.depth > 0.0
    for k in KS:
        a, b = scaled(BOX, k), scaled(BALL, k)
        p = ck.penetration(a, b, sp(PA, k), sp(PB_OVERLAP, k))
        assert p.depth == math.ldexp(ref.depth, k)
        assert np.array_equal(p.direction, ref.direction)
        assert p.error_bound == math.ldexp(ref.error_bound, k)
        pb = ck.penetration(a, b, sp(PA, k), sp(np.stack([PB_OVERLAP, PB_APART]), k))
        assert np.array_equal(pb.depth, np.ldexp(ref_batch.depth, k))
        assert np.array_equal(pb.direction, ref_batch.direction, equal_nan=True)


def test_sampled_penetration_scales_bitwise():
    P = pose(0.1, [0, 1, 0], [0.5, 0.0, 0.0])
    ref = ck.penetration(TORUS, BOX, None, P, method="sampled", directions=8)
    assert ref.depth > 0.0 and ref.method == "sampled"
    for k in (-990, -200, 300, 990):
        p = ck.penetration(scaled(TORUS, k), scaled(BOX, k), None, sp(P, k), method="sampled", directions=8)
        assert p.depth == math.ldexp(ref.depth, k)
        assert np.array_equal(p.direction, ref.direction)


# --- classify ----------------------------------------------------------------------------------


def test_classify_labels_and_distances_scale():
    inner = ck.primitives.box_mesh([0.25, 0.25, 0.25])
    cases = [
        (BOX, BOX, pose(0.0, [0, 0, 1], [3.0, 0.0, 0.0]), "disjoint"),
        (BOX, BOX, pose(0.0, [0, 0, 1], [1.0, 0.0, 0.0]), "touching"),
        (BOX, BALL, PB_OVERLAP, "penetrating"),
        (BOX, BOX, pose(0.0, [0, 0, 1], [0.5, 0.25, 0.0]), "penetrating"),  # coplanar contacts only
        (BOX, inner, pose(0.3, [1, 1, 1], [0.1, 0.0, 0.0]), "contained"),
    ]
    for a, b, P, label in cases:
        ref = ck.classify(a, b, None, P)
        assert ref.labels == label
        for k in KS:
            c = ck.classify(scaled(a, k), scaled(b, k), None, sp(P, k))
            assert c.labels == label, (label, k)
            assert np.array_equal(c.distance, np.ldexp(ref.distance, k))


# --- time of impact ---------------------------------------------------------------------------


def test_time_of_impact_t_is_scale_free():
    starts = (pose(0.0, [0, 0, 1], [4.0, 0.5, 0.0]), pose(0.0, [0, 0, 1], [-4.0, 0.25, 0.0]))
    ref = ck.time_of_impact(BALL, TORUS, PA, PA, *starts, motion="screw")
    assert ref.colliding and 0.0 < ref.t < 1.0
    for k in KS:
        r = ck.time_of_impact(
            scaled(BALL, k), scaled(TORUS, k), sp(PA, k), sp(PA, k), sp(starts[0], k), sp(starts[1], k), motion="screw"
        )
        assert (r.colliding, r.t, r.iterations) == (ref.colliding, ref.t, ref.iterations)
        assert r.distance == math.ldexp(ref.distance, k)
        assert np.array_equal(r.pose_b, sp(ref.pose_b, k))


def test_batched_time_of_impact_prescales_each_motion_for_itself():
    """A batch mixing scales (issue 14 step 5 x issue 18 item 4): motions at 2**k apart are
    grouped by prescaling exponent and answer exactly as one call each."""
    starts = (pose(0.0, [0, 0, 1], [4.0, 0.5, 0.0]), pose(0.0, [0, 0, 1], [-4.0, 0.25, 0.0]))
    ks = (0, 70, -80, 300, 0)
    a, b = scaled(BALL, 5), scaled(TORUS, 5)
    sa = np.stack([sp(PA, k) for k in ks])
    sb, eb = np.stack([sp(starts[0], k) for k in ks]), np.stack([sp(starts[1], k) for k in ks])
    batch = ck.time_of_impact(a, b, sa, sa, sb, eb, motion="screw")
    assert batch.t.shape == (len(ks),)
    for i in range(len(ks)):
        one = ck.time_of_impact(a, b, sa[i], sa[i], sb[i], eb[i], motion="screw")
        assert (one.colliding, one.t, one.iterations, one.face_a, one.face_b) == (
            bool(batch.colliding[i]), float(batch.t[i]), int(batch.iterations[i]), int(batch.face_a[i]), int(batch.face_b[i]),
        )  # fmt: skip
        assert one.distance == batch.distance[i] and np.array_equal(one.pose_b, batch.pose_b[i])
    assert batch.colliding[0] and batch.t[0] == batch.t[4]


def test_missed_time_of_impact_at_1e_200_does_not_raise():
    """Regression (issue 18): ZeroDivisionError (squared distances underflowed to 0)."""
    box = ck.primitives.box_mesh([1e-200, 1e-200, 1e-200])
    r = ck.time_of_impact(
        box, box, None, None, ck.translation([3e-200, 3e-200, 0.0]), ck.translation([-3e-200, 3e-200, 0.0])
    )
    assert not r.colliding and r.t == 1.0
    hit = ck.time_of_impact(
        box, box, None, None, ck.translation([3e-200, 0.0, 0.0]), ck.translation([-3e-200, 0.0, 0.0])
    )
    assert hit.colliding and hit.t == pytest.approx(1.0 / 3.0, rel=1e-5)


# --- the full sweep ---------------------------------------------------------------------------


@pytest.mark.slow
def test_full_sweep_of_scales_every_query():
    ref_d = ck.distance(BALL, TORUS, PA, PB_APART)
    ref_p = ck.penetration(BOX, BALL, PA, PB_OVERLAP)
    ref_c = ck.classify(BOX, BALL, PA, np.stack([PB_APART, PB_OVERLAP]))
    starts = (pose(0.0, [0, 0, 1], [4.0, 0.5, 0.0]), pose(0.0, [0, 0, 1], [-4.0, 0.25, 0.0]))
    ref_t = ck.time_of_impact(BALL, TORUS, PA, PA, *starts)
    for k in KS_SLOW:
        ball, torus, box = scaled(BALL, k), scaled(TORUS, k), scaled(BOX, k)
        _assert_distance_scaled(ck.distance(ball, torus, sp(PA, k), sp(PB_APART, k)), ref_d, k)
        p = ck.penetration(box, ball, sp(PA, k), sp(PB_OVERLAP, k))
        assert p.depth == math.ldexp(ref_p.depth, k) and np.array_equal(p.direction, ref_p.direction)
        c = ck.classify(box, ball, sp(PA, k), sp(np.stack([PB_APART, PB_OVERLAP]), k))
        assert c.labels.tolist() == ref_c.labels.tolist()
        r = ck.time_of_impact(ball, torus, sp(PA, k), sp(PA, k), sp(starts[0], k), sp(starts[1], k))
        assert (r.colliding, r.t) == (ref_t.colliding, ref_t.t)
