"""Travel bounds, clearance, margins, padding and certified edge checks (robot/motion.py, issue 30).

Oracles: dense sampling of the segment for travel bounds and edges (every "free" edge is
free at thousands of exact ``Robot.check`` samples; every "collides" has a witness that
``Robot.check`` confirms), and the exact ``collisionkit.distance`` of every checked pair for
clearance and margins.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.robot.check import self_collision_pairs
from collisionkit.robot.travel import pair_travel

KINDS = ("auto", "aabb", "obb", "sphere", "kdop14", "saabb")
PANDA_READY = [0.0, -np.pi / 4, 0.0, -3 * np.pi / 4, 0.0, np.pi / 2, np.pi / 4, 0.04]
DENSE = 2000  # exact samples per edge in the default run (10**4 behind -m slow)


def _with_kind(robot, kind):
    """The robot with every link mesh built with volume kind ``kind``."""
    meshes = {n: m.with_options(bv=kind) for n, m in robot.link_meshes.items()}
    return ck.Robot(robot.name, robot.links, robot.joints, meshes, robot.path, robot.allowed_pairs)


def _scene(kind="auto"):
    """The Panda's table, shelf, post and wall: box meshes."""
    w = ck.World()
    box = ck.primitives.box_mesh
    w.add("table", box([1.2, 1.6, 0.04]).with_options(bv=kind), ck.translation([0.75, 0, -0.03]))
    w.add("shelf", box([0.3, 0.8, 0.02]).with_options(bv=kind), ck.translation([0.6, 0, 0.5]))
    w.add("post", box([0.08, 0.08, 0.8]).with_options(bv=kind), ck.translation([0.5, 0.5, 0.4]))
    w.add("wall", box([0.02, 1.0, 1.0]).with_options(bv=kind), ck.translation([-0.6, 0, 0.5]))
    return w


@pytest.fixture(scope="module")
def scene():
    return _scene()


@pytest.fixture(scope="module")
def free_configurations(panda, scene):
    q = panda.random_configurations(300, seed=7)
    return q[~panda.check(q, scene)]


def _segment(q0, q1, n):
    t = np.linspace(0.0, 1.0, n)
    return q0 + t[:, None] * (q1 - q0)


# -- travel bounds ------------------------------------------------------------------------
_HULLS: dict[int, np.ndarray] = {}


def _hull(mesh):
    """The mesh's convex hull vertices: a point's displacement under a rigid motion is an
    affine function of the point, so its largest norm over the mesh is at one of them."""
    from scipy.spatial import ConvexHull

    key = id(mesh)
    if key not in _HULLS:
        v = np.asarray(mesh.vertices)
        _HULLS[key] = v[ConvexHull(v).vertices]
    return _HULLS[key]


def _displacement(P, v):
    """(S,) the largest |x_s - x_0| over points v (V, 3) carried by poses P (S, 4, 4)."""
    D = P[:, :3, :] - P[0, :3, :]  # (S, 3, 4): x_s - x_0 = D [v, 1]
    X = D[:, :, :3].reshape(-1, 3) @ v.T + D[:, :, 3].reshape(-1, 1)  # (S * 3, V)
    return np.sqrt((X.reshape(len(P), 3, -1) ** 2).sum(axis=1)).max(axis=1)


def _max_move(robot, q0, q1, n=2001):
    """(L,) the largest displacement of any point of each link's mesh from its place at q0
    over n samples of the segment (0 for links without geometry)."""
    P = robot.link_poses(_segment(q0, q1, n))
    out = np.zeros(len(robot.links))
    for li, name in enumerate(robot.links):
        mesh = robot.link_meshes.get(name)
        if mesh is not None:
            out[li] = _displacement(P[:, li], _hull(mesh)).max()
    return out


def test_travel_bound_holds_under_dense_sampling_panda(panda):
    q = panda.random_configurations(24, seed=3)
    bound = panda.link_travel(q[:12], q[12:])
    assert bound.shape == (12, len(panda.links))
    for k in range(12):
        moved = _max_move(panda, q[k], q[12 + k])
        assert np.all(moved <= bound[k]), (k, moved / np.maximum(bound[k], 1e-300))
        # and not vacuous: within a small factor of the real motion for the moving links
        moving = moved > 1e-3
        assert np.all(bound[k][moving] < 20 * moved[moving])
    one = panda.link_travel(q[0], q[12])
    np.testing.assert_array_equal(one, bound[0])
    assert panda.link_travel(q[0], q[0]).max() == 0.0
    assert bound[:, panda.link_index("panda_link0")].max() == 0.0  # the base never moves


def _ancestors(robot, link):
    parent = {j.child: j.parent for j in robot.joints}
    out = [link]
    while out[-1] in parent:
        out.append(parent[out[-1]])
    return out


def test_pair_travel_bounds_relative_motion_of_self_pairs(panda):
    """A self pair's bound sums only the joints the two chains do not share: in the frame of
    their deepest common ancestor link (where their distance is the same) the vertices of
    a and of b move at most that much together (the Panda's fingers: only the finger joints)."""
    q = panda.random_configurations(8, seed=5)
    pairs = self_collision_pairs(panda)
    a = np.array([i for i, _ in pairs])
    b = np.array([j for _, j in pairs])
    bound = pair_travel(panda, q[:4], q[4:], a, b)
    for k in range(4):
        P = panda.link_poses(_segment(q[k], q[4 + k], 2001))
        for p, (i, j) in enumerate(pairs):
            up = _ancestors(panda, panda.links[j])
            common = panda.link_index(next(x for x in _ancestors(panda, panda.links[i]) if x in up))
            moved = 0.0
            inv = np.linalg.inv(P[:, common])
            for link in (i, j):
                rel = inv @ P[:, link]  # the link in the common frame
                moved += _displacement(rel, _hull(panda.link_meshes[panda.links[link]])).max()
            assert moved <= bound[k, p], (panda.links[i], panda.links[j])
    fingers = pairs.index(tuple(sorted((panda.link_index("panda_leftfinger"), panda.link_index("panda_rightfinger")))))
    assert np.allclose(bound[:, fingers], 2 * np.abs(q[4:, 7] - q[:4, 7]), rtol=1e-9)


_URDF = """<?xml version="1.0"?>
<robot name="zigzag">
  <link name="base"><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <link name="l1"><collision><origin xyz="0.15 0 0"/><geometry><box size="0.3 0.05 0.05"/></geometry></collision></link>
  <link name="l2"><collision><origin xyz="0 0.1 0.05"/><geometry><box size="0.05 0.2 0.1"/></geometry></collision></link>
  <link name="l3"><collision><origin xyz="0.1 0 0"/><geometry><cylinder radius="0.03" length="0.2"/></geometry></collision></link>
  <link name="l4"><collision><origin xyz="0 0 0.2" rpy="0.3 0 0"/><geometry><box size="0.04 0.04 0.3"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.2" rpy="0 0 0.4"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="prismatic"><parent link="l1"/><child link="l2"/><origin xyz="0.3 0 0"/>
    <axis xyz="1 0 1"/><limit lower="-0.2" upper="0.3" effort="1" velocity="1"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0 0.2 0.1" rpy="0.5 0 0"/>
    <axis xyz="0 1 0"/><mimic joint="j1" multiplier="-1.5" offset="0.2"/><limit lower="-5" upper="5" effort="1" velocity="1"/></joint>
  <joint name="fixed" type="fixed"><parent link="l3"/><child link="l3b"/><origin xyz="0.2 0 0" rpy="0 0.7 0"/></joint>
  <link name="l3b"/>
  <joint name="j4" type="revolute"><parent link="l3b"/><child link="l4"/><origin xyz="0.05 0.1 0"/>
    <axis xyz="1 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
</robot>
"""


def test_travel_bound_with_a_prismatic_joint_inside_the_chain_and_a_mimic(tmp_path):
    path = tmp_path / "zigzag.urdf"
    path.write_text(_URDF)
    robot = ck.Robot.load(path)
    assert robot.dof == 3  # j1, j2, j4; j3 mimics j1 with multiplier -1.5
    q = robot.random_configurations(40, seed=11)
    bound = robot.link_travel(q[:20], q[20:])
    for k in range(20):
        moved = _max_move(robot, q[k], q[20 + k])
        assert np.all(moved <= bound[k]), (k, moved, bound[k])


# -- clearance --------------------------------------------------------------------------------
def _brute_clearance(robot, q, world, pads=None, self_collision=True):
    """(clearance, pair, per link) from the exact distance of every checked pair."""
    pads = pads or {}
    T = robot.link_poses(q)
    per_link = {n: math.inf for n in robot.link_meshes}
    best, who = math.inf, None
    pairs = [(n, o, world.shape(o), world.pose(o), pads.get(n, 0.0)) for o in world.names for n in robot.link_meshes]
    if self_collision:
        for i, j in self_collision_pairs(robot):
            a, b = robot.links[i], robot.links[j]
            pairs.append((a, b, robot.link_meshes[b], T[j], pads.get(a, 0.0) + pads.get(b, 0.0)))
    for a, b, shape, pose, pad in pairs:
        d = ck.distance(robot.link_meshes[a], shape, T[robot.link_index(a)], pose).distance
        c = max(d - pad, 0.0)
        if c < best:
            best, who = c, (a, b)
        per_link[a] = min(per_link[a], c)
        if b in per_link:
            per_link[b] = min(per_link[b], c)
    return best, who, per_link


@pytest.mark.parametrize("kind", KINDS)
def test_clearance_matches_brute_force_for_every_volume_kind(panda, free_configurations, kind):
    robot = _with_kind(panda, kind)
    world = _scene(kind)
    q = np.vstack([free_configurations[:4], panda.random_configurations(2, seed=2)])  # some collide
    got = robot.clearance(q, world, per_link=True)
    assert got.distance.shape == (6,) and got.point_link.shape == (6, 3)
    for k in range(6):
        best, who, per_link = _brute_clearance(robot, q[k], world)
        assert got.distance[k] == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert (got.distance[k] == 0.0) == bool(robot.check(q[k], world))
        for name, value in per_link.items():
            assert got.per_link[name][k] == pytest.approx(value, rel=1e-9, abs=1e-12), name
        if best > 0.0:
            assert (got.link[k], got.other[k]) == who
            gap = np.linalg.norm(got.point_link[k] - got.point_other[k])
            assert gap == pytest.approx(got.distance[k], rel=1e-9)
        one = robot.clearance(q[k], world)
        assert isinstance(one.distance, float) and one.distance == got.distance[k]
        assert one.link == got.link[k] and one.other == got.other[k] and one.per_link is None


def test_clearance_without_pairs_self_only_and_ignore(panda, scene, free_configurations):
    q = free_configurations[0]
    empty = panda.clearance(q, None, self_collision=False)
    assert empty.distance == math.inf and empty.link is None and np.isnan(empty.point_link).all()
    own = panda.clearance(q)  # self pairs only
    assert own.other_is_link and own.other in panda.links
    best, _, _ = _brute_clearance(panda, q, ck.World())
    assert own.distance == pytest.approx(best, rel=1e-9)
    c = panda.clearance(q, scene, self_collision=False, ignore=["table", "shelf"])
    assert c.other in ("post", "wall")


# -- margins and padding --------------------------------------------------------------------------
def test_margin_and_padding_against_brute_force(panda, scene, free_configurations):
    q = free_configurations[:8]
    plain = panda.clearance(q, scene)
    for margin in (0.0, 0.01, 0.05):
        got = panda.check(q, scene, margin=margin)
        np.testing.assert_array_equal(got, plain.distance <= margin)
    np.testing.assert_array_equal(panda.check(q, scene, margin=0.0), panda.check(q, scene))
    pads = {"panda_hand": 0.03, "panda_leftfinger": 0.01}
    padded = panda.with_padding(pads)
    assert dict(padded.padding) == pads and panda.padding == {}
    c = padded.clearance(q, scene, per_link=True)
    for k in range(len(q)):
        best, _, per_link = _brute_clearance(panda, q[k], scene, pads)
        assert c.distance[k] == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert c.per_link["panda_hand"][k] == pytest.approx(per_link["panda_hand"], rel=1e-9, abs=1e-12)
    np.testing.assert_array_equal(padded.check(q, scene), c.distance == 0.0)
    np.testing.assert_array_equal(padded.check(q, scene, margin=0.02), c.distance <= 0.02)
    assert padded.with_allowed_pairs([]).padding == padded.padding


def test_bad_input_raises_clear_errors(panda, scene):
    q = np.asarray(PANDA_READY)
    with pytest.raises(ValueError, match="shape"):
        panda.check_motion(q[:7], q[:7], scene)
    with pytest.raises(ValueError, match="same shape"):
        panda.check_motion(q, np.stack([q, q]), scene)
    with pytest.raises(ValueError, match="non-finite"):
        panda.check_motion(q, np.where(np.arange(8) == 2, np.nan, q), scene)
    with pytest.raises(ValueError, match="non-finite"):
        panda.clearance(np.full(8, np.inf), scene)
    with pytest.raises(ValueError, match="shape"):
        panda.clearance(np.zeros((2, 3)), scene)
    for bad in (-0.1, math.nan, math.inf, "x"):
        with pytest.raises(ValueError, match="margin"):
            panda.check_motion(q, q, scene, margin=bad)
        with pytest.raises(ValueError, match="margin"):
            panda.check(q, scene, margin=bad)
    with pytest.raises(ValueError, match="'nope'.*'gone'|'gone'.*'nope'"):
        panda.with_padding({"nope": 0.1, "panda_hand": 0.1, "gone": 0.2})
    with pytest.raises(ValueError, match="panda_hand"):
        panda.with_padding({"panda_hand": -0.01})
    with pytest.raises(ValueError, match="no geometry"):
        panda.with_padding({"panda_link8": 0.01})
    with pytest.raises(ValueError, match="no link"):
        panda.check_motion(q, q, scene, allowed=[("panda_hand", "nope")])
    with pytest.raises(ValueError, match="check_detail"):
        panda.with_padding({"panda_hand": 0.01}).check_detail(q, scene)


# -- certified edges --------------------------------------------------------------------------
def _referee(robot, world, q0, q1, res, n, **options):
    """Every free edge is free at n exact samples; every witness collides."""
    checker = robot
    for k in range(len(q0)):
        if res.free[k]:
            assert res.t_free[k] == 1.0 and np.isnan(res.t_witness[k])
            assert not checker.check(_segment(q0[k], q1[k], n), world, **options).any(), k
        else:
            assert 0.0 <= res.t_free[k] < 1.0
            prefix = q0[k] + np.linspace(0, res.t_free[k], 200)[:, None] * (q1[k] - q0[k])
            assert not checker.check(prefix[:-1] if res.t_free[k] == 0.0 else prefix, world, **options).any()
            if not res.undecided[k]:
                assert res.t_free[k] <= res.t_witness[k]
                assert np.allclose(res.witness[k], q0[k] + res.t_witness[k] * (q1[k] - q0[k]))
                assert checker.check(res.witness[k], world, **options), k


def test_random_edges_are_certified_or_have_confirmed_witnesses(panda, scene, free_configurations):
    q = free_configurations[:24]
    q0, q1 = q[:12], q[12:]
    res = panda.check_motion(q0, q1, scene)
    assert res.free.shape == (12,) and res.witness.shape == (12, panda.dof)
    assert res.free.any() and not res.free.all()  # the scene has both kinds
    assert not res.undecided.any()
    _referee(panda, scene, q0, q1, res, DENSE)
    one = panda.check_motion(q0[0], q1[0], scene)
    assert isinstance(one.free, bool) and one.free == res.free[0] and one.t_free == res.t_free[0]
    assert (one.witness is None) == bool(res.free[0])


@pytest.mark.slow
def test_random_edges_hold_under_ten_thousand_samples(panda, scene, free_configurations):
    q = free_configurations[:80]
    q0, q1 = q[:40], q[40:]
    res = panda.check_motion(q0, q1, scene)
    assert not res.undecided.any()
    _referee(panda, scene, q0, q1, res, 10_000)


@pytest.mark.parametrize("kind", KINDS)
def test_edges_for_every_volume_kind(panda, free_configurations, kind):
    robot = _with_kind(panda, kind)
    world = _scene(kind)
    q0, q1 = free_configurations[24:28], free_configurations[28:32]
    res = robot.check_motion(q0, q1, world)
    ref = panda.check_motion(q0, q1, _scene())
    np.testing.assert_array_equal(res.free, ref.free)  # the answer does not depend on the volumes
    _referee(robot, world, q0, q1, res, 500)


def _sweep(panda):
    """The ready pose turned about joint 1 by 0.6 rad: the fingers sweep sideways."""
    q0 = np.asarray(PANDA_READY, float)
    q1 = q0.copy()
    q0[0], q1[0] = -0.3, 0.3
    return q0, q1


def _ompl_samples(panda, q0, q1):
    """The states OMPL's DiscreteMotionValidator tests: 1% of the space's extent apart."""
    lo, hi = panda.limits[:, 0], panda.limits[:, 1]
    extent = float(np.linalg.norm(hi - lo))
    n = math.ceil(np.linalg.norm(q1 - q0) / (0.01 * extent))
    return _segment(q0, q1, n + 1)


def test_an_edge_stepping_over_a_thin_plate_is_caught(panda):
    q0, q1 = _sweep(panda)
    samples = _ompl_samples(panda, q0, q1)
    n = len(samples)
    finger = panda.link_index("panda_leftfinger")
    for k in range(n - 1):  # a plate halfway between two of OMPL's states, that both miss
        t_star = (k + 0.5) / (n - 1)
        qs = q0 + t_star * (q1 - q0)
        T = panda.link_poses(qs)
        centre = T[finger, :3, :3] @ panda.link_meshes["panda_leftfinger"].vertices.mean(axis=0) + T[finger, :3, 3]
        # a 1 mm plate facing the fingers' motion (about the base's z axis), 4 cm square
        tangent = np.cross([0.0, 0.0, 1.0], centre)
        tangent /= np.linalg.norm(tangent)
        R = np.column_stack([tangent, np.cross([0.0, 0.0, 1.0], tangent), [0.0, 0.0, 1.0]])
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = R, centre
        world = ck.World()
        world.add("plate", ck.primitives.box_mesh([0.001, 0.04, 0.04]), pose)
        if not panda.check(samples, world).any():
            break
    assert not panda.check(samples, world).any()  # sampling at OMPL's resolution misses it
    assert panda.check(qs, world)  # but the plate is in the way
    res = panda.check_motion(q0, q1, world)
    assert not res.free and not res.undecided
    assert panda.check(res.witness, world)
    assert 0.0 < res.t_free <= res.t_witness < 1.0
    assert not panda.check(_segment(q0, q0 + res.t_free * (q1 - q0), 500), world).any()


def _graze(panda, depth):
    """A box under the sweep's lowest finger vertex whose top is ``depth`` above it
    (negative: a gap below it), only under the middle of the sweep."""
    q0, q1 = _sweep(panda)
    qm = 0.5 * (q0 + q1)
    T = panda.link_poses(qm)
    low = (np.inf, None)
    for name in ("panda_leftfinger", "panda_rightfinger"):
        i = panda.link_index(name)
        X = panda.link_meshes[name].vertices @ T[i, :3, :3].T + T[i, :3, 3]
        k = int(np.argmin(X[:, 2]))
        low = min(low, (X[k, 2], tuple(X[k])), key=lambda x: x[0])
    z, point = low
    world = ck.World()
    world.add("block", ck.primitives.box_mesh([0.03, 0.03, 0.1]), ck.translation([point[0], point[1], z + depth - 0.05]))
    return q0, q1, world


def test_an_edge_grazing_a_box(panda):
    q0, q1, world = _graze(panda, -1e-4)  # 0.1 mm below the fingers: free
    res = panda.check_motion(q0, q1, world)
    assert res.free and res.t_free == 1.0 and res.witness is None
    assert not panda.check(_segment(q0, q1, DENSE), world).any()
    c = panda.clearance(_segment(q0, q1, 201), world, self_collision=False)
    assert 0.0 < c.distance.min() <= 1.01e-4
    # a margin or a pad larger than the gap makes it collide, with a witness at that margin
    for robot, margin in ((panda, 2e-4), (panda.with_padding({"panda_leftfinger": 1e-4, "panda_rightfinger": 1e-4}), 0.0)):
        hit = robot.check_motion(q0, q1, world, margin=margin)
        assert not hit.free and not hit.undecided
        assert robot.check(hit.witness, world, margin=margin)
        assert 0.0 < hit.t_free < hit.t_witness < 1.0
    q0, q1, world = _graze(panda, 1e-4)  # 0.1 mm into the box: collides in the middle only
    res = panda.check_motion(q0, q1, world)
    assert not res.free and not res.undecided and panda.check(res.witness, world)
    assert 0.0 < res.t_free <= res.t_witness < 1.0


def test_colliding_start_and_equal_endpoints(panda, scene, free_configurations):
    q = np.asarray(PANDA_READY, float)
    inside = q.copy()
    inside[1] = 1.6  # the arm folded down into the table
    assert panda.check(inside, scene)
    res = panda.check_motion(inside, q, scene)
    assert not res.free and res.t_free == 0.0 and res.t_witness == 0.0
    np.testing.assert_array_equal(res.witness, inside)
    same = panda.check_motion(inside, inside, scene)
    assert not same.free and same.t_free == 0.0 and panda.check(same.witness, scene)
    ok = panda.check_motion(free_configurations[0], free_configurations[0], scene)
    assert ok.free and ok.t_free == 1.0 and ok.witness is None
    empty = panda.check_motion(np.zeros((0, panda.dof)), np.zeros((0, panda.dof)), scene)
    assert empty.free.shape == (0,) and empty.witness.shape == (0, panda.dof)


def test_a_graze_within_rounding_of_the_margin_is_undecided_not_free(panda, scene, free_configurations):
    """Standing still 1e-10 outside the margin: no bound can certify it (the distances carry a
    rounding allowance) and nothing collides: undecided, never free, no witness."""
    q = free_configurations[0]
    d = panda.clearance(q, scene, self_collision=False).distance
    margin = d - 1e-10
    assert not panda.check(q, scene, margin=margin, self_collision=False)
    res = panda.check_motion(q, q, scene, margin=margin, self_collision=False)
    assert not res.free and res.undecided and res.witness is None and math.isnan(res.t_witness)
    assert res.t_free == 0.0
    far = panda.check_motion(q, q, scene, margin=d * 0.5, self_collision=False)
    assert far.free and not far.undecided


def test_convex_shapes_in_the_world(panda, free_configurations):
    """World objects may be convex shapes (Box, Sphere, Capsule): the same answers as brute force."""
    world = ck.World()
    world.add("box", ck.Box([0.3, 0.8, 0.02]), ck.translation([0.6, 0, 0.5]))
    world.add("ball", ck.Sphere(0.08), ck.translation([0.4, -0.4, 0.3]))
    world.add("rod", ck.Capsule(0.03, 0.6), ck.translation([-0.4, 0.3, 0.4]))
    q = free_configurations[:6]
    got = panda.clearance(q, world, self_collision=False)
    for k in range(len(q)):
        T = panda.link_poses(q[k])
        best = min(
            ck.distance(m, world.shape(o), T[panda.link_index(n)], world.pose(o)).distance
            for o in world.names
            for n, m in panda.link_meshes.items()
        )
        assert got.distance[k] == pytest.approx(best, rel=1e-9, abs=1e-12)
    q0, q1 = free_configurations[6:12], free_configurations[12:18]
    res = panda.check_motion(q0, q1, world, self_collision=False)
    _referee(panda, world, q0, q1, res, 500, self_collision=False)


def test_a_large_margin_collides_with_a_confirmed_witness(panda, scene, free_configurations):
    """A margin larger than the boxes' upper bounds: the pair is colliding without a measure."""
    q0, q1 = free_configurations[0], free_configurations[1]
    res = panda.check_motion(q0, q1, scene, margin=3.0)
    assert not res.free and not res.undecided and res.t_free == 0.0
    assert panda.check(res.witness, scene, margin=3.0)
