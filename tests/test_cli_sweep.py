"""``collisionkit sweep``: a .npy of poses, configurations or frames on Dask (issue 17, item 6)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.cli import main

pytest.importorskip("dask.array")


@pytest.fixture
def pair(tmp_path):
    a = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    b = ck.primitives.box_mesh([0.6, 0.7, 0.8])
    paths = []
    for name, m in (("a", a), ("b", b)):
        path = tmp_path / f"{name}.obj"
        lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in m.vertices.tolist()]
        lines += [f"f {i + 1} {j + 1} {k + 1}" for i, j, k in m.faces.tolist()]
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    poses = ck.random_poses(57, 1.2, seed=7)
    np.save(tmp_path / "poses.npy", poses)
    return ck.load_mesh(paths[0]), ck.load_mesh(paths[1]), paths, poses, tmp_path


def test_sweep_pair_intersects_npy(pair, capsys):
    a, b, (pa, pb), poses, tmp = pair
    out = tmp / "hits.npy"
    code = main(["sweep", str(tmp / "poses.npy"), "--pair", pa, pb, "--chunk", "10", "-o", str(out), "--json"])
    want = ck.intersects(a, b, None, poses)
    assert code == (1 if want.any() else 0)
    np.testing.assert_array_equal(np.load(out), want)
    summary = json.loads(capsys.readouterr().out)
    assert summary["items"] == 57 and summary["colliding"] == int(want.sum())


def test_sweep_pair_contacts_parquet(pair, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    a, b, (pa, pb), poses, tmp = pair
    out = tmp / "rows.parquet"
    code = main(["sweep", str(tmp / "poses.npy"), "--pair", pa, pb, "--query", "contacts", "--chunk", "8", "-o", str(out)])
    assert code in (0, 1)
    got = pd.read_parquet(out)
    want = ck.contacts(a, b, None, poses)
    np.testing.assert_array_equal(got["pose_index"], want.pose_index)
    np.testing.assert_array_equal(got["face_a"], want.face_a)
    np.testing.assert_array_equal(got["face_b"], want.face_b)
    assert "poses collide" in capsys.readouterr().out


def test_sweep_robot_configurations(tmp_path, capsys):
    pybullet_data = pytest.importorskip("pybullet_data")
    urdf = os.path.join(pybullet_data.getDataPath(), "kuka_iiwa/model.urdf")
    robot = ck.Robot.load(urdf)
    Q = robot.random_configurations(40, seed=3)
    np.save(tmp_path / "q.npy", Q)
    out = tmp_path / "q_hits.npy"
    code = main(["sweep", str(tmp_path / "q.npy"), "--robot", urdf, "--chunk", "9", "-o", str(out), "--progress"])
    want = robot.check(Q)
    assert code == (1 if want.any() else 0)
    np.testing.assert_array_equal(np.load(out), want)


def test_sweep_errors_name_the_problem(pair, capsys):
    _, _, (pa, pb), _, tmp = pair
    np.save(tmp / "bad.npy", np.zeros((3, 4)))
    assert main(["sweep", str(tmp / "bad.npy"), "--pair", pa, pb]) == 2
    assert "expected (N, 4, 4)" in capsys.readouterr().err
    assert main(["sweep", str(tmp / "poses.npy")]) == 2
    assert "--pair" in capsys.readouterr().err
    assert main(["sweep", str(tmp / "poses.npy"), "--pair", pa, pb, "-o", str(tmp / "x.csv")]) == 2
    assert ".parquet" in capsys.readouterr().err
    assert main(["sweep", str(tmp / "poses.npy"), "--pair", pa, pb, "--workers", "2", "--scheduler", "tcp://x:1"]) == 2


def test_sweep_on_a_local_cluster(pair, capsys):
    """--workers N: a LocalCluster of worker processes that read their chunks from the file."""
    pytest.importorskip("distributed")
    a, b, (pa, pb), poses, tmp = pair
    out = tmp / "d.npy"
    code = main(["sweep", str(tmp / "poses.npy"), "--pair", pa, pb, "--query", "distance", "--workers", "1",
                 "--chunk", "20", "-o", str(out)])  # fmt: skip
    want = ck.distance(a, b, None, poses)
    assert code == (1 if (want.distance == 0).any() else 0)
    np.testing.assert_array_equal(np.load(out), want.distance)
    assert "1 local workers" in capsys.readouterr().out
    assert ck.distributed.active_client() is None  # the cluster is closed again


def test_sweep_scene_frames(tmp_path, capsys):
    """--scene alone: (F, N, 4, 4) frames of the scene's objects; rows (frame, a, b)."""
    (tmp_path / "scene.yaml").write_text(
        """
objects:
  - name: left
    box: [1, 1, 1]
  - name: right
    box: [1, 1, 1]
    pose: {translation: [3, 0, 0]}
  - name: ball
    sphere: 0.5
    pose: {translation: [0, 3, 0]}
"""
    )
    from collisionkit.scene import load_scene

    world = load_scene(str(tmp_path / "scene.yaml")).world()
    F = np.stack([world.poses] * 25)
    F[:, 1, 0, 3] = np.linspace(3.0, -3.0, 25)
    F[:, 2, 1, 3] = np.linspace(3.0, 0.2, 25)
    np.save(tmp_path / "frames.npy", F)
    out = tmp_path / "rows.npy"
    code = main(["sweep", str(tmp_path / "frames.npy"), "--scene", str(tmp_path / "scene.yaml"), "--chunk", "6", "-o", str(out)])
    want = world.run(F)
    assert code == 1 and len(want) > 0
    np.testing.assert_array_equal(np.load(out), want.rows)
    assert "frames collide" in capsys.readouterr().out
