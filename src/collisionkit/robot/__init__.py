"""Robots from URDF files: forward kinematics (``robot.py``), the prepared checker that
answers a configuration or a batch in one compiled call (``checker.py``), the per-pair path
it replaced, kept as the reference (``check.py``), the self-collision pairs MoveIt's SRDF
allows (``srdf.py``), travel bounds along joint-space segments (``travel.py``), and
clearance, margins, padding and certified edge checks (``motion.py``)."""

from .checker import RobotChecker
from .motion import MotionCheck, RobotClearance
from .robot import Robot

__all__ = ["MotionCheck", "Robot", "RobotChecker", "RobotClearance"]
