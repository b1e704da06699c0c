"""Scene and trajectory files: what parses, and one clear message (file:line) for what does not."""

from __future__ import annotations

import numpy as np
import pytest

from collisionkit.scene import Scene, SceneError, load_trajectory


@pytest.fixture()
def part(tmp_path):
    f = tmp_path / "parts" / "ring.stl"
    f.parent.mkdir()
    f.write_text("solid x\nendsolid x\n")
    return f


def test_full_scene_parses(tmp_path, part):
    text = """
objects:
  - name: ring
    mesh: parts/ring.stl
    pose: {translation: [1, 2, 3], rpy: [0, 0, 1.5707963267948966]}
  - name: post
    box: [0.1, 0.2, 2.0]
  - name: ball
    sphere: 0.25
  - name: pin
    capsule: {radius: 0.05, length: 0.4}
  - name: base
    pose:
      matrix: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 5], [0, 0, 0, 1]]
    cylinder: {radius: 1, length: 0.1}
exclude:
  - [ring, post]
"""
    s = Scene.parse(text, tmp_path / "scene.yaml")
    assert [o.name for o in s.objects] == ["ring", "post", "ball", "pin", "base"]
    assert [o.kind for o in s.objects] == ["mesh", "box", "sphere", "capsule", "cylinder"]
    ring = s.objects[0]
    assert ring.source == part and ring.line == 3
    assert np.allclose(ring.pose[:3, 3], [1, 2, 3]) and np.allclose(ring.pose[:3, :3] @ [1, 0, 0], [0, 1, 0])
    assert s.objects[4].pose[2, 3] == 5 and s.objects[3].params == {"radius": 0.05, "length": 0.4}
    assert s.exclude == (("ring", "post"),)


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("objects:\n  - name: a\n    mesh: [1,\n", 4, "malformed YAML"),
        ("objects:\n  - name: a\n    mesh: nothere.stl\n", 3, "file not found"),
        ("objects:\n  - name: a\n    box: [1, 1]\n", 3, "box size must be 3"),
        ("objects:\n  - name: a\n    box: [1, 1, -1]\n", 3, "must be positive"),
        ("objects:\n  - name: a\n    sphere: 1\n  - name: a\n    sphere: 2\n", 4, "duplicate object name"),
        ("objects:\n  - name: a\n", 2, "needs exactly one of"),
        ("objects:\n  - name: a\n    sphere: 1\n    colour: red\n", 4, "unknown key 'colour'"),
        ("objects:\n  - name: a\n    sphere: 1\n    pose: {translation: [0, 0]}\n", 4, "translation must be 3"),
        ("objects:\n  - name: a\n    sphere: 1\n    pose: {matrix: [[2,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}\n", 4, "not a rigid"),
        ("objects:\n  - name: a\n    capsule: {radius: 1}\n", 3, "needs 'length'"),
        ("objects:\n  - name: a\n    sphere: 1\nexclude:\n  - [a, b]\n", 5, "unknown object 'b'"),
        ("things: []\n", 1, "unknown top-level key"),
        ("objects: 3\n", 1, "must be a list"),
    ],
)
def test_bad_scene_names_file_and_line(tmp_path, text, line, message):
    with pytest.raises(SceneError) as e:
        Scene.parse(text, tmp_path / "scene.yaml")
    assert e.value.line == line, str(e.value)
    assert message in str(e.value)
    assert str(e.value).startswith(f"{tmp_path / 'scene.yaml'}:{line}:")


def test_missing_and_empty_scene(tmp_path):
    with pytest.raises(SceneError, match="file not found"):
        Scene.load(tmp_path / "none.yaml")
    (tmp_path / "empty.yaml").write_text("")
    with pytest.raises(SceneError, match="empty scene"):
        Scene.load(tmp_path / "empty.yaml")


def test_trajectory_with_header_and_comments(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("# a comment\nj1,j2,j3\n0,0.1,0.2\n\n1,1.1,1.2\n")
    t = load_trajectory(f)
    assert t.names == ("j1", "j2", "j3") and t.values.shape == (2, 3)
    assert t.lines.tolist() == [3, 5]


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("0,1,2\n0,1\n", 2, "expected 3 values, got 2"),
        ("0,1,2\n0,x,2\n", 2, "not a number: 'x'"),
        ("0,1,nan\n", 1, "finite"),
        ("# only a comment\n", None, "no trajectory rows"),
    ],
)
def test_bad_trajectory(tmp_path, text, line, message):
    f = tmp_path / "t.csv"
    f.write_text(text)
    with pytest.raises(SceneError) as e:
        load_trajectory(f)
    assert e.value.line == line and message in str(e.value)
