"""Geometry of contacts: ``contacts(..., geometry=True)``.

For every intersecting triangle pair the intersection segment
(``kernels.triangle.tri_segment``), its midpoint and a normal, in the world frame.
Conventions (ARCHITECTURE.md): b's triangle is mapped into a's frame exactly
as the intersection queries map it, the segment is computed there and moved
to the world by a's pose; the normal is a's face normal (from a towards b for
outward-oriented closed meshes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..convex.shapes import ConvexShape
from ..errors import UnsupportedPairError
from ..geometry.mesh import Mesh
from ..geometry.pose import as_poses, broadcast_poses
from ..kernels.triangle.tri_segment import contact_geometry
from .results import ContactGeometry, Contacts


def writable_triangles(mesh: Mesh) -> np.ndarray:
    """(F, 3, 3) float64 face-order triangles as the kernels take them (cached per geometry)."""
    return mesh.cached(("writable-triangles",), lambda: np.array(mesh.triangles, dtype=np.float64, order="C"))


def add_geometry(a: Any, b: Any, pose_a: Any, pose_b: Any, c: Contacts) -> ContactGeometry:
    """The ContactGeometry of contact rows ``c`` found for these shapes and poses.

    A convex shape's rows index the faces of its surface ``.mesh`` (as ``contacts``
    reports them), so its geometry is that surface's.
    """
    a = a.mesh if isinstance(a, ConvexShape) else a
    b = b.mesh if isinstance(b, ConvexShape) else b
    if not (isinstance(a, Mesh) and isinstance(b, Mesh)):
        raise UnsupportedPairError("contacts(geometry=True) needs meshes or convex shapes")
    pa, _ = as_poses(pose_a, "pose_a")
    pb, _ = as_poses(pose_b, "pose_b")
    _, ia, ib = broadcast_poses(pa, pb)
    m = len(c)
    seg = np.empty((m, 2, 3))
    normal = np.empty((m, 3))
    kinds = np.empty(m, np.int64)
    if m:
        contact_geometry(
            writable_triangles(a), writable_triangles(b), pa, pb,
            np.ascontiguousarray(c.pose_index), ia, ib,
            np.ascontiguousarray(c.face_a), np.ascontiguousarray(c.face_b), seg, normal, kinds,
        )  # fmt: skip
    points = 0.5 * (seg[:, 0] + seg[:, 1])
    return ContactGeometry(
        c.pose_index.copy(),
        c.face_a.copy(),
        c.face_b.copy(),
        c.counts.copy(),
        c.truncated.copy(),
        seg,
        points,
        normal,
        kinds.astype(np.int8),
    )
