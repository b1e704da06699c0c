"""Robot files that are what they say (issue 31, item 2).

Before: a NaN in a joint's origin or axis gave NaN link poses, so ``Robot.check``
answered "clear" where the intact arm collides; a URDF whose entity expansion the XML
parser refused loaded, through yourdfpy's recovering parser, as one link and no
joints; lower > upper limits were accepted; complex configurations lost their
imaginary part without a word.
"""

from __future__ import annotations

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.errors import CollisionKitError, InvalidRobotError
from collisionkit.robot.robot import Joint

ARM = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <link name="upper"><collision><origin xyz="0.5 0 0" rpy="0 0 0"/><geometry><box size="1.0 0.1 0.1"/></geometry></collision></link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="{origin}" rpy="{rpy}"/>
    <axis xyz="{axis}"/>
    <limit lower="{lower}" upper="{upper}" effort="1" velocity="1"/>
  </joint>
</robot>
"""
GOOD = {"origin": "0 0 0.2", "rpy": "0 0 0", "axis": "0 0 1", "lower": "-1.5", "upper": "1.5"}


def write(tmp_path, text, name="arm.urdf"):
    p = tmp_path / name
    p.write_text(text)
    return p


def arm(tmp_path, **changes):
    return write(tmp_path, ARM.format(**{**GOOD, **changes}))


def obstacle_world():
    w = ck.World()
    w.add("post", ck.Box([0.2, 0.2, 1.0]), ck.translation([0.8, 0.0, 0.2]))
    return w


def test_the_intact_arm_collides(tmp_path):
    robot = ck.Robot.load(arm(tmp_path))
    assert bool(robot.check(np.zeros(1), obstacle_world())) is True


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"origin": "nan 0 0.2"}, r"joint 'shoulder': origin is not finite"),
        ({"origin": "0 inf 0.2"}, r"joint 'shoulder': origin is not finite"),
        ({"rpy": "nan 0 0"}, r"joint 'shoulder': origin is not finite"),
        ({"axis": "nan 0 1"}, r"joint 'shoulder': axis .* is not finite"),
        ({"axis": "0 0 0"}, r"joint 'shoulder' has a zero axis"),
        ({"lower": "nan"}, r"joint 'shoulder': limit is NaN"),
        ({"upper": "nan"}, r"joint 'shoulder': limit is NaN"),
        ({"lower": "1.0", "upper": "-1.0"}, r"joint 'shoulder': lower limit 1.0 > upper limit -1.0"),
        ({"lower": "inf", "upper": "inf"}, r"joint 'shoulder': limits \[inf, inf\] hold no value"),
    ],
)
def test_a_joint_that_is_not_what_it_says_is_refused_naming_file_and_joint(tmp_path, change, message):
    path = arm(tmp_path, **change)
    with pytest.raises(InvalidRobotError, match=message) as err:
        ck.Robot.load(path)
    assert str(err.value).startswith(str(path))


def test_a_nan_in_a_link_origin_is_refused_naming_the_link(tmp_path):
    text = ARM.format(**GOOD).replace('<origin xyz="0.5 0 0"', '<origin xyz="nan 0 0"')
    with pytest.raises(InvalidRobotError, match=r"arm.urdf: link 'upper': .*not finite"):
        ck.Robot.load(write(tmp_path, text))


@pytest.mark.parametrize(
    ("origin", "message"),
    [
        (np.diag([2.0, 1.0, 1.0, 1.0]), "not a rigid transform"),
        (np.diag([1.0, 1.0, -1.0, 1.0]), "not a rigid transform"),  # a reflection
        (np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1.0]]), "last row"),
        (np.eye(3), r"shape \(4, 4\)"),
        (np.eye(4) + 0j, "complex"),
    ],
)
def test_joint_construction_refuses_degenerate_origins(origin, message):
    with pytest.raises(InvalidRobotError, match=message):
        Joint("j", "revolute", "a", "b", origin, np.array([0.0, 0.0, 1.0]), -1.0, 1.0, 0)


def test_joint_construction_refuses_bad_axes_and_limits():
    eye = np.eye(4)
    with pytest.raises(InvalidRobotError, match="unit vector"):
        Joint("j", "revolute", "a", "b", eye, np.array([0.0, 0.0, 2.0]), -1.0, 1.0, 0)
    with pytest.raises(InvalidRobotError, match="lower limit"):
        Joint("j", "prismatic", "a", "b", eye, np.array([0.0, 0.0, 1.0]), 1.0, -1.0, 0)
    with pytest.raises(InvalidRobotError, match="not a real number"):
        Joint("j", "prismatic", "a", "b", eye, np.array([0.0, 0.0, 1.0]), 1j, 2.0, 0)
    with pytest.raises(InvalidRobotError, match="not supported"):
        Joint("j", "floating", "a", "b", eye, np.array([0.0, 0.0, 1.0]), 0.0, 1.0, 0)


def test_joint_arrays_cannot_be_made_writable(tmp_path):
    robot = ck.Robot.load(arm(tmp_path))
    j = robot.joints[0]
    for a in (j.origin, j.axis, robot.limits):
        with pytest.raises(ValueError):
            a.flags.writeable = True
    with pytest.raises(TypeError):
        robot.link_meshes["upper"] = ck.primitives.box_mesh([9.0, 9.0, 9.0])
    assert bool(robot.check(np.zeros(1), obstacle_world())) is True


BOMB = """<?xml version="1.0"?>
<!DOCTYPE robot [
  <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
  <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
  <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
  <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
  <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
]>
<robot name="&e;">
""" + ARM.format(**GOOD).split('<robot name="arm">', 1)[1]

EXTERNAL = """<?xml version="1.0"?>
<!DOCTYPE robot [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<robot name="&secret;">
""" + ARM.format(**GOOD).split('<robot name="arm">', 1)[1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (BOMB, "a DOCTYPE is not allowed in a URDF"),
        (EXTERNAL, "a DOCTYPE is not allowed in a URDF"),
        (ARM.format(**GOOD).replace("</robot>", ""), r"cannot read URDF \(.*\)"),  # truncated
        (ARM.format(**GOOD).replace("<joint ", "<joint <", 1), r"cannot read URDF"),  # malformed tag
        ("<robot name='x'><link name='a'/></robot><robot/>", r"cannot read URDF"),  # two roots
        ("<urdf><link name='a'/></urdf>", r"the root element is <urdf>; a URDF's is <robot>"),
        ("", "cannot read URDF"),
    ],
)
def test_the_urdf_is_parsed_strictly(tmp_path, text, message):
    """No recovering parser: a refused or malformed document is an error naming the file
    (before: yourdfpy's fallback loaded a robot with one link and no joints)."""
    path = write(tmp_path, text)
    with pytest.raises(CollisionKitError, match=message) as err:
        ck.Robot.load(path)
    assert str(err.value).startswith(str(path))


def test_an_oversized_urdf_is_refused_unread(tmp_path, monkeypatch):
    from collisionkit.robot import robot as robot_module

    path = arm(tmp_path)
    monkeypatch.setattr(robot_module, "MAX_URDF_BYTES", 100)
    with pytest.raises(CollisionKitError, match="a URDF may hold at most 100"):
        ck.Robot.load(path)


@pytest.mark.parametrize("method", ["link_poses", "within_limits", "check", "check_detail"])
def test_complex_configurations_are_refused(tmp_path, method):
    robot = ck.Robot.load(arm(tmp_path))
    with pytest.raises(ValueError, match="complex"):
        getattr(robot, method)(np.array([[0.5 + 0.1j]]))
    with pytest.raises(ValueError, match="complex"):
        getattr(robot, method)(np.array([0.5 + 0j]))  # even with a zero imaginary part: the type is wrong


@pytest.mark.parametrize("method", ["link_poses", "check"])
def test_non_finite_configurations_name_their_row(tmp_path, method):
    robot = ck.Robot.load(arm(tmp_path))
    q = np.zeros((5, 1))
    q[3, 0] = np.nan
    with pytest.raises(ValueError, match=r"q\[3\] holds non-finite values"):
        getattr(robot, method)(q)
