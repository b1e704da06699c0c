"""Margins (issue 30 item 2): the threshold descent (kernels/proximity/threshold.py) behind
``intersects(margin=)``, ``World.colliding_pairs(margin=)`` and ``Robot.check(margin=)``,
refereed by the exact distance (``collisionkit.distance``: ``within`` is ``distance <= margin``)
and by the per-pair path, for every volume kind and shape kind.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.errors import UnsupportedOptionError
from collisionkit.query.spec import SPECS
from collisionkit.robot import motion

KINDS = ("auto", "aabb", "obb", "sphere", "kdop14", "saabb")
box = ck.primitives.box_mesh


def _poses(n, radius, seed):
    return ck.random_poses(n, radius, seed=seed)


@pytest.mark.parametrize("kind", KINDS)
def test_margin_is_distance_at_most_margin(kind):
    """Many poses, margins just below, at and just above each pose's exact distance, and
    fixed margins: ``intersects(margin=m)`` is ``distance <= m``, single and batched."""
    a = ck.primitives.torus_mesh(1.0, 0.25, 24, 12).with_options(bv=kind)
    b = ck.primitives.gear_mesh(12).with_options(bv=kind)
    P = _poses(40, 2.6, seed=3)
    d = np.asarray(ck.distance(a, b, None, P).distance)
    assert (d == 0).any() and (d > 0.05).any() and (d < 0.3).any()
    for m in (0.01, 0.05, 0.3):
        np.testing.assert_array_equal(ck.intersects(a, b, None, P, margin=m), d <= m)
    for k in range(P.shape[0]):
        if d[k] == 0.0:
            assert ck.intersects(a, b, None, P[k], margin=1e-9)
            continue
        for m, want in ((d[k], True), (d[k] * (1 - 1e-9), False), (d[k] * (1 + 1e-9), True),
                        (float(np.nextafter(d[k], 0.0)), False)):  # fmt: skip
            assert ck.intersects(a, b, None, P[k], margin=m) is want, (k, m, d[k])
            assert ck.intersects(b, a, P[k], None, margin=m) is bool(ck.distance(b, a, P[k]).distance <= m)


def test_margin_zero_is_intersects():
    a = ck.primitives.torus_mesh(1.0, 0.25, 24, 12)
    b = ck.primitives.uv_sphere_mesh(0.4, 8, 12)
    P = _poses(60, 1.6, seed=5)
    plain = ck.intersects(a, b, None, P)
    assert 0 < plain.sum() < len(P)
    for zero in (0.0, 0, np.float64(0.0)):
        np.testing.assert_array_equal(ck.intersects(a, b, None, P, margin=zero), plain)
    assert [ck.intersects(a, b, None, T, margin=0) for T in P] == plain.tolist()


def test_touching_and_nearly_touching_faces():
    a = box([1, 1, 1])
    touching = ck.translation([1.0, 0.0, 0.0])  # faces share the plane x = 0.5
    assert ck.intersects(a, a, None, touching) and ck.intersects(a, a, None, touching, margin=1e-12)
    for gap in (1e-9, 1e-3, 0.25):
        T = ck.translation([1.0 + gap, 0.3, -0.2])
        d = ck.distance(a, a, None, T).distance
        assert not ck.intersects(a, a, None, T)
        assert ck.intersects(a, a, None, T, margin=d) and not ck.intersects(a, a, None, T, margin=d * (1 - 1e-6))
        assert ck.intersects(a, a, None, T, margin=2 * gap)


@pytest.mark.parametrize("bad", [-1e-3, -0.0 - 1.0, math.nan, math.inf, -math.inf, "x", None, [0.1]])
def test_bad_margins_raise(bad):
    a = box()
    with pytest.raises(ValueError, match="margin"):
        ck.intersects(a, a, None, ck.translation([3, 0, 0]), margin=bad)
    with pytest.raises(ValueError, match="margin"):
        ck.intersects(a, a, None, _poses(3, 2.0, seed=1), margin=bad)
    w = ck.World()
    w.add("a", a)
    with pytest.raises(ValueError, match="margin"):
        w.colliding_pairs(margin=bad)


def test_strategies_that_cannot_answer_a_margin_are_refused():
    a = box()
    T = ck.translation([1.05, 0, 0])
    assert ck.intersects(a, a, None, T, margin=0.1, strategy=ck.Descent(tri_test="moller"))
    for strategy in ("bfs", "oaabb"):
        with pytest.raises(UnsupportedOptionError, match="margin"):
            ck.intersects(a, a, None, T, margin=0.1, strategy=strategy)
    with pytest.raises(UnsupportedOptionError, match="margin"):
        ck.intersects(ck.Box([1, 1, 1]), ck.Box([1, 1, 1]), None, T, margin=0.1, strategy="double-box")
    assert ck.intersects(ck.Box([1, 1, 1]), ck.Box([1, 1, 1]), None, T, margin=0.1, strategy="gjk")


CONVEX = {
    "box": lambda: ck.Box([0.8, 0.5, 0.6]),
    "sphere": lambda: ck.Sphere(0.45),
    "capsule": lambda: ck.Capsule(0.2, 0.8),
    "convex": lambda: ck.Convex(ck.primitives.uv_sphere_mesh(0.5, 6, 8).vertices),
    "mesh": lambda: ck.primitives.torus_mesh(0.8, 0.2, 20, 10),
}


@pytest.mark.parametrize("kb", sorted(CONVEX))
@pytest.mark.parametrize("ka", sorted(CONVEX))
def test_every_shape_kind(ka, kb):
    """Convex pairs (GJK's distance), convex and mesh (surface, or the mesh inside the solid),
    meshes: ``intersects(margin=m)`` is ``distance(...).distance <= m``."""
    a, b = CONVEX[ka](), CONVEX[kb]()
    P = _poses(30, 1.8, seed=7)
    d = np.asarray(ck.distance(a, b, None, P).distance)
    for m in (0.02, 0.2):
        np.testing.assert_array_equal(ck.intersects(a, b, None, P, margin=m), d <= m, err_msg=f"{ka}-{kb} {m}")
    for k in range(0, 30, 5):
        assert ck.intersects(a, b, None, P[k], margin=0.2) is bool(d[k] <= 0.2)


def test_a_mesh_inside_a_convex_solid_is_within_any_margin():
    inner = box([0.2, 0.2, 0.2])
    solid = ck.Box([2.0, 2.0, 2.0])
    assert ck.distance(solid, inner).distance == 0.0
    assert ck.intersects(solid, inner, margin=1e-6) and ck.intersects(inner, solid, None, _poses(4, 0.1, seed=2), margin=0.01).all()


def test_far_from_the_origin_and_tiny_scales():
    """Pairs outside the kernel's band of scales run prescaled: the same answers as at unit scale."""
    a = ck.primitives.torus_mesh(1.0, 0.25, 24, 12)
    P = _poses(20, 2.5, seed=9)
    d = np.asarray(ck.distance(a, a, None, P).distance)
    m = float(np.median(d[d > 0]))
    want = d <= m
    for s in (2.0**-80, 2.0**80):
        sa = ck.Mesh(a.vertices * s, a.faces)
        Ps = P.copy()
        Ps[:, :3, 3] *= s
        np.testing.assert_array_equal(ck.intersects(sa, sa, None, Ps, margin=m * s), want)
        assert [ck.intersects(sa, sa, None, T, margin=m * s) for T in Ps[:5]] == want[:5].tolist()


def test_the_spec_declares_margin_once():
    spec = SPECS["intersects"]
    assert spec.options["margin"].default == 0.0 and "margin" in dict(spec.cli_options())
    from collisionkit.cli import build_parser

    args = build_parser().parse_args(["check", "a.stl", "b.stl", "--margin", "0.25"])
    assert args.margin == 0.25
    with pytest.raises(SystemExit):
        build_parser().parse_args(["check", "a.stl", "b.stl", "--margin", "-1"])


# -- the World --------------------------------------------------------------------------------
def _world(kind="auto"):
    w = ck.World()
    rng = np.random.default_rng(4)
    shapes = [
        ck.primitives.torus_mesh(0.5, 0.12, 16, 8), box([0.4, 0.3, 0.2]), ck.primitives.gear_mesh(10, 0.4, 0.34),
        ck.primitives.uv_sphere_mesh(0.25, 6, 10),
    ]
    for i in range(14):
        s = shapes[i % 4].with_options(bv=kind)
        w.add(f"m{i}", s, ck.random_poses(1, 1.4, seed=int(rng.integers(1 << 30)))[0])
    w.add("ball", ck.Sphere(0.2), ck.translation([0.3, -0.2, 0.1]))
    w.add("brick", ck.Box([0.3, 0.2, 0.5]), ck.translation([-0.4, 0.5, 0.0]))
    return w


def _pairwise(w, m):
    names = w.names
    out = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            d = ck.distance(w.shape(names[i]), w.shape(names[j]), w.pose(names[i]), w.pose(names[j])).distance
            if d <= m:
                out.append((i, j))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_world_margin_equals_pairwise_distance(kind):
    w = _world(kind)
    plain = w.colliding_pairs().rows.tolist()
    assert w.colliding_pairs(margin=0.0).rows.tolist() == plain
    for m in (0.01, 0.08, 0.3):
        got = [tuple(r) for r in w.colliding_pairs(margin=m).rows.tolist()]
        assert got == _pairwise(w, m), m
        assert set(map(tuple, plain)) <= set(got)


def test_world_margin_honours_filters_step_and_run():
    w = _world()
    m = 0.08
    ref = w.colliding_pairs(margin=m).rows.tolist()
    assert len(ref) >= 2
    i, j = ref[0]
    w.exclude(w.names[i], w.names[j])
    assert w.colliding_pairs(margin=m).rows.tolist() == ref[1:]
    P = w.poses.copy()
    frames = np.stack([P, P])
    frames[1, :, :3, 3] += 0.01 * np.arange(len(w))[:, None]
    fp = w.run(frames, margin=m)
    assert fp.pairs(0).rows.tolist() == ref[1:]
    w.set_poses(frames[1])
    assert fp.pairs(1).rows.tolist() == w.colliding_pairs(margin=m).rows.tolist()
    assert w.step(P, margin=m).rows.tolist() == ref[1:]


# -- robots -----------------------------------------------------------------------------------
def _with_kind(robot, kind):
    meshes = {n: m.with_options(bv=kind) for n, m in robot.link_meshes.items()}
    return ck.Robot(robot.name, robot.links, robot.joints, meshes, robot.path, robot.allowed_pairs)


def _scene(kind="auto", convex=False):
    w = ck.World()
    w.add("table", box([1.2, 1.6, 0.04]).with_options(bv=kind), ck.translation([0.75, 0, -0.03]))
    w.add("shelf", box([0.3, 0.8, 0.02]).with_options(bv=kind), ck.translation([0.6, 0, 0.5]))
    w.add("post", box([0.08, 0.08, 0.8]).with_options(bv=kind), ck.translation([0.5, 0.5, 0.4]))
    if convex:
        w.add("ball", ck.Sphere(0.08), ck.translation([0.4, -0.4, 0.3]))
    return w


@pytest.fixture
def per_pair(monkeypatch):
    """Switch ``motion.check_with_margin`` to the per-pair path (``collisionkit.distance``)."""

    def switch():
        monkeypatch.setattr(motion._PairSet, "kernel_pairs", lambda self: np.full(self.n, -1, np.int64))

    return switch


@pytest.mark.parametrize("kind", KINDS)
def test_robot_margin_and_padding_equal_the_per_pair_path(panda, kind, per_pair):
    plain = _with_kind(panda, kind)
    padded = plain.with_padding({"panda_hand": 0.03, "panda_link5": 0.01})
    world = _scene(kind)
    q = plain.random_configurations(24, seed=8)
    c = motion.clearance(plain, q, world).distance
    mid = float(np.median(c[c > 0]))  # some configurations within it, some not
    cases = [(plain, mid), (plain, 0.002), (padded, 0.0), (padded, 0.01)]
    got = [(r.check(q, world, margin=m), [r.check(qk, world, margin=m) for qk in q[:8]], r.check(q, world, margin=m, threads=1))
           for r, m in cases]  # fmt: skip
    plain_check = plain.check(q, world)
    per_pair()
    for (r, m), (batch_, one, serial) in zip(cases, got, strict=True):
        ref = motion.check_with_margin(r, q, world, margin=m)
        np.testing.assert_array_equal(batch_, ref, err_msg=f"{kind} {m}")
        np.testing.assert_array_equal(serial, ref)
        assert one == ref[:8].tolist()
        assert (ref | ~plain_check).all()  # a colliding configuration is within every margin
    ref_mid = motion.check_with_margin(plain, q, world, margin=mid)
    assert 0 < ref_mid.sum() < len(q)


def test_robot_margin_with_convex_obstacles_and_bad_input(panda, per_pair):
    world = _scene(convex=True)
    q = panda.random_configurations(10, seed=12)
    got = panda.check(q, world, margin=0.02)
    per_pair()
    np.testing.assert_array_equal(got, motion.check_with_margin(panda, q, world, margin=0.02))
    for bad in (-0.1, math.nan, math.inf):
        with pytest.raises(ValueError, match="margin"):
            panda.check(q[0], world, margin=bad)
    with pytest.raises(ValueError, match="non-finite"):
        panda.check(np.full(panda.dof, np.nan), world, margin=0.01)
    with pytest.raises(ValueError, match="shape"):
        panda.check(np.zeros(panda.dof + 1), world, margin=0.01)


def test_a_padded_copy_made_after_checks_uses_its_own_padding(panda, per_pair):
    """Regression: ``with_padding`` copies the robot's caches (its prepared checkers); the
    thresholds are the asking robot's, not the cached checker's robot's."""
    world = _scene()
    q = panda.random_configurations(16, seed=13)
    before = panda.check(q, world, margin=0.005)
    padded = panda.with_padding({"panda_hand": 0.05, "panda_link7": 0.04})
    got = padded.check(q, world)
    got_m = padded.check(q, world, margin=0.005)
    again = panda.check(q, world, margin=0.005)
    per_pair()
    ref = motion.check_with_margin(padded, q, world)
    assert ref.sum() > motion.check_with_margin(panda, q, world, margin=0.005).sum()  # the pads matter
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got_m, motion.check_with_margin(padded, q, world, margin=0.005))
    np.testing.assert_array_equal(before, again)
    np.testing.assert_array_equal(before, motion.check_with_margin(panda, q, world, margin=0.005))


def test_one_pose_pair_of_meshes_takes_the_per_call_kernel(monkeypatch):
    """Regression: a pair within the margin answered by the per-call kernel (its WITHIN code is
    not read as "outside the band of scales", which sent every such call down the batch path)."""
    from collisionkit.query import pair

    a = box()

    def no_request(*args, **kwargs):
        raise AssertionError("the request path ran")

    monkeypatch.setattr(pair, "ask", no_request)
    assert ck.intersects(a, a, None, ck.translation([1.05, 0, 0]), margin=0.1)
    assert not ck.intersects(a, a, None, ck.translation([1.2, 0, 0]), margin=0.1)


def test_dask_poses_with_a_margin():
    da = pytest.importorskip("dask.array")
    a = ck.primitives.torus_mesh(1.0, 0.25, 24, 12)
    P = _poses(40, 2.5, seed=3)
    ref = ck.intersects(a, a, None, P, margin=0.05)
    lazy = ck.intersects(a, a, None, da.from_array(P, chunks=(10, 4, 4)), margin=0.05)
    np.testing.assert_array_equal(lazy.compute(), ref)
    assert 0 < ref.sum() < len(P)


@pytest.mark.parametrize(("kind_a", "kind_b"), [("aabb", "obb"), ("obb", "sphere"), ("kdop14", "saabb"), ("sphere", "aabb")])
def test_mixed_volume_kinds_and_the_brute_force_oracle(kind_a, kind_b):
    """Meshes of different volume kinds (traversed in the pair's kind) against the independent
    brute-force distance over every triangle pair (tests/distance_oracle.py): within just above
    it, not within just below it."""
    from tests.distance_oracle import brute_distance

    a = ck.primitives.uv_sphere_mesh(0.6, 6, 8).with_options(bv=kind_a)
    b = box([0.5, 0.3, 0.4]).with_options(bv=kind_b)
    P = _poses(16, 1.6, seed=17)
    ds = [brute_distance(a, b, None, T)[0] for T in P]
    assert min(ds) == 0.0 < max(ds)
    for T, d in zip(P, ds, strict=True):
        if d == 0.0:
            assert ck.intersects(a, b, None, T, margin=1e-12) and ck.intersects(a, b, None, T)
            continue
        assert ck.intersects(a, b, None, T, margin=d * (1 + 1e-6)), d
        assert not ck.intersects(a, b, None, T, margin=d * (1 - 1e-6)), d
        assert ck.intersects(b, a, T, None, margin=d * (1 + 1e-6)) and not ck.intersects(b, a, T, None, margin=d * (1 - 1e-6))
