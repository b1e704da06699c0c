"""Convex shapes (polyhedra and smooth primitives), inscribed boxes and the
double hierarchy of outer and inner boxes (seed 003).

The queries on these shapes (GJK handlers, the ``"gjk"`` and ``"double-box"``
strategies) live one layer up, in ``query/convex.py`` and ``query/strategies/`` (``gjk.py``,
``double_box.py``).
"""

from .double_hierarchy import build_double_hierarchy
from .inscribed import inscribed_box, inscribed_box_oriented, largest_box
from .shapes import Box, Capsule, Convex, ConvexShape, Cylinder, Sphere

__all__ = [
    "Box",
    "Capsule",
    "Convex",
    "ConvexShape",
    "Cylinder",
    "Sphere",
    "build_double_hierarchy",
    "inscribed_box",
    "inscribed_box_oriented",
    "largest_box",
]
