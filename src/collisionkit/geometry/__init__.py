"""Validated shapes and poses."""

from .mesh import Mesh
from .pose import as_poses

__all__ = ["Mesh", "as_poses"]
