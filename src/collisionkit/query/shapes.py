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

from collections.abc import Callable
from typing import Any, TypeAlias

from ..convex.shapes import Capsule, ConvexShape, Cylinder, Sphere
from ..errors import UnsupportedPairError
from ..geometry.mesh import Mesh
from . import registry
from .registry import Request

#: What the public pair queries accept for ``a`` and ``b``: a triangle mesh or a convex
#: shape (Box, Convex, Sphere, Capsule, Cylinder). Each query refuses the cells it does not
#: answer at run time (``UNSUPPORTED``, ``registry.find``).
Shape: TypeAlias = Mesh | ConvexShape

SMOOTH = (Sphere, Capsule, Cylinder)

#: (query, pair kind) -> reason, for every refused cell. Pair kind "smooth-convex": a
#: smooth primitive against any convex shape (either order).
UNSUPPORTED = {
    ("classify", "smooth-convex"): "the answer would come from the tessellation and could contradict "
    "intersects/distance, which are exact (GJK) for this pair",
    ("time_of_impact", "smooth-convex"): "conservative advancement runs on triangles; the tessellation "
    "could contradict intersects/distance, which are exact (GJK) for this pair",
    ("check_motion", "smooth-convex"): "the motion is certified on triangles; the tessellation could "
    "contradict intersects/distance, which are exact (GJK) for this pair",
}


def pair_kind(a: Any, b: Any) -> str:
    """"mesh", "polyhedra" (convex polyhedra and meshes), or "smooth-convex" (see the module notes)."""
    if isinstance(a, ConvexShape) and isinstance(b, ConvexShape) and (isinstance(a, SMOOTH) or isinstance(b, SMOOTH)):
        return "smooth-convex"
    if isinstance(a, Mesh) and isinstance(b, Mesh):
        return "mesh"
    return "polyhedra"


def mesh_surfaces(a: Any, b: Any) -> tuple[Mesh, Mesh] | None:
    """(a's mesh, b's mesh) when the pair is two meshes or a convex shape and a mesh (the
    shape's surface ``.mesh``), else None: the pairs the per-call paths take."""
    if type(a) is Mesh:
        if type(b) is Mesh:
            return a, b
        return (a, b.mesh) if isinstance(b, ConvexShape) else None
    if type(b) is Mesh and isinstance(a, ConvexShape):
        return a.mesh, b
    return None


def _surface(x: Any, side: str, query: str) -> Mesh:
    if isinstance(x, Mesh):
        return x
    if isinstance(x, ConvexShape):
        return x.mesh
    raise UnsupportedPairError(f"{query}: {side} must be a collisionkit.Mesh or convex shape, got {type(x).__name__}")


def register_mesh_query(
    query: str, mesh_handler: Callable[[Request], Any], honours: tuple[str, ...] | None = None
) -> None:
    """Register a triangle-based query: ``mesh_handler`` for mesh pairs, the same on the
    surfaces ``.mesh`` of convex shapes, and the refused cells of ``UNSUPPORTED`` first.

    The handlers honour the options ``honours`` (default: every option of the query);
    they all run ``mesh_handler``.
    """
    if (query, "smooth-convex") in UNSUPPORTED:
        reason = UNSUPPORTED[(query, "smooth-convex")]
        for smooth in SMOOTH:
            registry.refuse(query, smooth, ConvexShape, reason)
            registry.refuse(query, ConvexShape, smooth, reason)
    every = registry.QUERY_OPTIONS[query] if honours is None else honours
    registry.register(query, Mesh, Mesh, mesh_handler, honours=every)

    def on_surfaces(req: Request) -> Any:
        return mesh_handler(req._replace(a=_surface(req.a, "a", query), b=_surface(req.b, "b", query)))

    on_surfaces.__name__ = on_surfaces.__qualname__ = f"{mesh_handler.__name__}_on_surfaces"
    for ta, tb in ((ConvexShape, ConvexShape), (ConvexShape, Mesh), (Mesh, ConvexShape)):
        registry.register(query, ta, tb, on_surfaces, honours=every)
