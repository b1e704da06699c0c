"""Does a convex solid hold part of a mesh? One vertex per connected piece of the mesh decides.

A convex shape is a solid and a mesh a surface (``intersects``' semantics, ``query.convex``):
they collide when a triangle pair of the shape's surface ``.mesh`` and the mesh crosses, or
when the solid holds part of the mesh. Where no triangle pair crosses (exact, touching
included), each connected piece of the mesh lies wholly inside the solid or wholly outside:
a path within the piece from inside to outside would cross the solid's surface, the shape's
triangles. So one vertex per piece decides, with the exact point-in-solid test of
``kernels.proximity.gjk`` (PERF: the test over every vertex cost a 26k-triangle robot
link 20 times its BVH query).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..convex.shapes import ConvexShape
from ..geometry.mesh import Mesh
from ..kernels.proximity import gjk as kg


def piece_points(mesh: Mesh) -> np.ndarray:
    """(P, 3) one vertex per connected piece of the mesh (vertices merged by
    exact coordinates), cached per geometry."""

    def build() -> np.ndarray:
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        used = np.unique(mesh.faces)
        _, inverse = np.unique(mesh.vertices[used], axis=0, return_inverse=True)
        remap = np.zeros(mesh.n_vertices, np.int64)
        remap[used] = inverse.reshape(-1)
        f = remap[mesh.faces]
        nv = int(inverse.max()) + 1
        rows = np.concatenate([f[:, 0], f[:, 1]])
        cols = np.concatenate([f[:, 1], f[:, 2]])
        g = coo_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(nv, nv))
        _, labels = connected_components(g, directed=False)
        first_face = np.unique(labels[f[:, 0]], return_index=True)[1]
        return np.ascontiguousarray(mesh.triangles[first_face, 0, :], dtype=np.float64)

    return mesh.cached(("piece-points",), build)


def inside_one(shape: ConvexShape, mesh: Mesh, convex_is_a: bool, Ta: np.ndarray, Tb: np.ndarray) -> bool:
    """Does the solid hold a piece of the mesh, for one pose pair (a's, b's pose) without a
    crossing triangle pair?"""
    # the batch kernel's per-task body, called directly: a parallel launch for one task
    # costs more than the test
    mapped = np.empty((shape._tris.shape[0], 9))
    return bool(kg.mesh_vertex_inside(shape._tris, piece_points(mesh), Ta, Tb, np.int64(convex_is_a), mapped))


def inside_tasks(shape: ConvexShape, mesh: Mesh, convex_is_a: bool, req: Any, todo: np.ndarray) -> np.ndarray:
    """(n,) bool over a prepared request's tasks: True where a task of ``todo`` (int64
    indices of tasks without a crossing triangle pair) has a piece of the mesh in the solid."""
    out = np.zeros(req.n, np.bool_)
    kg.mesh_vertices_in_solid(
        shape._tris, piece_points(mesh), req.pa, req.pb, req.ia, req.ib, np.int64(convex_is_a),
        np.ascontiguousarray(todo, np.int64), out,
    )  # fmt: skip
    return out


__all__ = ["inside_one", "inside_tasks", "piece_points"]
