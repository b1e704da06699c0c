"""The prepared robot checker (issue 30 item 1): one compiled call per configuration or batch,
with exactly the per-pair path's answers.

The oracle is the per-pair path ``robot/check.py`` (``check_configurations``,
``check_detail``: padded boxes, then ``collisionkit.intersects`` per (link, object) and self
pair), kept as the reference; one test also compares against ``ck.intersects`` called per pair
on ``link_poses``.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.robot import check as reference
from collisionkit.robot.checker import RobotChecker

KINDS = ("auto", "aabb", "obb", "sphere", "kdop14", "saabb")

#: seven box obstacles around the robot's base (meshes), sized so that about half of the
#: uniformly drawn configurations of the Panda and the iiwa collide
BOXES = [
    ("table", [1.0, 1.4, 0.04], [0.6, 0.0, -0.03]),
    ("shelf", [0.3, 0.8, 0.02], [0.7, 0.0, 0.6]),
    ("wall", [0.04, 1.4, 1.2], [-0.45, 0.0, 0.6]),
    ("post_l", [0.06, 0.06, 1.0], [0.45, 0.5, 0.5]),
    ("post_r", [0.06, 0.06, 1.0], [0.45, -0.5, 0.5]),
    ("cube", [0.1, 0.1, 0.1], [0.5, 0.2, 0.05]),
    ("crate", [0.2, 0.15, 0.25], [0.55, -0.3, 0.125]),
]


def _world(bv: str = "auto", convex: bool = False) -> ck.World:
    w = ck.World()
    for k, (name, size, at) in enumerate(BOXES):
        shape = ck.primitives.box_mesh(size)
        if bv != "auto":
            shape = shape.with_options(bv=bv)
        if convex and k % 3 == 1:
            shape = ck.Box(size) if k != 4 else ck.Sphere(0.5 * min(size))
        w.add(name, shape, ck.translation(at))
    return w


def _with_kind(robot: ck.Robot, bv: str) -> ck.Robot:
    """The robot with every link mesh built with volume kind ``bv`` (shared geometry)."""
    if bv == "auto":
        return robot
    meshes = {n: m.with_options(bv=bv) for n, m in robot.link_meshes.items()}
    return ck.Robot(robot.name, robot.links, robot.joints, meshes, robot.path, robot.allowed_pairs)


def _assert_same_detail(got, want) -> None:
    np.testing.assert_array_equal(got.colliding, want.colliding)
    np.testing.assert_array_equal(got.link_hits, want.link_hits)
    assert list(got.object_hits) == list(want.object_hits)
    assert list(got.self_hits) == list(want.self_hits)
    for k in want.object_hits:
        np.testing.assert_array_equal(got.object_hits[k], want.object_hits[k])
    for k in want.self_hits:
        np.testing.assert_array_equal(got.self_hits[k], want.self_hits[k])


def _assert_same(robot, world, q, n_single=40, **options) -> np.ndarray:
    """Robot.check (batch, threads=1 and default; one configuration at a time) and
    check_detail equal the per-pair path; returns the reference answers."""
    want = reference.check_configurations(robot, q, world, **options)
    for threads in (1, None):
        np.testing.assert_array_equal(robot.check(q, world, threads=threads, **options), want)
    for k in range(min(n_single, len(q))):
        got = robot.check(q[k], world, **options)
        assert type(got) is bool and got == bool(want[k]), k
    _assert_same_detail(robot.check_detail(q, world, **options), reference.check_detail(robot, q, world, **options))
    one = robot.check_detail(q[0], world, **options)
    ref_one = reference.check_detail(robot, q[0], world, **options)
    assert type(one.colliding) is bool
    _assert_same_detail(one, ref_one)
    return want


def test_panda_among_boxes_equals_the_per_pair_path(panda):
    world = _world()
    q = panda.random_configurations(300, seed=11)
    want = _assert_same(panda, world, q)
    assert 30 < want.sum() < 270  # collisions and free configurations both compared
    # and the per-pair path against intersects called per pair on link_poses (the oracle's oracle)
    poses = panda.link_poses(q[:60])
    links = [(i, panda.link_meshes[n]) for i, n in enumerate(panda.links) if n in panda.link_meshes]
    meshes = dict(links)
    pairs = reference.self_collision_pairs(panda)
    for k in range(60):
        brute = any(ck.intersects(m, world.shape(o), poses[k, i], world.pose(o)) for o in world.names for i, m in links)
        brute |= any(ck.intersects(meshes[i], meshes[j], poses[k, i], poses[k, j]) for i, j in pairs)
        assert panda.check(q[k], world) == brute, k


@pytest.mark.parametrize("bv", KINDS)
def test_every_volume_kind(iiwa, bv):
    """Links and obstacles in each kind, and mixed kinds (links auto, obstacles ``bv``; links
    ``bv``, obstacles auto): the pair's kind is bvh.pair_volume's, as intersects takes it."""
    q = iiwa.random_configurations(120, seed=3)
    robot = _with_kind(iiwa, bv)
    want = _assert_same(robot, _world(bv), q, n_single=20)
    assert 10 < want.sum() < 110
    _assert_same(iiwa, _world(bv), q[:40], n_single=10)
    _assert_same(robot, _world(), q[:40], n_single=10)


@pytest.mark.parametrize("bv", ["obb", "sphere", "kdop14"])
def test_panda_self_collision_in_other_kinds(panda, bv):
    q = panda.random_configurations(80, seed=5)
    want = _assert_same(_with_kind(panda, bv), None, q, n_single=20)
    assert want.any() and not want.all()


def test_options_self_collision_allowed_ignore_base(panda):
    world = _world()
    q = panda.random_configurations(150, seed=7)
    base = ck.translation([0.05, -0.1, 0.02]) @ ck.rotation([0, 0, 1], 0.3)
    _assert_same(panda, world, q, self_collision=False)
    _assert_same(panda, world, q, allowed=[("panda_link5", "panda_link7"), ("panda_hand", "panda_link5")])
    _assert_same(panda, world, q, ignore=("wall", "table", "not-an-object"))
    _assert_same(panda, world, q, base=base)
    _assert_same(panda, world, q, base=base, self_collision=False, ignore=["cube"], n_single=10)
    _assert_same(panda, None, q)  # self-collision only
    _assert_same(panda, None, q, self_collision=False, n_single=5)  # nothing to test: all free
    assert not panda.check(q, None, self_collision=False).any()


def test_convex_obstacles_are_routed_through_the_per_pair_path(iiwa, panda):
    """ck.Box / ck.Sphere obstacles go through today's per-pair path (their answers are
    intersects' convex kernels), the meshes through the kernel: the same answers."""
    q = iiwa.random_configurations(120, seed=8)
    world = _world(convex=True)
    assert {type(world.shape(n)).__name__ for n in world.names} == {"Mesh", "Box", "Sphere"}
    want = _assert_same(iiwa, world, q, n_single=30)
    assert 10 < want.sum() < 110
    checker = iiwa.checker(world)
    assert checker._external  # some pairs routed
    ordered = q[:40]
    assert checker.first_colliding(ordered) == (int(np.argmax(want[:40])) if want[:40].any() else -1)
    _assert_same(panda, world, panda.random_configurations(40, seed=2), n_single=10)


def test_mimic_prismatic_and_continuous_joints(tmp_path):
    urdf = tmp_path / "toy.urdf"
    urdf.write_text(
        """<robot name="toy"><link name="base"><collision><geometry><box size="1 1 0.2"/></geometry></collision></link>
<link name="slider"><collision><geometry><box size="0.1 0.1 0.5"/></geometry></collision></link>
<link name="finger"><collision><origin xyz="0 0 0.1"/><geometry><sphere radius="0.05"/></geometry></collision></link>
<link name="twin"><collision><geometry><box size="0.6 0.1 0.1"/></geometry></collision></link>
<link name="copy2"><collision><geometry><box size="0.5 0.05 0.05"/></geometry></collision></link>
<joint name="lift" type="prismatic"><parent link="base"/><child link="slider"/><origin xyz="0 0 0.1" rpy="0.3 0 0.2"/>
  <axis xyz="0 1 2"/><limit lower="-0.5" upper="0.5" effort="1" velocity="1"/></joint>
<joint name="spin" type="continuous"><parent link="slider"/><child link="finger"/><origin rpy="0 0.7 0"/><axis xyz="1 1 0"/></joint>
<joint name="copy" type="revolute"><parent link="finger"/><child link="twin"/><origin xyz="0.2 0 0"/><axis xyz="0 0 1"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="spin" multiplier="-2" offset="0.5"/></joint>
<joint name="copy_of_copy" type="revolute"><parent link="base"/><child link="copy2"/><origin xyz="0.3 0 0.3"/><axis xyz="0 1 0"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="copy" multiplier="0.7" offset="-0.2"/></joint>
</robot>"""
    )
    toy = ck.Robot.load(urdf)
    assert toy.dof == 2
    world = ck.World()
    world.add("block", ck.primitives.box_mesh([0.2, 0.2, 0.2]), ck.translation([0.25, 0.1, 0.45]))
    q = toy.random_configurations(200, seed=1)
    want = _assert_same(toy, world, q)
    assert want.any() and not want.all()


def test_first_colliding_against_a_brute_loop(panda):
    world = _world()
    checker = panda.checker(world)
    q = panda.random_configurations(400, seed=21)
    hits = reference.check_configurations(panda, q, world)
    free = q[~hits]
    rng = np.random.default_rng(0)
    for trial in range(12):
        n = int(rng.integers(1, 120))
        qs = free[rng.choice(len(free), n)]
        if trial % 3:  # some colliding configurations placed in the run
            at = np.sort(rng.choice(n, int(rng.integers(1, 4)), replace=False))
            qs[at] = q[hits][rng.choice(int(hits.sum()), at.size)]
        brute = next((k for k, x in enumerate(qs) if reference.check_configurations(panda, x, world)), -1)
        for threads in (1, None):
            assert checker.first_colliding(qs, threads=threads) == brute, (trial, threads)
    assert checker.first_colliding(free[:50]) == -1
    assert checker.first_colliding(q[hits][:40]) == 0
    assert checker.first_colliding(np.zeros((0, panda.dof))) == -1
    with pytest.raises(ValueError, match="shape"):
        checker.first_colliding(q[0])


def test_world_changes_invalidate_the_prepared_arrays(panda):
    world = _world()
    q = panda.random_configurations(200, seed=4)
    checker = panda.checker(world)
    assert panda.checker(world) is checker  # cached per world and options
    assert panda.checker(world, self_collision=False) is not checker

    def same() -> None:
        want = reference.check_configurations(panda, q, world)
        np.testing.assert_array_equal(checker.check(q), want)
        np.testing.assert_array_equal(panda.check(q, world), want)
        for k in range(0, 200, 10):
            assert checker.check(q[k]) == want[k] == panda.check(q[k], world)

    same()
    before = panda.check(q, world)
    v = world.version
    world.set_pose("wall", ck.translation([-0.3, 0.0, 0.6]))  # closer: more configurations collide
    assert world.version != v
    same()
    assert panda.check(q, world).sum() > before.sum()
    world.set_poses(world.poses)  # every pose at once (the same ones)
    same()
    world.add("pillar", ck.primitives.box_mesh([0.1, 0.1, 2.0]), ck.translation([0.3, 0.0, 1.0]))
    same()
    world.remove("wall")
    world.remove("table")
    same()
    world.add("ball", ck.Sphere(0.2), ck.translation([0.0, 0.4, 0.5]))  # routed pairs appear
    same()
    world.set_pose("ball", ck.translation([0.3, 0.4, 0.5]))
    same()
    world.clear()
    same()  # self pairs only
    # filters do not change Robot.check's answers, but they bump the version too
    world.add("a", ck.primitives.box_mesh([0.1, 0.1, 0.1]))
    world.add("b", ck.primitives.box_mesh([0.1, 0.1, 0.1]), ck.translation([2.0, 0.0, 0.0]))
    for change in (lambda: world.set_filter("a", group=2), lambda: world.exclude("a", "b"), lambda: world.include("a", "b")):
        v = world.version
        change()
        assert world.version > v
    same()


def test_bad_configurations_raise_clear_errors(panda):
    world = _world()
    checker = panda.checker(world)
    for bad in (np.zeros(panda.dof - 1), np.zeros((3, panda.dof + 1)), np.zeros((2, 2, panda.dof)), np.zeros(())):
        with pytest.raises(ValueError, match="shape"):
            panda.check(bad, world)
        with pytest.raises(ValueError, match="shape"):
            checker.check_detail(bad)
    for value in (np.nan, np.inf, -np.inf):
        q = np.zeros(panda.dof)
        q[3] = value
        with pytest.raises(ValueError, match="non-finite"):
            panda.check(q, world)
        with pytest.raises(ValueError, match="non-finite"):
            panda.check(np.stack([np.zeros(panda.dof), q]), world, threads=1)
        with pytest.raises(ValueError, match="non-finite"):
            checker.first_colliding(np.stack([q, q]))
        with pytest.raises(ValueError, match="non-finite"):
            checker.check_detail(q)
    with pytest.raises(ValueError, match="real numbers"):
        panda.check(np.zeros(panda.dof, complex), world)
    with pytest.raises(ValueError, match="real numbers"):
        panda.check(["a"] * panda.dof, world)
    with pytest.raises(ValueError, match="base"):
        panda.check(np.zeros(panda.dof), world, base=np.eye(3))
    with pytest.raises(ck.InvalidPoseError, match="base"):
        panda.check(np.zeros(panda.dof), world, base=np.diag([1.0, 1.0, -1.0, 1.0]))
    with pytest.raises(TypeError):
        panda.check(np.zeros(panda.dof), world, detail=True)
    with pytest.raises(ValueError, match="threads"):
        panda.check(np.zeros(panda.dof), world, threads=0)
    # accepted forms: lists, ints, read-only and strided arrays, an empty batch
    q = panda.random_configurations(6, seed=0)
    want = reference.check_configurations(panda, q, world)
    assert panda.check(q[1].tolist(), world) == want[1]
    ro = q.copy()
    ro.flags.writeable = False
    np.testing.assert_array_equal(panda.check(ro, world), want)
    assert panda.check(ro[2], world) == want[2]
    assert panda.check(np.asfortranarray(q)[:, :][3], world) == want[3]
    assert panda.check(np.zeros(panda.dof, int), world) == reference.check_configurations(panda, np.zeros(panda.dof), world)
    empty = panda.check(np.zeros((0, panda.dof)), world)
    assert empty.shape == (0,) and empty.dtype == np.bool_


def test_checker_object_and_pickled_robot(panda):
    world = _world()
    checker = panda.checker(world, allowed=[("panda_link5", "panda_link7")])
    assert isinstance(checker, RobotChecker)
    assert checker.allowed == frozenset({("panda_link5", "panda_link7")})
    q = panda.random_configurations(50, seed=9)
    want = reference.check_configurations(panda, q, world, allowed=[("panda_link5", "panda_link7")])
    np.testing.assert_array_equal(checker.check(q), want)
    _assert_same_detail(checker.check_detail(q), reference.check_detail(panda, q, world, allowed=[("panda_link5", "panda_link7")]))
    with pytest.raises(ValueError, match="no link"):
        panda.checker(world, allowed=[("panda_link5", "ghost")])
    # a robot with cached checkers pickles (its cache empty) and answers the same
    panda.check(q[0], world)
    copy = pickle.loads(pickle.dumps(panda))
    assert not copy.__dict__.get("_checkers")
    np.testing.assert_array_equal(copy.check(q, world), panda.check(q, world))


@pytest.mark.parametrize("bv", KINDS)
def test_bv_option_changes_the_work_not_the_answers(panda, bv):
    """``bv=`` traverses every pair in one volume kind: the answers stay the per-pair path's
    (which traverses each pair in its own kind)."""
    world = _world()
    q = panda.random_configurations(120, seed=13)
    want = reference.check_configurations(panda, q, world)
    for threads in (1, None):
        np.testing.assert_array_equal(panda.check(q, world, bv=bv, threads=threads), want)
    assert [panda.check(x, world, bv=bv) for x in q[:30]] == want[:30].tolist()
    _assert_same_detail(panda.check_detail(q[:40], world, bv=bv), reference.check_detail(panda, q[:40], world))
    checker = panda.checker(world, bv=bv)
    assert checker.bv == bv
    assert checker.first_colliding(q) == int(np.argmax(want))
    with pytest.raises(ValueError, match="bv must be"):
        panda.check(q[0], world, bv="octagon")


def test_default_volume_kind_per_pair(panda):
    """Without ``bv=``, a pair of two "auto" meshes is traversed in ``ROBOT_VOLUME`` (OBB) trees;
    a mesh with a named kind keeps it (``bvh.pair_volume``'s rule); ``bv="auto"`` is each pair's
    ``pair_volume``. Every choice answers as the per-pair path."""
    from collisionkit.bvh import pair_volume
    from collisionkit.constants import BV_KINDS
    from collisionkit.kernels.robot import checker as kernel
    from collisionkit.robot.checker import ROBOT_VOLUME

    world = _world()
    world.add("named", ck.primitives.box_mesh([0.05, 0.05, 0.05]).with_options(bv="aabb"), ck.translation([0.3, 0.3, 0.3]))
    q = panda.random_configurations(80, seed=17)
    want = reference.check_configurations(panda, q, world)
    default, auto = panda.checker(world), panda.checker(world, bv="auto")
    assert default.bv is None and auto.bv == "auto"
    for chk in (default, auto):
        np.testing.assert_array_equal(chk.check(q, threads=1), want)
        assert [chk.check(x) for x in q[:20]] == want[:20].tolist()
        for row in chk._pairs:
            i = int(row[kernel.PAIR_A])
            a = panda.link_meshes[panda.links[i]]
            if row[kernel.PAIR_SELF]:
                b = panda.link_meshes[panda.links[int(row[kernel.PAIR_B])]]
            else:
                b = world.shape(chk.names[int(row[kernel.PAIR_B])])
            if chk is auto:
                kind = pair_volume(a, b)
            elif not row[kernel.PAIR_SELF] and chk.names[int(row[kernel.PAIR_B])] == "named":
                kind = "aabb"
            else:
                kind = ROBOT_VOLUME
            assert row[kernel.PAIR_KIND] == BV_KINDS[kind]
    assert "named" in default.names


def test_several_python_threads_share_one_checker(panda):
    """A planner's threads (OMPL's) call one checker at once: single configurations and
    batches, the same answers as one thread."""
    from concurrent.futures import ThreadPoolExecutor

    world = _world()
    checker = panda.checker(world)
    q = panda.random_configurations(240, seed=17)
    want = reference.check_configurations(panda, q, world)

    def work(part: int) -> tuple[list[bool], np.ndarray]:
        rows = q[part::4]
        return [checker.check(x) for x in rows], checker.check(rows, threads=1)

    with ThreadPoolExecutor(4) as pool:
        for part, (singles, batched) in enumerate(pool.map(work, range(4))):
            assert singles == want[part::4].tolist()
            np.testing.assert_array_equal(batched, want[part::4])


def test_threads_share_a_padded_robots_first_margin_checks(panda):
    """The first checks of a fresh checker order its pairs (``RobotChecker.order_pairs_once``);
    margin checks read per-pair thresholds in that order, so threads starting together on a
    padded robot (thresholds differ per pair) must all see the ordered arrays: the answers
    of one thread on another fresh world."""
    from concurrent.futures import ThreadPoolExecutor

    padded = panda.with_padding({"panda_hand": 0.03, "panda_link5": 0.01})
    q = panda.random_configurations(160, seed=23)
    world = _world()
    want = padded.check(q, _world(), margin=0.005, self_collision=False, threads=1)
    assert 0 < want.sum() < len(q)

    def work(part: int) -> list[bool]:
        return [bool(padded.check(x, world, margin=0.005, self_collision=False)) for x in q[part::4]]

    with ThreadPoolExecutor(4) as pool:
        for part, got in enumerate(pool.map(work, range(4))):
            assert got == want[part::4].tolist()


def test_far_from_the_origin_equals_the_per_pair_path(panda):
    """Large coordinates (the robot and its cell 10^5 m from the origin): the slack of the
    pretests grows with the translations; answers stay the per-pair path's."""
    far = ck.translation([2e5, -3e5, 1e5])
    world = ck.World()
    for name, size, at in BOXES:
        world.add(name, ck.primitives.box_mesh(size), far @ ck.translation(at))
    q = panda.random_configurations(120, seed=13)
    want = _assert_same(panda, world, q, base=far)
    assert 0 < want.sum() < len(q)  # both answers occur
