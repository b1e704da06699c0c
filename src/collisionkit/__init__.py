"""collisionkit: exact, batched collision detection between rigid triangle meshes.

>>> import collisionkit as ck
>>> a = ck.primitives.box_mesh([1, 1, 1])
>>> ck.intersects(a, a, pose_b=ck.translation([0.9, 0, 0]))
True
"""

# isort: off
import importlib as _importlib
from typing import TYPE_CHECKING, Any

from . import _numba

_numba.configure()  # numba's cache folder and threading layer, before any kernel module loads
# isort: on

from . import distributed, strategies  # noqa: E402  (distributed: answers Dask inputs, imports dask only then)
from .bvh import BVH, build_bvh, bvh_of, validate_bvh  # noqa: E402
from .bvh.refit import refit  # noqa: E402
from .convex import Box, Capsule, Convex, ConvexShape, Cylinder, Sphere  # noqa: E402
from .errors import (  # noqa: E402
    CollisionKitError,
    InvalidBVHError,
    InvalidMeshError,
    InvalidPoseError,
    InvalidRobotError,
    SceneError,
    UnsupportedError,
    UnsupportedOptionError,
    UnsupportedPairError,
    UnsupportedQueryError,
)
from .geometry import primitives  # noqa: E402
from .geometry.mesh import Mesh  # noqa: E402
from .geometry.transforms import random_poses, rotation, translation  # noqa: E402
from .io import load_mesh, mesh_from_trimesh  # noqa: E402
from .options import BuildOptions  # noqa: E402
from .query import GJK, Contacts, DoubleBox, Stats, contacts, intersects, query_stats  # noqa: E402
from .query.classify import classify  # noqa: E402
from .query.contact_geometry import contact_geometry  # noqa: E402
from .query.distance import distance  # noqa: E402
from .query.motion import check_motion  # noqa: E402
from .query.penetration import penetration  # noqa: E402
from .query.results import (  # noqa: E402
    Classification,
    ContactGeometry,
    Distance,
    Penetration,
    RigidMotionCheck,
    TimeOfImpact,
)
from .query.strategies.bfs import BFS  # noqa: E402  (strategy "bfs", seed 002)
from .query.strategies.oaabb import OAABB  # noqa: E402
from .query.surfaces import NodeVisits, SurfaceContacts, node_visits, surface_contacts  # noqa: E402
from .query.toi import time_of_impact  # noqa: E402
from .render import render_scene  # noqa: E402
from .runtime import set_num_threads, threading_layer  # noqa: E402
from .strategies import Descent  # noqa: E402  (strategy "descent", the default)

__version__ = "0.1.0"

if TYPE_CHECKING:  # pragma: no cover - imported on first use below
    from .robot import Robot
    from .world import World

#: names imported on first use (issue 32 item 3: ``import collisionkit`` leaves the robot
#: and scene machinery, ~0.1 s of its import on 2026-12-07, to the programs that use them)
_ON_FIRST_USE = {"Robot": ".robot", "World": ".world"}


def __getattr__(name: str) -> Any:
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module 'collisionkit' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups find it directly
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ON_FIRST_USE))


__all__ = [
    "BFS",
    "Descent",
    "DoubleBox",
    "GJK",
    "BVH",
    "Box",
    "Capsule",
    "Convex",
    "ConvexShape",
    "Cylinder",
    "BuildOptions",
    "Classification",
    "CollisionKitError",
    "ContactGeometry",
    "Contacts",
    "Distance",
    "InvalidBVHError",
    "InvalidMeshError",
    "InvalidPoseError",
    "InvalidRobotError",
    "Mesh",
    "Sphere",
    "Penetration",
    "NodeVisits",
    "OAABB",
    "RigidMotionCheck",
    "Robot",
    "SceneError",
    "SurfaceContacts",
    "Stats",
    "TimeOfImpact",
    "UnsupportedError",
    "UnsupportedOptionError",
    "UnsupportedPairError",
    "UnsupportedQueryError",
    "World",
    "build_bvh",
    "bvh_of",
    "check_motion",
    "load_mesh",
    "mesh_from_trimesh",
    "classify",
    "contact_geometry",
    "contacts",
    "distance",
    "distributed",
    "intersects",
    "penetration",
    "node_visits",
    "primitives",
    "query_stats",
    "random_poses",
    "render_scene",
    "refit",
    "rotation",
    "set_num_threads",
    "strategies",
    "surface_contacts",
    "threading_layer",
    "time_of_impact",
    "translation",
    "validate_bvh",
]
