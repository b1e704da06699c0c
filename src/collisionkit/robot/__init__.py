"""Robots from URDF files: forward kinematics (``robot.py``), the prepared checker that
answers a configuration or a batch in one compiled call (``checker.py``), the per-pair path
it replaced, kept as the reference (``check.py``), and the self-collision pairs MoveIt's
SRDF allows (``srdf.py``)."""

from .checker import RobotChecker
from .robot import Robot

__all__ = ["Robot", "RobotChecker"]
