"""Questions on a pair of shapes, in three levels.

* The driver and the specs (``spec.py``, ``driver.py``) with the machinery every question
  shares: ``registry.py`` (question, shape kind a, shape kind b) -> handler, ``batch.py``
  (the one batch engine), ``rows.py`` (pair rows), ``deferred.py`` (Dask hand-off),
  ``pose_form.py``, ``results.py``, ``scaling.py``, ``shapes.py``, ``containment.py``.
* The questions, one module each with its spec and handlers: ``pair.py`` (intersects,
  contacts, query_stats), ``distance.py``, ``penetration.py`` (with
  ``penetration_bounds.py``), ``classify.py``, ``contact_geometry.py``, ``toi.py``,
  ``surfaces.py`` (surface_contacts, node_visits), and ``convex.py`` (the convex shapes'
  handlers of each question). They share internal row functions and never call another
  question's public function.
* The strategies (``strategies/``): descent, breadth-first, overlap box, inner/outer boxes,
  GJK, each declaring what it serves.

Importing this package registers every handler and strategy.
"""

from . import convex as _convex  # noqa: F401, I001  (registers the convex-shape handlers)
from .convex import gjk_distance
from .pair import contacts, intersects, query_stats
from .results import Contacts, Stats
from .strategies import bfs as _bfs  # noqa: F401  (registers the "bfs" strategy)
from .strategies import descent as _descent  # noqa: F401  (declares the default strategy)
from .strategies import double_box as _double_box  # noqa: F401  (registers the "double-box" strategy)
from .strategies import gjk as _gjk  # noqa: F401  (registers the "gjk" strategy)
from .strategies import oaabb as _oaabb  # noqa: F401  (registers the "oaabb" strategy)
from .strategies.double_box import DoubleBox
from .strategies.gjk import GJK

__all__ = ["GJK", "Contacts", "DoubleBox", "Stats", "contacts", "gjk_distance", "intersects", "query_stats"]
