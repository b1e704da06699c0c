"""``collisionkit.check_motion``: certified motions of two rigid shapes (issue 30 item 4).

Refereed by dense exact sampling: every motion called free is sampled at 2,001 poses (and
the certified prefix of every other one), each decided by ``ck.intersects`` (margin 0) or
``ck.distance`` (margin > 0); no sample may collide. Every "collides" carries a witness the
same exact queries confirm at its poses. Grazing and touching motions, margins, every volume
kind, convex shapes (solids), batches, scales and bad input.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.kernels.proximity.toi import MR_WIDTH, motion_row, pose_at
from collisionkit.query.toi import MOTIONS

SAMPLES = 2001
TORUS = ck.primitives.torus_mesh(1.0, 0.25, 16, 10)
SPHERE = ck.primitives.uv_sphere_mesh(0.4, 8, 12)
BOX = ck.primitives.box_mesh([1.0, 1.0, 1.0])


def poses_along(P0, P1, motion, ts):
    """(len(ts), 4, 4) poses of one shape moving P0 -> P1 (``time_of_impact``'s interpolation)."""
    row = np.empty(MR_WIDTH)
    code = np.int64(MOTIONS[motion])
    P0 = np.ascontiguousarray(P0, dtype=np.float64)
    motion_row(P0, np.ascontiguousarray(P1, dtype=np.float64), code, row)
    out = np.empty((len(ts), 4, 4))
    for i, t in enumerate(ts):
        pose_at(P0, row[0:3], float(row[3]), row[4:7], code, float(t), out[i])
    return out


def colliding(a, b, Ta, Tb, margin):
    """(n,) exact: intersecting (margin 0) or at most margin apart."""
    if margin == 0.0:
        return np.asarray(ck.intersects(a, b, Ta, Tb))
    return np.asarray(ck.distance(a, b, Ta, Tb).distance) <= margin


def referee(a, b, sa, ea, sb, eb, r, margin, motion="linear"):
    """Assert ``r`` (one motion's record) against dense exact sampling; returns its kind."""
    assert not (r.free and r.undecided)
    if r.free:
        assert r.t_free == 1.0 and math.isnan(r.t_witness) and math.isnan(r.distance)
        ts = np.linspace(0.0, 1.0, SAMPLES)
    else:
        assert 0.0 <= r.t_free <= 1.0
        ts = np.linspace(0.0, r.t_free, SAMPLES)[:-1]  # the certified prefix, its end excluded
    if ts.size and ts[-1] > 0.0:
        Ta = poses_along(sa, ea, motion, ts)
        Tb = poses_along(sb, eb, motion, ts)
        hit = colliding(a, b, Ta, Tb, margin)
        assert not hit.any(), f"a certified pose collides at t={ts[np.argmax(hit)]}"
    if r.free:
        return "free"
    if r.undecided:
        assert math.isnan(r.t_witness)
        return "undecided"
    assert r.t_free <= r.t_witness <= 1.0 and r.distance <= margin
    # the witness poses are the motion's at t_witness and collide by the exact queries
    np.testing.assert_allclose(r.pose_b, poses_along(sb, eb, motion, [r.t_witness])[0], atol=1e-12)
    np.testing.assert_allclose(r.pose_a, poses_along(sa, ea, motion, [r.t_witness])[0], atol=1e-12)
    assert bool(colliding(a, b, r.pose_a[None], r.pose_b[None], margin)[0])
    return "collides"


def random_motions(n, seed, spread=2.0, turn=1.5):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        sb = ck.translation(rng.uniform(-spread, spread, 3)) @ ck.rotation(rng.normal(size=3), rng.uniform(0, turn))
        eb = ck.translation(rng.uniform(-spread, spread, 3)) @ ck.rotation(rng.normal(size=3), rng.uniform(0, turn))
        sa = ck.rotation(rng.normal(size=3), rng.uniform(0, 0.5))
        ea = ck.translation(rng.uniform(-0.3, 0.3, 3)) @ ck.rotation(rng.normal(size=3), rng.uniform(0, 0.5))
        out.append((sa, ea, sb, eb))
    return out


@pytest.mark.parametrize("motion", ["linear", "screw"])
@pytest.mark.parametrize("margin", [0.0, 0.05])
def test_random_motions_hold_under_dense_sampling(motion, margin):
    motions = random_motions(24, seed=7 if motion == "linear" else 8)
    kinds = []
    for sa, ea, sb, eb in motions:
        r = ck.check_motion(TORUS, SPHERE, sa, ea, sb, eb, motion=motion, margin=margin)
        kinds.append(referee(TORUS, SPHERE, sa, ea, sb, eb, r, margin, motion))
    # not vacuous: both answers occur
    assert kinds.count("free") >= 3 and kinds.count("collides") >= 3, kinds


def test_batch_equals_one_motion_at_a_time():
    motions = random_motions(10, seed=3)
    sa, ea, sb, eb = (np.stack(x) for x in zip(*motions, strict=True))
    batch = ck.check_motion(TORUS, SPHERE, sa, ea, sb, eb, margin=0.02)
    assert batch.free.shape == (10,) and batch.pose_a.shape == (10, 4, 4)
    for k in range(10):
        one = ck.check_motion(TORUS, SPHERE, sa[k], ea[k], sb[k], eb[k], margin=0.02)
        assert type(one.free) is bool and type(one.t_free) is float
        assert one.free == batch.free[k] and one.t_free == batch.t_free[k]
        np.testing.assert_array_equal(one.pose_b, batch.pose_b[k])
    assert (
        ck.check_motion(TORUS, SPHERE, sa, ea, sb, eb, margin=0.02, threads=1).t_free.tolist() == batch.t_free.tolist()
    )


def test_sliding_along_a_face_touching_collides_a_gap_is_free():
    """b slides past a's face at x = 0.5: touching (gap 0) collides, any gap is free at
    margin 0; the margin decides at the gap itself."""
    for gap, margin, want in [
        (0.0, 0.0, "collides"),
        (1e-9, 0.0, "free"),
        (1e-3, 0.0, "free"),
        (1e-3, 2e-3, "collides"),
        (0.25, 0.5, "collides"),
        (1e-3, 9e-4, "free"),
    ]:
        sb, eb = ck.translation([1.0 + gap, -3.0, 0.0]), ck.translation([1.0 + gap, 3.0, 0.0])
        r = ck.check_motion(BOX, BOX, start_b=sb, end_b=eb, margin=margin)
        assert referee(BOX, BOX, np.eye(4), np.eye(4), sb, eb, r, margin) == want, (gap, margin, r)
        if want == "collides" and margin - gap < 0.01:
            # the faces overlap from t = 1/3 on (|y| <= 1): certified up to there, a witness past it
            assert r.t_free <= 1 / 3 <= r.t_witness <= 1 / 3 + 2.0**-9


def test_grazing_a_corner_and_passing_through_thin_plates():
    """A thin plate crossing the path between any two of 100 samples is caught; a box whose
    corner grazes another's passes at the gap and collides at contact."""
    plate = ck.primitives.box_mesh([0.002, 2.0, 2.0])
    sb, eb = ck.translation([-5.0, 0.0, 0.0]), ck.translation([5.0, 0.0, 0.0])  # 10 units, plate 2 mm
    r = ck.check_motion(plate, SPHERE, start_b=sb, end_b=eb)
    assert referee(plate, SPHERE, np.eye(4), np.eye(4), sb, eb, r, 0.0) == "collides"
    turned = ck.rotation([0, 0, 1], math.pi / 4)
    corner = 0.5 * math.sqrt(2.0)  # the turned box's corner reaches x = 0.5 + corner from its centre
    for gap, want in [(1e-6, "free"), (0.0, "collides"), (-1e-6, "collides")]:
        x = 0.5 + corner + gap
        sb, eb = ck.translation([x, -2.0, 0.0]) @ turned, ck.translation([x, 2.0, 0.0]) @ turned
        r = ck.check_motion(BOX, BOX, start_b=sb, end_b=eb)
        assert referee(BOX, BOX, np.eye(4), np.eye(4), sb, eb, r, 0.0) in (want, "undecided"), (gap, r)


def test_start_colliding_and_standing_still():
    r = ck.check_motion(BOX, BOX, start_b=ck.translation([0.5, 0, 0]), end_b=ck.translation([9.0, 0, 0]))
    assert not r.free and r.t_free == 0.0 and r.t_witness == 0.0 and r.distance == 0.0
    still = ck.translation([3.0, 0, 0])
    assert ck.check_motion(BOX, BOX, start_b=still, end_b=still).free
    r = ck.check_motion(BOX, BOX, start_b=still, end_b=still, margin=2.0)
    assert not r.free and r.t_witness == 0.0 and r.distance == pytest.approx(2.0)


@pytest.mark.parametrize("kind", ["aabb", "obb", "sphere", "kdop14", "saabb", "auto"])
def test_every_volume_kind(kind):
    a, b = TORUS.with_options(bv=kind), SPHERE.with_options(bv=kind)
    motions = random_motions(8, seed=11)
    sa, ea, sb, eb = (np.stack(x) for x in zip(*motions, strict=True))
    r = ck.check_motion(a, b, sa, ea, sb, eb, margin=0.01)
    ref = ck.check_motion(TORUS.with_options(bv="aabb"), SPHERE.with_options(bv="aabb"), sa, ea, sb, eb, margin=0.01)
    decided = ~r.undecided & ~ref.undecided
    np.testing.assert_array_equal(r.free[decided], ref.free[decided])
    for k in range(8):
        one = ck.check_motion(a, b, sa[k], ea[k], sb[k], eb[k], margin=0.01)
        referee(a, b, sa[k], ea[k], sb[k], eb[k], one, 0.01)


def test_convex_shapes_are_solids():
    solid = ck.Box([2.0, 2.0, 2.0])
    # a small mesh inside the box's solid: surfaces apart, the solids collide from the start
    r = ck.check_motion(solid, SPHERE, start_b=ck.translation([0.1, 0, 0]), end_b=ck.translation([0.2, 0, 0]))
    assert not r.free and r.t_witness == 0.0 and r.t_free == 0.0
    assert ck.intersects(solid, SPHERE, r.pose_a, r.pose_b)
    r = ck.check_motion(solid, SPHERE, start_b=ck.translation([0.1, 0, 0]), end_b=ck.translation([0.2, 0, 0]), margin=0.1)
    assert not r.free and r.distance == 0.0
    # moving in from outside: a witness where the exact queries agree
    for b in (
        SPHERE,
        ck.Box([0.5, 0.5, 0.5]),
        ck.Convex.from_points(np.random.default_rng(2).normal(size=(20, 3)) * 0.3),
    ):
        for margin in (0.0, 0.05):
            sb, eb = ck.translation([4.0, 0.3, 0.1]), ck.translation([0.0, 0.3, 0.1])
            r = ck.check_motion(solid, b, start_b=sb, end_b=eb, margin=margin)
            assert referee(solid, b, np.eye(4), np.eye(4), sb, eb, r, margin) == "collides"
            sb, eb = ck.translation([4.0, 0.3, 0.1]), ck.translation([4.0, 5.0, 0.1])
            r = ck.check_motion(solid, b, start_b=sb, end_b=eb, margin=margin)
            assert referee(solid, b, np.eye(4), np.eye(4), sb, eb, r, margin) == "free"


def test_smooth_against_convex_is_refused():
    with pytest.raises(ck.UnsupportedQueryError, match="check_motion"):
        ck.check_motion(ck.Sphere(0.5), ck.Box([1, 1, 1]), start_b=ck.translation([3, 0, 0]), end_b=np.eye(4))


def test_scale_invariance():
    """Every length times 2**60: the same answers (the kernels run prescaled)."""
    s = 2.0**60
    big_a = ck.Mesh(np.asarray(TORUS.vertices) * s, TORUS.faces)
    big_b = ck.Mesh(np.asarray(SPHERE.vertices) * s, SPHERE.faces)
    for sa, ea, sb, eb in random_motions(6, seed=5):
        up = [p.copy() for p in (sa, ea, sb, eb)]
        for p in up:
            p[:3, 3] *= s
        r = ck.check_motion(TORUS, SPHERE, sa, ea, sb, eb, margin=0.01)
        R = ck.check_motion(big_a, big_b, up[0], up[1], up[2], up[3], margin=0.01 * s)
        assert (r.free, r.t_free, r.undecided) == (R.free, R.t_free, R.undecided)
        if not math.isnan(r.distance):
            assert R.distance == r.distance * s


def test_bad_input():
    sb, eb = ck.translation([3, 0, 0]), ck.translation([-3, 0, 0])
    for margin in (-1.0, math.nan, math.inf, "x"):
        with pytest.raises(ValueError, match="margin"):
            ck.check_motion(BOX, BOX, start_b=sb, end_b=eb, margin=margin)
    with pytest.raises(ValueError, match="motion"):
        ck.check_motion(BOX, BOX, start_b=sb, end_b=eb, motion="spline")
    with pytest.raises(TypeError, match="tolerance"):
        ck.check_motion(BOX, BOX, start_b=sb, end_b=eb, tolerance=1e-3)
    bad = sb.copy()
    bad[0, 0] = 2.0
    with pytest.raises(ck.InvalidPoseError, match="start_b"):
        ck.check_motion(BOX, BOX, start_b=bad, end_b=eb)
    nan = eb.copy()
    nan[1, 3] = math.nan
    with pytest.raises(ck.InvalidPoseError, match="end_b"):
        ck.check_motion(BOX, BOX, start_b=sb, end_b=nan)
    with pytest.raises(ValueError, match="broadcast"):
        ck.check_motion(BOX, BOX, start_b=np.stack([sb] * 3), end_b=np.stack([eb] * 2))
    with pytest.raises(ValueError):
        ck.check_motion(BOX, BOX, start_b=np.zeros((3, 3)), end_b=eb)
    with pytest.raises(ck.UnsupportedPairError):
        ck.check_motion("box", BOX, start_b=sb, end_b=eb)
    empty = ck.check_motion(BOX, BOX, start_b=np.zeros((0, 4, 4)), end_b=eb)
    assert empty.free.shape == (0,)
