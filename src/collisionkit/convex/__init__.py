"""Convex shapes (polyhedra and smooth primitives), GJK, inscribed boxes and the
double hierarchy of outer and inner boxes (seed 003).

Importing this package registers the convex pair handlers with
``query.dispatch`` and the strategies ``"gjk"`` and ``"double-box"``.
"""

from .shapes import Box, Capsule, Convex, ConvexShape, Cylinder, Sphere  # isort: skip
from . import (
    double_hierarchy,  # noqa: F401  (registers the "double-box" strategy)
    query,  # noqa: F401  (registers handlers and the "gjk" strategy)
)
from .double_hierarchy import DoubleBox, build_double_hierarchy
from .inscribed import inscribed_box, inscribed_box_oriented, largest_box
from .query import GJK, gjk_distance

__all__ = [
    "GJK",
    "Box",
    "Capsule",
    "Convex",
    "ConvexShape",
    "Cylinder",
    "DoubleBox",
    "Sphere",
    "build_double_hierarchy",
    "gjk_distance",
    "inscribed_box",
    "inscribed_box_oriented",
    "largest_box",
]
