"""Robots from URDF files: forward kinematics (``robot.py``) and batched collision checks
of many configurations against obstacles and the robot itself (``check.py``)."""

from .robot import Robot

__all__ = ["Robot"]
