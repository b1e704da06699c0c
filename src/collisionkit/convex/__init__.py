"""Convex shapes (polyhedra and smooth primitives), GJK, inscribed boxes and the
double hierarchy of outer and inner boxes (seed 003).

Importing this package registers the convex pair handlers with
``query.dispatch`` and the strategies ``"gjk"`` and ``"double-box"``.
"""

from .shapes import Box, Capsule, Convex, ConvexShape, Cylinder, Sphere  # isort: skip
from . import query  # noqa: F401  (registers handlers and the "gjk" strategy)
from .query import GJK, gjk_distance

__all__ = ["GJK", "Box", "Capsule", "Convex", "ConvexShape", "Cylinder", "Sphere", "gjk_distance"]
