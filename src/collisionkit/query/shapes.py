"""Which query answers which pair of shape kinds, and the mesh each shape stands for.

The triangle-based queries (``classify``, ``time_of_impact``, ``penetration`` off the
convex path, ``surface_contacts``, ``node_visits``) run on triangle meshes. A convex
shape enters them as its triangulated surface ``.mesh``: exact for polyhedra
(``Convex``, ``Box``); the tessellation for the smooth primitives (``Sphere``,
``Capsule``, ``Cylinder``), as in ``contacts`` and in ``intersects`` against a mesh.

One pair kind is refused: a smooth primitive against another convex shape in a
query that would have to read the tessellation. ``intersects`` and ``distance``
answer such a pair exactly (GJK on the smooth surface); a tessellated answer could
contradict them (two touching spheres would read "disjoint"), so these cells raise
``UnsupportedQueryError`` with the reason instead. ``UNSUPPORTED`` lists them; the
README's table ("Which query answers which shapes") shows the same cells and a test
checks that the two agree.
"""

from __future__ import annotations

from typing import Any

from ..convex.shapes import Capsule, ConvexShape, Cylinder, Sphere
from ..errors import UnsupportedPairError, UnsupportedQueryError
from ..geometry.mesh import Mesh

SMOOTH = (Sphere, Capsule, Cylinder)

#: (query, pair kind) -> reason, for every refused cell. Pair kind "smooth-convex": a
#: smooth primitive against any convex shape (either order).
UNSUPPORTED = {
    ("classify", "smooth-convex"): "the answer would come from the tessellation and could contradict "
    "intersects/distance, which are exact (GJK) for this pair",
    ("time_of_impact", "smooth-convex"): "conservative advancement runs on triangles; the tessellation "
    "could contradict intersects/distance, which are exact (GJK) for this pair",
}


def pair_kind(a: Any, b: Any) -> str:
    """"mesh", "polyhedra" (convex polyhedra and meshes), or "smooth-convex" (see the module notes)."""
    if isinstance(a, ConvexShape) and isinstance(b, ConvexShape) and (isinstance(a, SMOOTH) or isinstance(b, SMOOTH)):
        return "smooth-convex"
    if isinstance(a, Mesh) and isinstance(b, Mesh):
        return "mesh"
    return "polyhedra"


def as_meshes(query: str, a: Any, b: Any) -> tuple[Mesh, Mesh]:
    """The meshes a triangle-based ``query`` runs on for shapes ``a`` and ``b``.

    Raises
    ------
    UnsupportedQueryError
        For the cells of ``UNSUPPORTED``, naming the reason.
    UnsupportedPairError
        When a or b is not a shape at all.
    """
    reason = UNSUPPORTED.get((query, pair_kind(a, b)))
    if reason is not None:
        raise UnsupportedQueryError(
            f"{query} does not answer {type(a).__name__} and {type(b).__name__}: {reason}"
        )
    return _surface(a, "a", query), _surface(b, "b", query)


def _surface(x: Any, side: str, query: str) -> Mesh:
    if isinstance(x, Mesh):
        return x
    if isinstance(x, ConvexShape):
        return x.mesh
    raise UnsupportedPairError(f"{query}: {side} must be a collisionkit.Mesh or convex shape, got {type(x).__name__}")
