"""Geometry of contacts: ``collisionkit.contact_geometry``.

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
from ..geometry.pose import PoseLike, as_poses, broadcast_poses
from ..kernels.triangle import tri_segment
from ..strategies import Strategy
from .pair import contact_pairs
from .results import ContactGeometry, Contacts
from .shapes import Shape


def writable_triangles(mesh: Mesh) -> np.ndarray:
    """(F, 3, 3) float64 face-order triangles as the kernels take them (cached per geometry)."""
    return mesh.cached(("writable-triangles",), lambda: np.array(mesh.triangles, dtype=np.float64, order="C"))


def contact_geometry(
    a: Shape,
    b: Shape,
    pose_a: PoseLike = None,
    pose_b: PoseLike = None,
    *,
    max_pairs: int | None = None,
    strategy: str | Strategy = "descent",
    threads: int | None = None,
) -> ContactGeometry:
    """Every intersecting triangle pair, as ``contacts`` finds them, with its geometry.

    Per pair: the intersection segment, its midpoint and a's face normal in the
    world frame (conventions in the module notes and ARCHITECTURE.md).

    Parameters
    ----------
    a, b : Mesh or convex shape
        A convex shape's rows index the faces of its surface ``.mesh``.
    pose_a, pose_b : array_like (4, 4) or (N, 4, 4), optional
    max_pairs, strategy, threads
        As for ``contacts`` (mode "all").

    Returns
    -------
    ContactGeometry
        The ``Contacts`` record (per-pose ``counts`` and ``truncated`` in the
        caller's form) plus the per-row ``segments`` (M, 2, 3), ``points``
        (M, 3), ``normals`` (M, 3) and ``kinds`` (M,).

    Examples
    --------
    >>> import collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> g = ck.contact_geometry(box, box, None, ck.translation([0.9, 0.1, 0.05]))
    >>> g.segments.shape[1:], len(g) == len(ck.contacts(box, box, None, ck.translation([0.9, 0.1, 0.05])))
    ((2, 3), True)
    """
    c = contact_pairs(a, b, pose_a, pose_b, "all", max_pairs, strategy, threads)
    return add_geometry(a, b, pose_a, pose_b, c)


def add_geometry(a: Any, b: Any, pose_a: Any, pose_b: Any, c: Contacts) -> ContactGeometry:
    """The ContactGeometry of contact rows ``c`` found for these shapes and poses.

    A convex shape's rows index the faces of its surface ``.mesh`` (as ``contacts``
    reports them), so its geometry is that surface's.
    """
    a = a.mesh if isinstance(a, ConvexShape) else a
    b = b.mesh if isinstance(b, ConvexShape) else b
    if not (isinstance(a, Mesh) and isinstance(b, Mesh)):
        raise UnsupportedPairError("contact_geometry needs meshes or convex shapes")
    pa, _ = as_poses(pose_a, "pose_a")
    pb, _ = as_poses(pose_b, "pose_b")
    _, ia, ib = broadcast_poses(pa, pb)
    m = len(c)
    seg = np.empty((m, 2, 3))
    normal = np.empty((m, 3))
    kinds = np.empty(m, np.int64)
    if m:
        tri_segment.contact_geometry(
            writable_triangles(a), writable_triangles(b), pa, pb,
            np.ascontiguousarray(c.pose_index), ia, ib,
            np.ascontiguousarray(c.face_a), np.ascontiguousarray(c.face_b), seg, normal, kinds,
        )  # fmt: skip
    points = 0.5 * (seg[:, 0] + seg[:, 1])
    # the rows and per-pose fields of c, already in the caller's form (frozen: shared)
    return ContactGeometry(
        c.pose_index, c.face_a, c.face_b, c.counts, c.truncated, seg, points, normal, kinds.astype(np.int8)
    )
