"""time_of_impact: analytic cases, dense sampling with exact tests, tunnelling, python-fcl."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.brute import load_pb_mesh

import collisionkit as ck
from collisionkit.kernels.proximity.toi import pose_at
from collisionkit.query.toi import MOTIONS, mesh_radius, motion_parameters

BOX = ck.primitives.box_mesh([1.0, 1.0, 1.0])
PLATE = ck.primitives.box_mesh([4.0, 4.0, 1e-3])
PEBBLE = ck.primitives.uv_sphere_mesh(0.01, 4, 6)


def poses_at(T0, T1, motion, ts):
    code = np.int64(MOTIONS[motion])
    k, th, u = motion_parameters(np.asarray(T0, float), np.asarray(T1, float), code)
    out = np.empty((len(ts), 4, 4))
    T0c = np.ascontiguousarray(T0, dtype=float)
    for i, t in enumerate(ts):
        pose_at(T0c, k, th, u, code, float(t), out[i])
    return out


def test_motion_endpoints():
    T0 = ck.translation([1, 2, 3]) @ ck.rotation([1, 2, 0.5], 0.7)
    T1 = ck.translation([-2, 0.5, 1]) @ ck.rotation([0, 1, 1], 2.5)
    for motion in ("linear", "screw"):
        P = poses_at(T0, T1, motion, [0.0, 1.0])
        np.testing.assert_allclose(P[0], T0, atol=1e-12)
        np.testing.assert_allclose(P[1], T1, atol=1e-12)


def test_head_on_boxes():
    r = ck.time_of_impact(BOX, BOX, None, None, ck.translation([3, 0, 0]), ck.translation([-3, 0, 0]))
    assert r.colliding and r.converged
    assert r.t <= 1.0 / 3.0 and r.t == pytest.approx(1.0 / 3.0, abs=1e-6)
    assert r.distance <= 1e-6 * 2 * math.sqrt(0.75) + 1e-15
    assert BOX.triangles[r.face_a][:, 0].max() == 0.5  # a face touching x = 0.5 (ties are allowed)
    np.testing.assert_allclose(r.pose_b[:3, 3], [3 - 6 * r.t, 0, 0])


def test_miss_and_start_in_contact():
    r = ck.time_of_impact(BOX, BOX, None, None, ck.translation([3, 2, 0]), ck.translation([-3, 2, 0]))
    assert not r.colliding and r.t == 1.0 and r.face_a == -1
    r = ck.time_of_impact(BOX, BOX, None, None, ck.translation([0.5, 0, 0]), ck.translation([3, 0, 0]))
    assert r.colliding and r.t == 0.0 and r.distance == 0.0


def test_tunnelling_through_a_thin_plate():
    # a 1 cm pebble crosses a 1 mm plate in one step of the motion: sampling at the ends misses it
    start, end = ck.translation([0.3, 0.2, 5.0]), ck.translation([0.3, 0.2, -5.0])
    assert not ck.intersects(PLATE, PEBBLE, None, start) and not ck.intersects(PLATE, PEBBLE, None, end)
    r = ck.time_of_impact(PLATE, PEBBLE, None, None, start, end)
    assert r.colliding
    true_t = (5.0 - 0.0005 - 0.01) / 10.0  # pebble's lowest point (a pole) meets the plate's top
    assert r.t <= true_t and r.t == pytest.approx(true_t, abs=1e-6)


@pytest.mark.parametrize("motion", ["linear", "screw"])
def test_against_dense_sampling(motion):
    a, b = load_pb_mesh("duck_vhacd.obj"), ck.primitives.torus_mesh(0.03, 0.01, 16, 8)
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(6):
        A0 = ck.rotation(rng.normal(size=3), rng.uniform(0, 3))
        A1 = ck.translation(rng.normal(scale=0.02, size=3)) @ ck.rotation(rng.normal(size=3), rng.uniform(0, 3))
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        B0 = ck.translation(0.25 * d) @ ck.rotation(rng.normal(size=3), 1.0)
        B1 = ck.translation(-0.25 * d + rng.normal(scale=0.03, size=3)) @ ck.rotation(rng.normal(size=3), 2.0)
        r = ck.time_of_impact(a, b, A0, A1, B0, B1, motion=motion)
        ts = np.linspace(0.0, 1.0, 801)
        hits = ck.intersects(a, b, poses_at(A0, A1, motion, ts), poses_at(B0, B1, motion, ts))
        first = ts[np.argmax(hits)] if hits.any() else None
        if first is not None:
            assert r.colliding and r.t <= first + 1e-12  # never after a sampled real contact
            checked += 1
        # no contact before t: every sample before it is disjoint
        assert not hits[ts < r.t].any()
        if r.colliding:
            Pa = poses_at(A0, A1, motion, [r.t])[0]
            Pb = poses_at(B0, B1, motion, [r.t])[0]
            np.testing.assert_allclose(r.pose_a, Pa, atol=1e-12)
            dist = ck.distance(a, b, Pa, Pb)
            assert dist.distance == pytest.approx(r.distance, rel=1e-9, abs=1e-15)
            assert r.distance <= 1e-6 * (mesh_radius(a) + mesh_radius(b))
    assert checked >= 2


def test_against_fcl_translation():
    fcl = pytest.importorskip("fcl")
    a, b = load_pb_mesh("duck_vhacd.obj"), load_pb_mesh("duck_vhacd.obj")

    def model(m):
        g = fcl.BVHModel()
        g.beginModel(m.n_vertices, m.n_faces)
        g.addSubModel(np.ascontiguousarray(m.vertices), np.ascontiguousarray(m.faces, dtype=np.int32))
        g.endModel()
        return g

    ga, gb = model(a), model(b)
    rng = np.random.default_rng(1)
    agree = 0
    for _ in range(8):
        R = ck.rotation(rng.normal(size=3), rng.uniform(0, 3))
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        start = ck.translation(0.3 * d) @ R
        end = ck.translation(-0.3 * d + rng.normal(scale=0.02, size=3)) @ R
        ours = ck.time_of_impact(a, b, None, None, start, end)
        o1 = fcl.CollisionObject(ga, fcl.Transform())
        o2 = fcl.CollisionObject(gb, fcl.Transform(start[:3, :3], start[:3, 3]))
        # NOTE: python-fcl 0.7's conservative-advancement solver reports no hit for mesh
        # pairs (checked on two boxes meeting head-on); its sampling solver
        # (CCDC_NAIVE) reports the first colliding sample, i.e. a time >= the true one.
        req = fcl.ContinuousCollisionRequest(
            num_max_iterations=2000, ccd_motion_type=fcl.CCDMotionType.CCDM_TRANS,
            ccd_solver_type=fcl.CCDSolverType.CCDC_NAIVE,
        )  # fmt: skip
        res = fcl.ContinuousCollisionResult()
        fcl.continuousCollide(o1, fcl.Transform(), o2, fcl.Transform(end[:3, :3], end[:3, 3]), req, res)
        assert ours.colliding == res.is_collide
        if res.is_collide:
            assert ours.t <= res.time_of_contact + 1e-9
            assert ours.t == pytest.approx(res.time_of_contact, abs=2e-3)
            agree += 1
    assert agree >= 3


def test_errors():
    with pytest.raises(ValueError):
        ck.time_of_impact(BOX, BOX, None, None, None, None, motion="spline")
    with pytest.raises(ValueError):
        ck.time_of_impact(BOX, BOX, None, None, None, None, tolerance=-1.0)
    with pytest.raises(ValueError):
        ck.time_of_impact(BOX, BOX, None, None, None, None, max_iterations=0)
    with pytest.raises(ck.InvalidPoseError):
        ck.time_of_impact(BOX, BOX, None, np.diag([1.0, 2.0, 1.0, 1.0]), None, None)
    bad = np.stack([np.eye(4), np.zeros((4, 4))])
    with pytest.raises(ck.InvalidPoseError, match=r"start_b\[1\]") as err:
        ck.time_of_impact(BOX, BOX, None, None, bad, None)
    assert err.value.index == 1
    with pytest.raises(ValueError, match="start_a has 2 poses, end_a has 3"):
        ck.time_of_impact(BOX, BOX, np.stack([np.eye(4)] * 2), np.stack([np.eye(4)] * 3), None, None)
    with pytest.raises(ValueError, match="a moves 2 times, b 3 times"):
        ck.time_of_impact(BOX, BOX, np.stack([np.eye(4)] * 2), None, np.stack([np.eye(4)] * 3), None)


def _motions(n, seed):
    """n motions of b towards a: about half hit, some start in contact, some miss."""
    rng = np.random.default_rng(seed)
    start = ck.random_poses(n, 1.5, seed=seed)
    start[:, :3, 3] += [3.0, 0.0, 0.0]
    end = ck.random_poses(n, 1.5, seed=seed + 1)
    end[:, :3, 3] -= [rng.uniform(-1.0, 3.0), 0.0, 0.0]
    return start, end


@pytest.mark.parametrize("motion", ["linear", "screw"])
def test_batch_equals_one_motion_at_a_time(motion):
    """ISSUE 14 step 5: (N, 4, 4) start/end poses, one answer per motion, as N single calls."""
    a = ck.primitives.torus_mesh(1.0, 0.3, 12, 8)
    start, end = _motions(40, seed=3)
    spin = ck.rotation([0, 0, 1], 0.4)
    got = ck.time_of_impact(a, BOX, None, spin, start, end, motion=motion)
    assert got.t.shape == (40,) and got.pose_b.shape == (40, 4, 4)
    assert 5 < int(got.colliding.sum()) < 40  # hits and misses both present
    for k in range(40):
        one = ck.time_of_impact(a, BOX, None, spin, start[k], end[k], motion=motion)
        assert (one.colliding, one.t, one.face_a, one.face_b, one.iterations, one.converged) == (
            bool(got.colliding[k]), float(got.t[k]), int(got.face_a[k]), int(got.face_b[k]),
            int(got.iterations[k]), bool(got.converged[k]),
        )  # fmt: skip
        assert one.distance == got.distance[k] or (math.isinf(one.distance) and math.isinf(got.distance[k]))
        np.testing.assert_array_equal(one.pose_b, got.pose_b[k])
    # threads change nothing but the wall time
    serial = ck.time_of_impact(a, BOX, None, spin, start, end, motion=motion, threads=1)
    np.testing.assert_array_equal(serial.t, got.t)
    np.testing.assert_array_equal(serial.face_b, got.face_b)


def test_single_poses_give_scalars_and_a_batch_of_one_gives_arrays():
    one = ck.time_of_impact(BOX, BOX, None, None, ck.translation([3, 0, 0]), ck.translation([-3, 0, 0]))
    assert isinstance(one.t, float) and isinstance(one.colliding, bool) and one.pose_a.shape == (4, 4)
    batch = ck.time_of_impact(BOX, BOX, None, None, ck.translation([3, 0, 0])[None], ck.translation([-3, 0, 0]))
    assert batch.t.shape == (1,) and batch.t[0] == one.t and batch.pose_a.shape == (1, 4, 4)


@pytest.mark.parametrize("scale", [1.0, 2.0**-70, 2.0**80])
def test_single_motion_fast_path_equals_the_registry_path(scale):
    """The per-call path (two meshes, four (4, 4) poses, default threads) skips the request
    record; it must answer as the registry's handler (threads=1) and a batch of one, at
    every scale (prescaled outside the kernel's band)."""
    torus = ck.primitives.torus_mesh(1.0, 0.3, 12, 8)
    a = ck.Mesh(torus.vertices * scale, torus.faces)
    b = ck.Mesh(BOX.vertices * scale, BOX.faces)
    start, end = _motions(6, seed=11)
    start[:, :3, 3] *= scale
    end[:, :3, 3] *= scale
    spin = ck.rotation([0, 0, 1], 0.4)
    hits = 0
    for k in range(6):
        fast = ck.time_of_impact(a, b, None, spin, start[k], end[k])
        slow = ck.time_of_impact(a, b, None, spin, start[k], end[k], threads=1)
        batch = ck.time_of_impact(a, b, None, spin, start[k][None], end[k])
        for r, row in ((slow, None), (batch, 0)):

            def per(x, row=row):
                return x if row is None else x[row]

            assert (fast.colliding, fast.t, fast.face_a, fast.face_b, fast.iterations, fast.converged) == (
                per(r.colliding), per(r.t), per(r.face_a), per(r.face_b), per(r.iterations), per(r.converged),
            )  # fmt: skip
            assert fast.distance == per(r.distance) or (math.isinf(fast.distance) and math.isinf(per(r.distance)))
            np.testing.assert_array_equal(fast.pose_b, per(r.pose_b))
        assert not fast.pose_a.flags.writeable and not fast.pose_b.flags.writeable
        hits += fast.colliding
    assert 0 < hits < 6  # hits and misses both compared
