"""Refitting for deformable meshes: same faces, moved vertices, same tree topology."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..constants import BV_AABB, BV_SAABB
from ..errors import InvalidMeshError
from ..kernels.build.refit import refit_volumes
from ..kernels.build.topdown import max_abs_coordinate
from ..kernels.volumes.saabb import fit_saabb
from .tree import BVH, BVHArrays


def refit_tree(tree: BVH, triangles: np.ndarray) -> BVH:
    """A new BVH with ``tree``'s topology and leaf order, volumes refitted to
    ``triangles`` (F, 3, 3) float64 in face order (kernels/build/refit.py)."""
    a = tree.arrays
    start = time.perf_counter()
    tris = np.ascontiguousarray(np.asarray(triangles, np.float64)[a.face_ids])
    bv = a.bv.copy()
    o = tree.options
    if o.bv_code == BV_SAABB:
        # S-AABB: refit the AABB columns, then fit the node spheres (and ratios) anew
        box = np.ascontiguousarray(bv[:, :6])
        refit_volumes(tris, a.topo, np.int64(BV_AABB), np.int64(o.fit_code), box)
        bv = fit_saabb(a.topo, box, tris)
    else:
        refit_volumes(tris, a.topo, np.int64(o.bv_code), np.int64(o.fit_code), bv)
    scale = np.array([max_abs_coordinate(tris)])
    seconds = time.perf_counter() - start
    arrays = BVHArrays(a.topo, bv, tris, a.face_ids, a.meta, scale)
    return BVH(o, arrays, tree.depth, tree.fanout, seconds)


def refit(mesh: Any, new_vertices: ArrayLike) -> Any:
    """A new mesh with ``new_vertices`` (same faces, surfaces and options) whose
    hierarchies are ``mesh``'s refitted, not rebuilt.

    Every tree ``mesh`` has built so far (any volume kind) is refitted; trees
    it has not built are built on first use as usual. Refitting keeps the old
    topology, so after large deformations a rebuild gives tighter trees.

    Parameters
    ----------
    mesh : Mesh
    new_vertices : array_like, (V, 3)
        Finite coordinates, as many as ``mesh.vertices``.

    Returns
    -------
    Mesh

    Raises
    ------
    InvalidMeshError
        Wrong shape or non-finite coordinates.

    Examples
    --------
    >>> import numpy as np, collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> moved = ck.refit(box, box.vertices * 1.5)
    >>> ck.intersects(moved, box, None, ck.translation([1.2, 0, 0]))
    True
    """
    from ..geometry.mesh import Mesh

    if not isinstance(mesh, Mesh):
        raise TypeError(f"mesh must be a collisionkit.Mesh, got {type(mesh).__name__}")
    v = np.asarray(new_vertices, dtype=np.float64)
    if v.shape != mesh.vertices.shape:
        raise InvalidMeshError(f"new_vertices must have shape {mesh.vertices.shape}, got {v.shape}")
    new = Mesh(v, mesh.faces, mesh.surfaces, options=mesh.options, name=mesh.name)
    tris = np.array(new.triangles, dtype=np.float64, order="C", copy=True)
    cache = mesh._geom._cache
    for key, tree in list(cache.items()):
        if isinstance(key, tuple) and len(key) == 2 and key[0] == "bvh" and isinstance(tree, BVH):
            fitted = refit_tree(tree, tris)

            def keep(fitted: BVH = fitted) -> BVH:
                return fitted

            new.cached(key, keep)
    return new
