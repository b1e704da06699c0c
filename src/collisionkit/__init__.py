"""collisionkit: exact, batched collision detection between rigid triangle meshes.

>>> import collisionkit as ck
>>> a = ck.primitives.box_mesh([1, 1, 1])
>>> ck.intersects(a, a, None, ck.translation([0.9, 0, 0]))
True
"""

from . import _numba  # noqa: F401  (numba cache folder and threading layer, before any kernel)
from . import strategies
from .bvh import BVH, BuildOptions, build_bvh as _build_bvh_from_triangles
from .errors import CollisionKitError, InvalidMeshError, InvalidPoseError, UnsupportedPairError
from .geometry import primitives
from .geometry.mesh import Mesh
from .geometry.transforms import random_poses, rotation, translation
from .query import Contacts, Stats, contacts, intersects, query_stats
from .runtime import set_num_threads, threading_layer

__version__ = "0.1.0"


def build_bvh(mesh: Mesh, options: BuildOptions | None = None) -> BVH:
    """Build a fresh (uncached) hierarchy for ``mesh`` (default: its own options); for timing."""
    return _build_bvh_from_triangles(mesh.triangles, options or mesh.options)


__all__ = [
    "BVH",
    "BuildOptions",
    "CollisionKitError",
    "Contacts",
    "InvalidMeshError",
    "InvalidPoseError",
    "Mesh",
    "Stats",
    "UnsupportedPairError",
    "build_bvh",
    "contacts",
    "intersects",
    "primitives",
    "query_stats",
    "random_poses",
    "rotation",
    "set_num_threads",
    "strategies",
    "threading_layer",
    "translation",
]
