"""Robot.load and batched forward kinematics, against pybullet's forward kinematics."""

from __future__ import annotations

import numpy as np
import pytest
from tests.robots import pybullet_file

import collisionkit as ck
from collisionkit.errors import CollisionKitError


def _quat_to_matrix(q) -> np.ndarray:
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def test_structure(iiwa):
    assert iiwa.dof == 7 and len(iiwa.links) == 8
    assert iiwa.base_link == "lbr_iiwa_link_0"
    assert iiwa.joint_names[0] == "lbr_iiwa_joint_1"
    assert np.allclose(iiwa.limits[0], [-2.96705972839, 2.96705972839])
    for name in iiwa.links:
        mesh = iiwa.link_meshes[name]
        assert isinstance(mesh, ck.Mesh) and mesh.n_faces > 10
        assert np.unique(mesh.surfaces).size >= 1
    assert repr(iiwa) == "Robot('lbr_iiwa', links=8, dof=7)"


def test_fk_matches_pybullet(iiwa):
    p = pytest.importorskip("pybullet")
    cid = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(pybullet_file("kuka_iiwa", "model.urdf"), useFixedBase=True, physicsClientId=cid)
        qs = iiwa.random_configurations(20, seed=1)
        ours = iiwa.link_poses(qs)
        assert ours.shape == (20, 8, 4, 4)
        for k, q in enumerate(qs):
            for j in range(7):
                p.resetJointState(body, j, q[j], physicsClientId=cid)
            for j in range(7):
                info = p.getJointInfo(body, j, physicsClientId=cid)
                child = info[12].decode()
                state = p.getLinkState(body, j, computeForwardKinematics=True, physicsClientId=cid)
                T = np.eye(4)
                T[:3, :3] = _quat_to_matrix(state[5])
                T[:3, 3] = state[4]
                got = ours[k, iiwa.link_index(child)]
                assert np.allclose(got, T, atol=1e-6), (k, child, got, T)
    finally:
        p.disconnect(cid)


def test_single_configuration_base_and_errors(iiwa):
    q = np.zeros(7)
    single = iiwa.link_poses(q)
    assert single.shape == (8, 4, 4)
    base = ck.translation([1.0, 2.0, 3.0])
    moved = iiwa.link_poses(q, base=base)
    assert np.allclose(moved, base @ single)
    # zero configuration: joint 1 sits 0.1575 above the base (the URDF's origin)
    assert np.allclose(single[1, :3, 3], [0, 0, 0.1575])
    with pytest.raises(ValueError, match="shape"):
        iiwa.link_poses(np.zeros(6))
    with pytest.raises(ValueError, match="non-finite"):
        iiwa.link_poses(np.full(7, np.nan))
    assert iiwa.within_limits(q) is True
    assert not iiwa.within_limits(np.full((1, 7), 4.0))[0]
    with pytest.raises(CollisionKitError, match="no such file"):
        ck.Robot.load("/nonexistent/robot.urdf")
    with pytest.raises(KeyError):
        iiwa.link_index("nope")


def test_link_poses_are_rigid_and_usable_as_query_poses(iiwa):
    qs = iiwa.random_configurations(16, seed=3)
    T = iiwa.link_poses(qs)
    R = T[..., :3, :3]
    assert np.allclose(R @ np.swapaxes(R, -1, -2), np.eye(3), atol=1e-12)
    # links 2 and 3 touch at the joint: the query runs on the FK poses directly
    a, b = iiwa.link_meshes[iiwa.links[2]], iiwa.link_meshes[iiwa.links[3]]
    hit = ck.intersects(a, b, T[:, 2], T[:, 3])
    assert hit.shape == (16,)
    assert np.array_equal(hit, ck.intersects(a, b, T[:, 2], T[:, 3], strategy="oaabb"))


def test_primitives_mimic_prismatic_and_tree(tmp_path):
    urdf = tmp_path / "toy.urdf"
    urdf.write_text(
        """<robot name="toy">
  <link name="base"><collision><geometry><box size="1 1 0.2"/></geometry></collision></link>
  <link name="slider"><visual><geometry><cylinder radius="0.1" length="0.5"/></geometry></visual></link>
  <link name="finger"><collision><origin xyz="0 0 0.1"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="twin"/>
  <joint name="lift" type="prismatic"><parent link="base"/><child link="slider"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 2"/><limit lower="0" upper="0.5" effort="1" velocity="1"/></joint>
  <joint name="spin" type="continuous"><parent link="slider"/><child link="finger"/><axis xyz="0 0 1"/></joint>
  <joint name="copy" type="continuous"><parent link="base"/><child link="twin"/><axis xyz="1 0 0"/>
    <mimic joint="spin" multiplier="2" offset="0.5"/></joint>
</robot>"""
    )
    toy = ck.Robot.load(urdf)
    assert toy.joint_names == ("lift", "spin") and toy.dof == 2
    assert "twin" not in toy.link_meshes and toy.links_without_geometry == ("twin",)
    assert all(isinstance(m, ck.Mesh) for m in toy.link_meshes.values())  # no None entries
    assert toy.link_meshes["slider"].n_faces > 0  # visual fallback
    assert np.isinf(toy.limits[1]).all()
    T = toy.link_poses([[0.25, np.pi / 2], [0.0, 0.0]])
    assert np.allclose(T[0, toy.link_index("slider"), :3, 3], [0, 0, 0.35])  # axis normalised
    assert np.allclose(T[0, toy.link_index("finger"), :3, :3], ck.rotation([0, 0, 1], np.pi / 2)[:3, :3])
    assert np.allclose(T[0, toy.link_index("twin"), :3, :3], ck.rotation([1, 0, 0], np.pi + 0.5)[:3, :3])
    vis = ck.Robot.load(urdf, geometry="visual")
    assert vis.link_meshes["base"].n_faces == 12  # no visual: the collision box
    with pytest.raises(ValueError, match="geometry"):
        ck.Robot.load(urdf, geometry="both")
    samples = toy.random_configurations(50, seed=0)
    assert np.all((samples[:, 0] >= 0) & (samples[:, 0] <= 0.5)) and np.all(np.abs(samples[:, 1]) <= np.pi)


# -- issue 18, item 6: adjacency through links without geometry, allowed pairs -------------

PANDA_READY = [0.0, -np.pi / 4, 0.0, -3 * np.pi / 4, 0.0, np.pi / 2, np.pi / 4, 0.04]


def _self_hits(robot, q, **options):
    res = robot.check_detail(np.asarray(q, float), None, **options)
    return {tuple(sorted(pair)) for pair, h in res.self_hits.items() if np.any(h)}


def test_panda_hand_is_adjacent_to_link7_through_the_empty_link8(panda):
    """Regression: the Panda collided with itself in every configuration (hand vs link7,
    joined by two fixed joints through the geometry-less panda_link8)."""
    assert panda.links_without_geometry == ("panda_link8", "panda_grasptarget")
    assert set(panda.link_meshes) == set(panda.links) - {"panda_link8", "panda_grasptarget"}
    assert all(isinstance(m, ck.Mesh) for m in panda.link_meshes.values())
    assert ("panda_hand", "panda_link7") in panda.adjacent_pairs
    # the fingers meet through the hand, which has geometry: not adjacent
    assert ("panda_leftfinger", "panda_rightfinger") not in panda.adjacent_pairs
    assert ("panda_hand", "panda_leftfinger") in panda.adjacent_pairs
    assert len(panda.adjacent_pairs) == 10 and panda.allowed_pairs == frozenset()
    T = panda.link_poses(np.zeros(panda.dof))
    i, j = panda.link_index("panda_link7"), panda.link_index("panda_hand")
    assert ck.intersects(panda.link_meshes["panda_link7"], panda.link_meshes["panda_hand"], T[i], T[j])  # they do touch


def test_panda_ready_pose_and_iiwa_zero_are_free_without_an_allowed_list(panda, iiwa):
    assert panda.dof == 8  # the second finger mimics the first
    assert not panda.check(PANDA_READY)
    assert _self_hits(panda, PANDA_READY) == set()
    assert not iiwa.check(np.zeros(7))
    assert _self_hits(iiwa, np.zeros(7)) == set()


def test_panda_at_zero_overlaps_only_where_pybullet_says_so(panda):
    """At q = 0 (within the limits of this URDF) the Panda's collision meshes really
    overlap: the wrist folds link7 and the hand onto link5, and the closed fingers
    overlap. pybullet's own closest-point query on the same file confirms each pair
    (negative distance), and every other checked pair is apart in both."""
    p = pytest.importorskip("pybullet")
    cid = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(pybullet_file("franka_panda", "panda.urdf"), useFixedBase=True, physicsClientId=cid)
        index = {p.getJointInfo(body, j, physicsClientId=cid)[12].decode(): j for j in range(p.getNumJoints(body, physicsClientId=cid))}
        index[panda.base_link] = -1
        for q in (np.zeros(8), np.r_[np.zeros(7), 0.04]):
            for j in range(p.getNumJoints(body, physicsClientId=cid)):
                name = p.getJointInfo(body, j, physicsClientId=cid)[1].decode()
                if name.startswith("panda_finger"):
                    p.resetJointState(body, j, q[7], physicsClientId=cid)
                elif name in panda.joint_names:
                    p.resetJointState(body, j, q[panda.joint_names.index(name)], physicsClientId=cid)
            ours = _self_hits(panda, q)
            assert ("panda_hand", "panda_link7") not in ours
            assert {("panda_link5", "panda_link7"), ("panda_hand", "panda_link5")} <= ours
            for a, b in ours:
                pts = p.getClosestPoints(body, body, 0.01, index[a], index[b], physicsClientId=cid)
                assert pts and min(c[8] for c in pts) < 0, (a, b)
            assert panda.within_limits(q)
            # allowing exactly those pairs for the call leaves it free
            assert not panda.check(q, allowed=sorted(ours))
    finally:
        p.disconnect(cid)


TOY_CHAIN = """<robot name="chain">
  <link name="a"><collision><geometry><box size="1 1 1"/></geometry></collision></link>
  <link name="cover"><collision><origin xyz="0.3 0 0"/><geometry><box size="1 1 1"/></geometry></collision></link>
  <link name="e1"/>
  <link name="e2"/>
  <link name="b"><collision><origin xyz="0 0 0.6"/><geometry><box size="0.2 0.2 1"/></geometry></collision></link>
  <link name="c"><collision><origin xyz="0 0 0.7"/><geometry><box size="0.2 0.2 1.4"/></geometry></collision></link>
  <joint name="bolt" type="fixed"><parent link="a"/><child link="cover"/></joint>
  <joint name="f1" type="fixed"><parent link="a"/><child link="e1"/><origin xyz="0 0 0.5"/></joint>
  <joint name="r1" type="revolute"><parent link="e1"/><child link="e2"/><axis xyz="1 0 0"/>
    <limit lower="-0.5" upper="0.5" effort="1" velocity="1"/></joint>
  <joint name="f2" type="fixed"><parent link="e2"/><child link="b"/></joint>
  <joint name="r2" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0 0 1"/><axis xyz="1 0 0"/>
    <limit lower="2.9" upper="3.1" effort="1" velocity="1"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    path = tmp_path_factory.mktemp("chain") / "chain.urdf"
    path.write_text(TOY_CHAIN)
    return path


def test_adjacency_through_geometry_less_links_of_any_joint_type(chain):
    robot = ck.Robot.load(chain)
    assert robot.links_without_geometry == ("e1", "e2")
    # a -fixed- e1 -revolute- e2 -fixed- b: adjacent; a and c pass through b, cover and b
    # through a (links with geometry): not
    assert robot.adjacent_pairs == frozenset({("a", "cover"), ("a", "b"), ("b", "c")})
    from collisionkit.robot.check import self_collision_pairs

    names = {(robot.links[i], robot.links[j]) for i, j in self_collision_pairs(robot)}
    assert names == {("a", "c"), ("cover", "c"), ("cover", "b")}  # links order


def test_allowed_pairs_from_samples_finds_pairs_that_always_collide(chain):
    robot = ck.Robot.load(chain)
    # c folds back (r2 near pi) into a and cover in every configuration; b never reaches cover
    q = robot.random_configurations(64, seed=5)
    assert robot.check(q).all()
    found = robot.allowed_pairs_from_samples(64, seed=5)
    assert found == frozenset({("a", "c"), ("c", "cover")})
    assert robot.allowed_pairs == frozenset()  # returned, not installed
    assert not robot.check(q, allowed=found).any()
    kept = robot.with_allowed_pairs(found)
    assert kept.allowed_pairs == found and not kept.check(q).any()
    assert kept.link_meshes is not robot.link_meshes and kept.link_meshes["a"] is robot.link_meshes["a"]
    with pytest.raises(ValueError, match="n must be"):
        robot.allowed_pairs_from_samples(0)


def test_allowed_per_call_is_validated(chain):
    robot = ck.Robot.load(chain)
    q = np.zeros(2)
    with pytest.raises(ValueError, match="'nope'.*'zip'|'zip'.*'nope'"):
        robot.check(q, allowed=[("a", "nope"), ("zip", "c")])
    with pytest.raises(ValueError, match="paired with itself"):
        robot.check(q, allowed=[("a", "a")])
    with pytest.raises(ValueError, match="'nope'"):
        robot.check(q, self_collision=False, allowed=[("a", "nope")])
    with pytest.raises(ValueError, match="pair"):
        robot.check(q, allowed=["ab"])
    with pytest.raises(ValueError, match="string"):
        robot.check(q, allowed="a,c")
    with pytest.raises(ValueError, match="no link"):
        robot.with_allowed_pairs([("a", "ghost")])
    # order inside a pair does not matter
    assert robot.link_pairs([("cover", "a"), ["a", "cover"]]) == frozenset({("a", "cover")})


SRDF = """<?xml version="1.0"?>
<robot name="chain">
  <group name="arm"><chain base_link="a" tip_link="c"/></group>
  <disable_collisions link1="c" link2="a" reason="Never"/>
  <disable_default_collisions link="cover"/>
  <enable_collisions link1="cover" link2="b"/>
</robot>
"""


def test_srdf_fills_allowed_pairs(chain, tmp_path):
    srdf = tmp_path / "chain.srdf"
    srdf.write_text(SRDF)
    robot = ck.Robot.load(chain, srdf=srdf)
    # disable_default_collisions(cover): every pair with cover, less the enabled (cover, b)
    assert robot.allowed_pairs == frozenset({("a", "c"), ("a", "cover"), ("c", "cover"), ("cover", "e1"), ("cover", "e2")})
    q = robot.random_configurations(8, seed=1)
    assert not robot.check(q).any() and ck.Robot.load(chain).check(q).all()


@pytest.mark.parametrize(
    "text, words",
    [
        ('<robot name="x"><disable_collisions link1="a" link2="ghost"/></robot>', ["chain.srdf:1:", "'ghost'", "no such link"]),
        ('<robot>\n<disable_collisions link1="a"/></robot>', ["chain.srdf:2:", "no link2"]),
        ('<robot><disable_collisions link1="b" link2="b"/></robot>', ["with itself"]),
        ('<robot><disable_collisions link1="a" link2="b">', ["chain.srdf:1:", "cannot read SRDF"]),
        ("<launch/>", ["root element is <launch>"]),
        ('<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x "xx">]><robot/>', ["chain.srdf:2:", "DOCTYPE"]),
        ("", ["cannot read SRDF"]),
    ],
)
def test_srdf_errors_name_file_and_line(chain, tmp_path, text, words):
    srdf = tmp_path / "chain.srdf"
    srdf.write_text(text)
    with pytest.raises(CollisionKitError) as e:
        ck.Robot.load(chain, srdf=srdf)
    for w in words:
        assert w in str(e.value), (w, str(e.value))
    with pytest.raises(CollisionKitError, match="no such file"):
        ck.Robot.load(chain, srdf=tmp_path / "missing.srdf")


def test_srdf_billion_laughs_is_refused_unexpanded(chain, tmp_path):
    lol = "".join(f'<!ENTITY l{i} "{"&l" + str(i - 1) + ";" if i else "lol"}{("&l" + str(i - 1) + ";") * 9 if i else ""}">' for i in range(10))
    srdf = tmp_path / "lol.srdf"
    srdf.write_text(f'<?xml version="1.0"?><!DOCTYPE robot [{lol}]><robot><disable_collisions link1="&l9;" link2="a"/></robot>')
    with pytest.raises(CollisionKitError, match="DOCTYPE"):
        ck.Robot.load(chain, srdf=srdf)


def test_scene_world_excludes_adjacent_links_through_empty_links(tmp_path):
    """Regression: a scene's World excluded only links joined by one joint, so the
    Panda's hand and link7 were reported colliding in every scene."""
    from collisionkit.scene import load_scene

    urdf = pybullet_file("franka_panda", "panda.urdf")
    joints = ", ".join(repr(float(v)) for v in PANDA_READY)
    (tmp_path / "s.yaml").write_text(f"objects:\n  - name: arm\n    robot: {urdf}\n    joints: [{joints}]\n")
    loaded = load_scene(tmp_path / "s.yaml")
    world = loaded.world()
    assert "arm/panda_hand" in world.names and "arm/panda_link8" not in world.names
    assert world.colliding_pairs().names == []
    robot = loaded.robots["arm"][0]
    T = robot.link_poses(PANDA_READY)
    i, j = robot.link_index("panda_link7"), robot.link_index("panda_hand")
    assert ck.intersects(robot.link_meshes["panda_link7"], robot.link_meshes["panda_hand"], T[i], T[j])


def test_check_detail_is_its_own_call_with_per_configuration_forms(panda):
    """ISSUE 14 step 5: a flag no longer changes ``check``'s return type; ``check_detail``
    answers scalars for one configuration and arrays for a batch, equal to ``check``."""
    q = np.stack([np.zeros(panda.dof), np.asarray(PANDA_READY)])
    batch = panda.check_detail(q)
    assert batch.colliding.shape == (2,) and batch.link_hits.shape == (2, len(panda.links))
    np.testing.assert_array_equal(batch.colliding, panda.check(q))
    one = panda.check_detail(q[1])
    assert isinstance(one.colliding, bool) and one.colliding == bool(panda.check(q[1]))
    assert one.link_hits.shape == (len(panda.links),)
    assert all(isinstance(v, bool) for v in one.self_hits.values())
    with pytest.raises(TypeError):
        panda.check(q, detail=True)


def test_link_poses_by_link_is_link_poses_link_first(iiwa):
    """The (L, N, 4, 4) layout Robot.check passes to the queries without copies: the same
    poses as link_poses, each link's N poses one contiguous block."""
    q = iiwa.random_configurations(64, seed=5)
    by_link = iiwa.link_poses_by_link(q)
    assert by_link.shape == (len(iiwa.links), 64, 4, 4) and by_link.flags.c_contiguous
    np.testing.assert_array_equal(by_link.transpose(1, 0, 2, 3), iiwa.link_poses(q))
    np.testing.assert_array_equal(iiwa.link_poses_by_link(q[3])[:, 0], iiwa.link_poses(q[3]))
    base = ck.translation([0.1, -0.2, 0.3]) @ ck.rotation([0, 0, 1], 0.4)
    np.testing.assert_array_equal(iiwa.link_poses_by_link(q, base).transpose(1, 0, 2, 3), iiwa.link_poses(q, base))


def test_check_equals_every_pair_tested_one_configuration_at_a_time(iiwa):
    """Robot.check prunes (configuration, link, object) triples by padded world boxes and
    tests only still-free configurations: its answers equal testing every pair exactly, one
    configuration at a time, with mesh and convex obstacles and self-collision."""
    from collisionkit.robot.check import self_collision_pairs

    world = ck.World()
    world.add("table", ck.Box([0.8, 1.2, 0.05]), ck.translation([0.55, 0.0, 0.45]))
    world.add("post", ck.primitives.box_mesh([0.08, 0.08, 1.2]), ck.translation([0.0, 0.45, 0.6]))
    world.add("ball", ck.Sphere(0.12), ck.translation([-0.35, -0.3, 0.9]))
    q = iiwa.random_configurations(120, seed=9)
    got = iiwa.check(q, world)
    detail = iiwa.check_detail(q, world)
    poses = iiwa.link_poses(q)
    links = [(i, iiwa.link_meshes[name]) for i, name in enumerate(iiwa.links) if name in iiwa.link_meshes]
    meshes = dict(links)
    pairs = self_collision_pairs(iiwa)
    expected = np.zeros(120, bool)
    for k in range(120):
        for name in world.names:
            expected[k] |= any(ck.intersects(m, world.shape(name), poses[k, i], world.pose(name)) for i, m in links)
        expected[k] |= any(ck.intersects(meshes[i], meshes[j], poses[k, i], poses[k, j]) for i, j in pairs)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(detail.colliding, expected)
    assert 10 < expected.sum() < 110  # collisions and free configurations both compared
    # one configuration at a time: the per-call path of Robot.check (a planner's step)
    for k in range(0, 120, 3):
        assert iiwa.check(q[k], world) == expected[k]
        one = iiwa.check_detail(q[k], world)
        assert one.colliding == expected[k]
        np.testing.assert_array_equal(one.link_hits, detail.link_hits[k])
        assert {m: bool(h[k]) for m, h in detail.object_hits.items()} == one.object_hits
        assert {pair: bool(h[k]) for pair, h in detail.self_hits.items()} == one.self_hits


def _reference_fk(robot, q, base):
    """Link poses by composing 4x4 matrices joint by joint (Rodrigues via ck.rotation), in
    plain numpy: independent of the kernel's folded motion matrices."""
    T = {robot.base_link: np.asarray(base, float)}
    for j in robot._order:
        if j.type == "fixed":
            motion = np.eye(4)
        else:
            v = robot._joint_value(j, q[None])[0]
            motion = ck.rotation(j.axis, v) if j.type in ("revolute", "continuous") else ck.translation(v * j.axis)
        T[j.child] = T[j.parent] @ j.origin @ motion
    return np.array([T[name] for name in robot.links])


@pytest.mark.parametrize("name", ["iiwa", "panda", "toy"])
def test_batched_kinematics_equal_joint_by_joint_composition(name, iiwa, panda, tmp_path):
    """The FK kernel (kernels.robot.kinematics) against 4x4 products per joint: revolute,
    continuous, prismatic, fixed and mimic joints, a base pose, serial and threaded; and the
    boxes it returns hold every vertex of each link at its pose."""
    if name == "toy":
        urdf = tmp_path / "toy.urdf"
        urdf.write_text(
            """<robot name="toy"><link name="base"><collision><geometry><box size="1 1 0.2"/></geometry></collision></link>
<link name="slider"><collision><geometry><box size="0.1 0.1 0.5"/></geometry></collision></link>
<link name="finger"><collision><origin xyz="0 0 0.1"/><geometry><sphere radius="0.05"/></geometry></collision></link>
<link name="twin"><collision><geometry><box size="0.3 0.1 0.1"/></geometry></collision></link>
<joint name="lift" type="prismatic"><parent link="base"/><child link="slider"/><origin xyz="0 0 0.1" rpy="0.3 0 0.2"/>
  <axis xyz="0 1 2"/><limit lower="-0.5" upper="0.5" effort="1" velocity="1"/></joint>
<joint name="spin" type="continuous"><parent link="slider"/><child link="finger"/><origin rpy="0 0.7 0"/><axis xyz="1 1 0"/></joint>
<joint name="copy" type="revolute"><parent link="finger"/><child link="twin"/><origin xyz="0.2 0 0"/><axis xyz="0 0 1"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="spin" multiplier="-2" offset="0.5"/></joint>
</robot>"""
        )
        robot = ck.Robot.load(urdf)
    else:
        robot = {"iiwa": iiwa, "panda": panda}[name]
    q = robot.random_configurations(300, seed=4)
    base = ck.translation([0.3, -1.0, 0.2]) @ ck.rotation([1, 2, 3], 0.7)
    mesh_links = np.array([i for i, n in enumerate(robot.links) if n in robot.link_meshes], dtype=np.int64)
    T, box = robot.poses_and_boxes(q, base, boxed=mesh_links)
    T1, box1 = robot.poses_and_boxes(q, base, boxed=mesh_links, threads=1)
    np.testing.assert_array_equal(T, T1)  # the same arithmetic per configuration, any split
    np.testing.assert_array_equal(box, box1)
    for k in (0, 1, 150, 299):
        np.testing.assert_allclose(T[:, k], _reference_fk(robot, q[k], base), rtol=0, atol=1e-12)
    for m, i in enumerate(mesh_links):
        v = robot.link_meshes[robot.links[i]].triangles.reshape(-1, 3)
        world = np.einsum("nij,vj->nvi", T[i, :, :3, :3], v) + T[i, :, None, :3, 3]
        assert np.all(box[m, :3, :, None] <= world.transpose(2, 0, 1)) and np.all(world.transpose(2, 0, 1) <= box[m, 3:, :, None])
