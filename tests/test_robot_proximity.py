"""The compiled distance pass of the robot checker (kernels/robot/proximity.py, issue 30 item 2)
against the per-pair Python path it replaces (``collisionkit.distance`` per pair) on random
configurations, for every volume kind: pair distances, clearance, margins and certified edges.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.kernels.robot import proximity
from collisionkit.robot import motion

KINDS = ("auto", "aabb", "obb", "sphere", "kdop14", "saabb")


def _with_kind(robot, kind):
    meshes = {n: m.with_options(bv=kind) for n, m in robot.link_meshes.items()}
    return ck.Robot(robot.name, robot.links, robot.joints, meshes, robot.path, robot.allowed_pairs)


def _scene(kind="auto", convex=False):
    w = ck.World()
    box = ck.primitives.box_mesh
    w.add("table", box([1.2, 1.6, 0.04]).with_options(bv=kind), ck.translation([0.75, 0, -0.03]))
    w.add("shelf", box([0.3, 0.8, 0.02]).with_options(bv=kind), ck.translation([0.6, 0, 0.5]))
    w.add("post", box([0.08, 0.08, 0.8]).with_options(bv=kind), ck.translation([0.5, 0.5, 0.4]))
    if convex:
        w.add("ball", ck.Sphere(0.08), ck.translation([0.4, -0.4, 0.3]))
        w.add("slab", ck.Box([0.02, 1.0, 1.0]), ck.translation([-0.6, 0, 0.5]))
    return w


@pytest.fixture
def python_path(monkeypatch):
    """Switch every pair to the per-pair Python path (no pair is the checker's)."""

    def switch():
        monkeypatch.setattr(motion._PairSet, "kernel_pairs", lambda self: np.full(self.n, -1, np.int64))

    return switch


@pytest.mark.parametrize("kind", KINDS)
def test_pair_distances_equal_distance_per_pair(panda, kind):
    robot = _with_kind(panda, kind)
    world = _scene(kind)
    ps = motion._PairSet(robot, world, self_collision=True, allowed=(), ignore=(), base=None, margin=0.01)
    kp = ps.kernel_pairs()
    assert (kp >= 0).all() and len(set(kp.tolist())) == ps.n
    rng = np.random.default_rng(1)
    for q in robot.random_configurations(4, seed=11):
        T = np.ascontiguousarray(robot.link_poses(q))
        idx = np.arange(ps.n, dtype=np.int64)
        out, who = ps.compiled(T, idx, np.full(ps.n, math.inf))
        assert who == -1
        ref = [ck.distance(ps.shape_a[p], ps.shape_b[p], T[ps.a[p]], ps.pose_b(p, T)) for p in range(ps.n)]
        d_ref = np.array([r.distance for r in ref])
        np.testing.assert_allclose(out[:, proximity.OUT_D], d_ref, rtol=1e-12, atol=1e-15)
        # the closest points are at the distance apart
        gap = np.linalg.norm(out[:, 1:4] - out[:, 4:7], axis=1)
        np.testing.assert_allclose(gap, d_ref, rtol=1e-9, atol=1e-12)
        # with bounds: inf exactly where the distance is not below the bound
        upper = d_ref * rng.choice([0.5, 0.999, 1.001, 2.0], ps.n) + 1e-9
        got, _ = ps.compiled(T, idx, upper)
        below = d_ref < upper * (1 - 1e-12)
        far = d_ref > upper * (1 + 1e-12)
        assert np.isfinite(got[below, 0]).all() and np.isinf(got[far, 0]).all()
        np.testing.assert_allclose(got[below, 0], d_ref[below], rtol=1e-12, atol=1e-15)
        # stopping at the first pair within its threshold, in the order given
        out, who = ps.compiled(T, idx, np.nextafter(ps.thr, np.inf), proximity.PD_ANY)
        within = np.flatnonzero(d_ref <= ps.thr)
        assert who == (within[0] if within.size else -1)
        # clearance: the running best caps each search; the best pair is the first minimum
        out, who = ps.compiled(T, idx, np.full(ps.n, math.inf), proximity.PD_CLEARANCE)
        c = np.maximum(d_ref - ps.thr, 0.0)
        assert who >= 0 and max(out[who, 0] - ps.thr[who], 0.0) == pytest.approx(c.min(), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("kind", KINDS)
def test_clearance_margin_and_edges_equal_the_python_path(panda, kind, python_path):
    plain = _with_kind(panda, kind)
    robot = plain.with_padding({"panda_hand": 0.02})
    world = _scene(kind)
    q = robot.random_configurations(12, seed=5)
    # every pair the checker's and every threshold > 0: the batch kernel (margin_any)
    c = motion.clearance(plain, q, world).distance
    mid = float(np.median(c[c > 0]))  # a margin some configurations are within and some not
    margins = (0.0005, mid)
    got_plain = [motion.check_with_margin(plain, q, world, margin=m) for m in margins]
    got_one = [motion.check_with_margin(plain, qk, world, margin=mid) for qk in q]
    got_c = motion.clearance(robot, q, world)
    got_m = [motion.check_with_margin(robot, q, world, margin=m) for m in (0.0, 0.01, 0.05)]
    q0, q1 = q[:6], q[6:]
    got_e = motion.check_motion(robot, q0, q1, world, margin=0.01)
    python_path()
    ref_c = motion.clearance(robot, q, world)
    np.testing.assert_allclose(got_c.distance, ref_c.distance, rtol=1e-12, atol=1e-15)
    assert list(got_c.link) == list(ref_c.link) and list(got_c.other) == list(ref_c.other)
    pos = ref_c.distance > 0
    np.testing.assert_allclose(got_c.point_link[pos], ref_c.point_link[pos], rtol=1e-9, atol=1e-12)
    for m, got in zip((0.0, 0.01, 0.05), got_m, strict=True):
        np.testing.assert_array_equal(got, motion.check_with_margin(robot, q, world, margin=m))
    for m, got in zip(margins, got_plain, strict=True):
        ref = motion.check_with_margin(plain, q, world, margin=m)
        np.testing.assert_array_equal(got, ref)
        assert 0 < ref.sum() < len(q) or m != mid  # both answers occur
    assert got_one == list(motion.check_with_margin(plain, q, world, margin=mid))
    ref_e = motion.check_motion(robot, q0, q1, world, margin=0.01)
    for f in ("free", "t_free", "t_witness", "undecided", "segments", "distance_calls"):
        np.testing.assert_array_equal(getattr(got_e, f), getattr(ref_e, f), err_msg=f)


def test_convex_obstacles_stay_on_the_python_path(panda, python_path):
    world = _scene(convex=True)
    ps = motion._PairSet(panda, world, self_collision=True, allowed=(), ignore=(), base=None)
    kp = ps.kernel_pairs()
    convex = np.array([o >= 0 and type(ps.shapes[o]) is not ck.Mesh for o in ps.obj])
    assert convex.any() and (kp[convex] == -1).all() and (kp[~convex] >= 0).all()
    q = panda.random_configurations(8, seed=9)
    got_c = motion.clearance(panda, q, world)
    got_m = motion.check_with_margin(panda, q, world, margin=0.02)
    got_e = motion.check_motion(panda, q[:4], q[4:], world)
    python_path()
    ref_c = motion.clearance(panda, q, world)
    np.testing.assert_allclose(got_c.distance, ref_c.distance, rtol=1e-12, atol=1e-15)
    assert list(got_c.link) == list(ref_c.link) and list(got_c.other) == list(ref_c.other)
    np.testing.assert_array_equal(got_m, motion.check_with_margin(panda, q, world, margin=0.02))
    ref_e = motion.check_motion(panda, q[:4], q[4:], world)
    for f in ("free", "t_free", "t_witness", "undecided", "segments", "distance_calls"):
        np.testing.assert_array_equal(getattr(got_e, f), getattr(ref_e, f), err_msg=f)


def test_far_from_the_origin_equals_the_python_path(panda, python_path):
    """Clearance and margins with the robot and its cell 10^5 m from the origin: the
    compiled pass and the per-pair path agree (large translations in every relative pose)."""
    far = ck.translation([2e5, -3e5, 1e5])
    near, world = _scene(), ck.World()
    for name in near.names:
        world.add(name, near.shape(name), far @ near.pose(name))
    q = panda.random_configurations(10, seed=21)
    got_c = motion.clearance(panda, q, world, base=far)
    got_m = motion.check_with_margin(panda, q, world, margin=0.01, base=far)
    python_path()
    ref_c = motion.clearance(panda, q, world, base=far)
    np.testing.assert_allclose(got_c.distance, ref_c.distance, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(got_m, motion.check_with_margin(panda, q, world, margin=0.01, base=far))
    assert np.any(got_c.distance > 0)


@pytest.mark.parametrize("kind", ("auto", "obb", "kdop14"))
def test_the_margin_kernel_records_every_pair_within_its_threshold(panda, kind):
    """The margin kernel's recording mode (``_margin_worker`` with a ``detail`` matrix: what a
    margin checker orders its pairs by) marks exactly the pairs within their thresholds, zero
    thresholds (the checker's exact test) included, and answers each configuration as the
    stopping mode does."""
    robot = _with_kind(panda, kind).with_padding({"panda_hand": 0.02, "panda_link5": 0.01})
    world = _scene(kind)
    ps = motion._PairSet(robot, world, self_collision=True, allowed=(), ignore=(), base=None, margin=0.0)
    kp = ps.kernel_pairs()
    thr = np.empty(ps.n)
    thr[kp] = ps.thr
    assert (ps.thr == 0).any() and (ps.thr > 0).any()  # both tests run
    Q = robot.random_configurations(24, seed=3)
    n = Q.shape[0]
    fb, wb, ib, topo = ps._args
    none = np.zeros(0, np.int64)
    stop = np.zeros(n, np.int8)
    proximity.margin_serial(Q, fb, wb, ib, topo, thr, stop, none, np.zeros((0, 0), np.bool_), none, np.int64(1))
    rec = np.zeros(n, np.int8)
    detail = np.zeros((ps.n, n), np.bool_)
    work = np.zeros(ps.n, np.int64)
    proximity.margin_serial(Q, fb, wb, ib, topo, thr, rec, none, detail, work, np.int64(1))
    np.testing.assert_array_equal(rec, stop)
    np.testing.assert_array_equal(rec == 1, detail.any(axis=0))
    assert 0 < (rec == 1).sum() < n and (ps.thr[detail.any(axis=1)] == 0).any()  # zero thresholds hit too
    assert (work[kp[detail.any(axis=1)]] > 0).all()  # work is per row of the checker's pairs
    checked = 0
    for k in range(n):
        T = np.ascontiguousarray(robot.link_poses(Q[k]))
        for p in range(ps.n):
            a, b, Ta, Tb = ps.shape_a[p], ps.shape_b[p], T[ps.a[p]], ps.pose_b(p, T)
            if ps.thr[p] == 0.0:
                want = bool(ck.intersects(a, b, Ta, Tb))
            else:
                d = ck.distance(a, b, Ta, Tb).distance
                if abs(d - ps.thr[p]) < 1e-9:  # a tie within rounding: either answer
                    continue
                want = d <= ps.thr[p]
            assert detail[p, k] == want, (k, p, ps.thr[p])
            checked += 1
    assert checked > 0.99 * n * ps.n


def test_a_first_margin_check_orders_by_the_margin_kernel(panda, monkeypatch):
    """A fresh margin checker orders its pairs on its first margin check by the margin kernel's
    hits, never calling the collision kernel (whose chain it would otherwise compile), and
    answers as the per-pair path."""
    from collisionkit.kernels.robot import checker as ckernel
    from collisionkit.robot import checker, margin

    def refuse(*args):
        raise AssertionError("the collision kernel ran for a margin check")

    padded = panda.with_padding({"panda_hand": 0.02})
    world = _scene()
    q = padded.random_configurations(16, seed=8)
    want = motion.check_with_margin(padded, q, world, margin=0.01)
    assert 0 < want.sum() < len(q)
    monkeypatch.setattr(checker.kernel, "check_serial", refuse)
    chk = margin._checker(padded, world, {})
    assert chk._order_pending
    before = chk._pairs.copy()
    got = [bool(padded.check(x, world, margin=0.01)) for x in q]
    assert got == want.tolist() and not chk._order_pending
    assert sorted(map(tuple, chk._pairs.tolist())) == sorted(map(tuple, before.tolist()))  # the same pairs
    assert not np.array_equal(chk._pairs[:, ckernel.PAIR_ROW], before[:, ckernel.PAIR_ROW])  # reordered


def test_first_margin_checks_among_convex_obstacles_answer_as_clearance(panda):
    """A fresh margin checker in a world with convex obstacles (the per-pair path decides
    them; the margin kernel orders and answers the mesh pairs): one configuration a call
    and in a batch, plain and padded robots (zero thresholds among the pairs), the answers
    ``clearance <= margin``."""
    padded = panda.with_padding({"panda_hand": 0.02})
    q = panda.random_configurations(24, seed=12)
    both = 0
    for robot, margin in ((panda, 0.01), (panda, 0.04), (padded, 0.0), (padded, 0.01)):
        want = robot.clearance(q, _scene(convex=True)).distance <= margin
        world = _scene(convex=True)  # a new world: a new checker, ordered by these calls
        assert [bool(robot.check(x, world, margin=margin)) for x in q] == want.tolist()
        np.testing.assert_array_equal(robot.check(q, _scene(convex=True), margin=margin, threads=1), want)
        both += 0 < want.sum() < len(q)
    assert both >= 2  # both answers occur
