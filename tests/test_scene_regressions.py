"""Safe scene, robot and trajectory files (issue 18, item 2).

Regressions: a 413-byte YAML of nested aliases took 46 s and 1.9 GB; YAML tags,
5,000-deep nesting, ``exclude: [[a, a]]`` and an object named like a robot's
link gave tracebacks; a URDF joint that mimics itself was a RecursionError; a
trajectory header naming one joint three times was accepted.
"""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import pytest

from collisionkit.errors import CollisionKitError
from collisionkit.scene import MAX_DEPTH, MAX_NODES, Scene, SceneError, load_scene, load_trajectory, trajectory_for

DATA = Path(__file__).resolve().parents[1] / "examples" / "data"

OK = "objects:\n  - name: a\n    box: [1, 1, 1]\n  - name: b\n    sphere: 0.5\n"


def alias_bomb(levels: int) -> str:
    """Each level lists the previous one nine times: 9**levels nodes from a few hundred bytes."""
    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for k in range(1, levels):
        lines.append(f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 9) + "]")
    return "\n".join(lines) + "\nobjects: []\n"


def test_alias_bomb_refused_fast_in_bounded_memory():
    text = alias_bomb(10)  # ~3.5e9 nodes when expanded
    assert len(text) < 600
    tracemalloc.start()
    try:
        with pytest.raises(SceneError, match="aliases expanded") as info:
            Scene.parse(text, "bomb.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20
    msg = str(info.value)
    assert "\n" not in msg and len(msg) < 200 and msg.startswith("bomb.yaml:")


def test_small_aliases_still_allowed():
    text = "objects:\n  - name: a\n    box: &s [1, 1, 1]\n  - name: b\n    box: *s\n"
    sc = Scene.parse(text)
    assert [o.params["size"].tolist() for o in sc.objects] == [[1, 1, 1], [1, 1, 1]]


@pytest.mark.parametrize(
    "text, line",
    [
        ("objects: !!python/object/apply:os.system ['echo hi']\n", 1),
        ("objects:\n  - name: a\n    box: !!python/tuple [1, 1, 1]\n", 3),
        ("objects:\n  - name: !!str a\n    box: [1, 1, 1]\n", 2),
        ("objects: !custom []\n", 1),
    ],
)
def test_yaml_tags_refused(text, line):
    with pytest.raises(SceneError, match="tags are not allowed") as info:
        Scene.parse(text, "t.yaml")
    assert info.value.line == line


def test_deep_nesting_refused_without_recursion():
    text = "objects: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(SceneError, match=f"deeper than {MAX_DEPTH}"):
        Scene.parse(text, "deep.yaml")
    text = "objects:\n" + "".join("  " * (k + 1) + f"k{k}:\n" for k in range(200))
    with pytest.raises(SceneError, match="deeper"):
        Scene.parse(text, "deep.yaml")


@pytest.mark.parametrize(
    "text, line, what",
    [
        ("objects:\n  - name: a\n    name: b\n    box: [1, 1, 1]\n", 3, "'name'"),
        ("objects: []\nobjects: []\n", 2, "'objects'"),
        ("objects:\n  - name: a\n    box: [1, 1, 1]\n    pose: {translation: [0, 0, 0], translation: [1, 1, 1]}\n", 4, "'translation'"),
    ],
)
def test_duplicate_keys_refused(text, line, what):
    with pytest.raises(SceneError, match=f"duplicate key {what}") as info:
        Scene.parse(text, "d.yaml")
    assert info.value.line == line


def test_complex_keys_refused():
    with pytest.raises(SceneError, match="plain names"):
        Scene.parse("? [a, b]\n: 1\nobjects: []\n", "k.yaml")


def test_node_limit_is_large_enough_for_real_scenes():
    # 2,000 objects with poses: far below the limit, and accepted
    body = "".join(f"  - name: o{i}\n    box: [1, 1, 1]\n    pose: {{translation: [{i}, 0, 0]}}\n" for i in range(2000))
    assert len(Scene.parse("objects:\n" + body).objects) == 2000
    assert MAX_NODES >= 100 * 2000


def test_self_exclusion_refused():
    with pytest.raises(SceneError, match="with itself") as info:
        Scene.parse(OK + "exclude:\n  - [a, a]\n", "x.yaml")
    assert info.value.line == 7


def test_huge_bad_value_gives_short_message():
    text = "objects:\n  - name: a\n    sphere: '" + "x" * 100_000 + "'\n"
    with pytest.raises(SceneError) as info:
        Scene.parse(text, "big.yaml")
    assert len(str(info.value)) < 200


def test_object_name_clashing_with_robot_link(tmp_path):
    shutil.copy(DATA / "arm.urdf", tmp_path / "arm.urdf")
    (tmp_path / "s.yaml").write_text(
        "objects:\n  - name: arm\n    robot: arm.urdf\n  - name: arm/forearm\n    box: [1, 1, 1]\n"
    )
    with pytest.raises(SceneError, match="clashes with link 'forearm'") as info:
        load_scene(tmp_path / "s.yaml")
    assert info.value.line == 4


def urdf_with_mimics(tmp_path, mimics: dict[str, str]) -> Path:
    """arm.urdf with <mimic joint=...> added to the named joints."""
    text = (DATA / "arm.urdf").read_text()
    for joint, target in mimics.items():
        head = f'<joint name="{joint}" type="revolute">'
        assert head in text
        text = text.replace(head, head + f'\n    <mimic joint="{target}" multiplier="1" offset="0"/>')
    p = tmp_path / "mimic.urdf"
    p.write_text(text)
    return p


def test_urdf_joint_mimicking_itself(tmp_path):
    from collisionkit.robot import Robot

    with pytest.raises(CollisionKitError, match="mimic cycle elbow -> elbow"):
        Robot.load(urdf_with_mimics(tmp_path, {"elbow": "elbow"}))


def test_urdf_mimic_cycle_of_two(tmp_path):
    from collisionkit.robot import Robot

    with pytest.raises(CollisionKitError, match="mimic cycle"):
        Robot.load(urdf_with_mimics(tmp_path, {"elbow": "shoulder", "shoulder": "elbow"}))


def test_urdf_mimic_unknown_joint(tmp_path):
    from collisionkit.robot import Robot

    with pytest.raises(CollisionKitError, match="mimics unknown joint 'nope'"):
        Robot.load(urdf_with_mimics(tmp_path, {"elbow": "nope"}))


def test_urdf_valid_mimic_still_works(tmp_path):
    import numpy as np

    from collisionkit.robot import Robot

    r = Robot.load(urdf_with_mimics(tmp_path, {"elbow": "shoulder"}))
    assert r.joint_names == ("yaw", "shoulder")
    assert r.link_poses(np.zeros(2)).shape == (4, 4, 4)


def test_trajectory_header_naming_a_joint_twice(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("# comment\nyaw,yaw,yaw\n0,0,0\n")
    with pytest.raises(SceneError, match="'yaw' named more than once") as info:
        load_trajectory(p)
    assert info.value.line == 2


def test_trajectory_valid_header_maps_columns(tmp_path):
    from collisionkit.robot import Robot

    p = tmp_path / "t.csv"
    p.write_text("elbow,yaw\n0.5,0.25\n")
    q = trajectory_for(Robot.load(DATA / "arm.urdf"), load_trajectory(p))
    assert q.tolist() == [[0.25, 0.0, 0.5]]
