"""Queries on a pair of shapes; one module per question.

Importing this package registers the convex pair handlers (``convex.py``) and the
strategies ``"gjk"`` and ``"double-box"`` (``double_box.py``).
"""

from . import convex as _convex  # noqa: F401  (registers handlers and the "gjk" strategy)
from . import double_box as _double_box  # noqa: F401  (registers the "double-box" strategy)
from .convex import GJK, gjk_distance
from .double_box import DoubleBox
from .pair import contacts, intersects, query_stats
from .results import Contacts, Stats

__all__ = ["GJK", "Contacts", "DoubleBox", "Stats", "contacts", "gjk_distance", "intersects", "query_stats"]
