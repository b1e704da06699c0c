"""scene / trajectory / render commands and Robot.check on the KUKA iiwa of pybullet_data."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.cli import main

pybullet_data = pytest.importorskip("pybullet_data")
IIWA = os.path.join(pybullet_data.getDataPath(), "kuka_iiwa", "model.urdf")


@pytest.fixture(scope="module")
def cell(tmp_path_factory):
    """A KUKA iiwa beside a post it reaches at shoulder 1.2 rad, and a crate it never reaches."""
    d = tmp_path_factory.mktemp("cell")
    (d / "scene.yaml").write_text(
        f"""
objects:
  - name: arm
    robot: {IIWA}
    joints: [0, 0, 0, 0, 0, 0, 0]
  - name: post
    box: [0.1, 0.1, 2.0]
    pose: {{translation: [0.75, 0, 1.0]}}
  - name: crate
    box: [0.3, 0.3, 0.3]
    pose: {{translation: [-2, -2, 0.15]}}
"""
    )
    rows = ["lbr_iiwa_joint_1,lbr_iiwa_joint_2,lbr_iiwa_joint_3,lbr_iiwa_joint_4,lbr_iiwa_joint_5,lbr_iiwa_joint_6,lbr_iiwa_joint_7"]
    for s in np.linspace(0.0, 1.4, 15):
        rows.append(",".join(f"{v:.4f}" for v in [0, s, 0, 0, 0, 0, 0]))
    (d / "traj.csv").write_text("\n".join(rows) + "\n")
    return d


def _oracle(robot, q, post_pose):
    """Per configuration: does any link touch the post (plain intersects, one call per link and step)."""
    post = ck.Box([0.1, 0.1, 2.0])
    hits = []
    for qi in q:
        poses = robot.link_poses(qi)
        hits.append(any(
            ck.intersects(robot.link_meshes[n], post, poses[i], post_pose)
            for i, n in enumerate(robot.links) if n in robot.link_meshes
        ))  # fmt: skip
    return np.array(hits)


def test_robot_check_matches_per_link_queries(cell):
    robot = ck.Robot.load(IIWA)
    w = ck.World()
    post_pose = ck.translation([0.75, 0, 1.0])
    w.add("post", ck.Box([0.1, 0.1, 2.0]), post_pose)
    q = robot.random_configurations(200, seed=4)
    got = robot.check(q, w, self_collision=False)
    assert np.array_equal(got, _oracle(robot, q, post_pose))
    assert 0 < got.sum() < got.size  # the sample has both answers
    detail = robot.check_detail(q, w, self_collision=False)
    assert np.array_equal(detail.colliding, got) and np.array_equal(detail.object_hits["post"], got)
    assert np.array_equal(detail.link_hits.any(axis=1), got)
    assert robot.check(np.zeros(robot.dof)) is False  # straight arm: no self-collision


def test_scene_command(cell, capsys):
    code = main(["scene", str(cell / "scene.yaml"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["colliding"] == []  # upright arm misses the post
    assert "arm/lbr_iiwa_link_0" in out["objects"] and "post" in out["objects"]


def test_trajectory_command_first_contact(cell, capsys):
    code = main(["trajectory", str(cell / "scene.yaml"), str(cell / "traj.csv"), "--json"])
    out = json.loads(capsys.readouterr().out)
    robot = ck.Robot.load(IIWA)
    q = np.column_stack([np.zeros(15), np.linspace(0, 1.4, 15).round(4), np.zeros((15, 5))])
    expect = _oracle(robot, q, ck.translation([0.75, 0, 1.0]))
    assert code == (1 if expect.any() else 0)
    assert out["first_contact"] == (int(np.argmax(expect)) if expect.any() else None)
    assert [r["step"] for r in out["colliding_steps"]] == np.flatnonzero(expect).tolist()
    assert all(r["parts"] == ["post"] for r in out["colliding_steps"])
    main(["trajectory", str(cell / "scene.yaml"), str(cell / "traj.csv"), "--until-first", "--json"])
    first = json.loads(capsys.readouterr().out)
    assert first["first_contact"] == out["first_contact"] and len(first["colliding_steps"]) <= 1


def test_render_command_writes_png(cell, tmp_path, capsys):
    png = tmp_path / "cell.png"
    code = main(["render", str(cell / "scene.yaml"), "--trajectory", str(cell / "traj.csv"), "--step", "14", "-o", str(png)])
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "traj, message",
    [
        ("0,0,0\n", "has 7 joints, rows have 3 values"),
        ("lbr_iiwa_joint_1,elbow\n0,0\n", "unknown joint 'elbow'"),
        ("0,0,0,0,0,0,0\n0,0,0,x,0,0,0\n", "not a number"),
    ],
)
def test_trajectory_bad_input(cell, tmp_path, capsys, traj, message):
    f = tmp_path / "bad.csv"
    f.write_text(traj)
    assert main(["trajectory", str(cell / "scene.yaml"), str(f)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(f) in err and "Traceback" not in err


def test_scene_wrong_joint_count(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text(f"objects:\n  - name: arm\n    robot: {IIWA}\n    joints: [0, 1]\n")
    assert main(["scene", str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}:4:" in err and "has 7 joints, got 2" in err
