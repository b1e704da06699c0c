"""Robots from URDF files: forward kinematics (``robot.py``), batched collision checks
of many configurations against obstacles and the robot itself (``check.py``), the
self-collision pairs MoveIt's SRDF allows (``srdf.py``), travel bounds along joint-space
segments (``travel.py``), and clearance, margins, padding and certified edge checks
(``motion.py``)."""

from .motion import MotionCheck, RobotClearance
from .robot import Robot

__all__ = ["MotionCheck", "Robot", "RobotClearance"]
