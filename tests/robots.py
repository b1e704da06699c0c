"""Robots of pybullet_data for the tests: a missing package or file skips visibly."""

from __future__ import annotations

import os

import pytest

import collisionkit as ck


def pybullet_file(*parts: str) -> str:
    """The path of a file of pybullet_data (``pybullet_file("franka_panda", "panda.urdf")``)."""
    pybullet_data = pytest.importorskip("pybullet_data")
    path = os.path.join(pybullet_data.getDataPath(), *parts)
    if not os.path.isfile(path):
        pytest.skip(f"pybullet_data has no {os.path.join(*parts)}")
    return path


def load_robot(*parts: str) -> ck.Robot:
    """A Robot from a URDF of pybullet_data."""
    return ck.Robot.load(pybullet_file(*parts))
