"""Robot.load and batched forward kinematics, against pybullet's forward kinematics."""

from __future__ import annotations

import os

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.errors import CollisionKitError


def _data(*parts: str) -> str:
    pybullet_data = pytest.importorskip("pybullet_data")
    path = os.path.join(pybullet_data.getDataPath(), *parts)
    if not os.path.isfile(path):
        pytest.skip(f"pybullet_data has no {os.path.join(*parts)}")
    return path


@pytest.fixture(scope="module")
def iiwa():
    return ck.Robot.load(_data("kuka_iiwa", "model.urdf"))


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
        body = p.loadURDF(_data("kuka_iiwa", "model.urdf"), useFixedBase=True, physicsClientId=cid)
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
    assert toy.link_meshes["twin"] is None
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
