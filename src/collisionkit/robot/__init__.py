"""Robots from URDF files: forward kinematics (``robot.py``), batched collision checks
of many configurations against obstacles and the robot itself (``check.py``), and the
self-collision pairs MoveIt's SRDF allows (``srdf.py``)."""

from .robot import Robot

__all__ = ["Robot"]
