"""The frozen hierarchy: flat arrays built once per (mesh geometry, options)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..constants import BUILD_TOPDOWN, BV_AABB, BV_OBB, BV_SAABB, DESCENT_BOX_KINDS, LEAF_FLAG, SPLIT_SAH
from ..errors import InvalidBVHError
from ..geometry.frozen import immutable
from ..kernels.build.bottomup import build_clustered_tree
from ..kernels.build.topdown import build_binary_tree, fit_tree_other, max_abs_coordinate
from ..kernels.core.layout import (
    META_DEPTH,
    META_FACES,
    META_FANOUT,
    META_LEAFMAX,
    META_NODE_OFF,
    META_NODES,
    META_TRI_OFF,
    META_TRIS,
    META_WIDTH,
)
from ..kernels.volumes.saabb import fit_saabb
from ..options import AUTO_BV, BuildOptions


class BVHArrays(NamedTuple):
    """A pool of one tree, as the kernels take it (all C-contiguous, writable
    privately; the public views are read-only)."""

    topo: NDArray[np.int32]  # (n, 3) first child / first triangle, count, flags (bit 0 = leaf)
    bv: NDArray[np.float64]  # (n, width) node volumes, in the mesh's frame
    tris: NDArray[np.float64]  # (F, 3, 3) triangle vertices in leaf order
    face_ids: NDArray[np.int32]  # (F,) leaf order -> face index as given
    meta: NDArray[np.int64]  # (1, META_WIDTH) offsets, sizes, depth, fan-out
    scale: NDArray[np.float64]  # (1,) largest |coordinate| (sizes the volume slack)


class BVH:
    """A frozen bounding-volume hierarchy over a mesh's triangles.

    Built by :func:`build_bvh` (a mesh) or :func:`build_tree` (triangles), or lazily and
    cached by ``bvh_of(mesh)``. ``arrays`` holds what the kernels read; the properties give
    read-only views.
    """

    __slots__ = ("options", "arrays", "depth", "fanout", "build_seconds", "bv_code", "descent_args", "box_kind")

    def __init__(self, options: BuildOptions, arrays: BVHArrays, depth: int, fanout: int, build_seconds: float):
        self.options = options
        self.arrays = arrays
        self.depth = depth
        self.fanout = fanout
        self.build_seconds = build_seconds
        #: PERF: what the per-call kernels read, gathered once (a per-call query reads them
        #: on every call: 11 attribute loads and a property)
        self.bv_code = options.bv_code
        self.descent_args = (arrays.topo, arrays.bv, arrays.tris, arrays.meta, arrays.scale)
        #: the descent kernels' common case takes it (query.strategies.descent.descent_tri)
        self.box_kind = options.bv_code in DESCENT_BOX_KINDS

    @property
    def n_nodes(self) -> int:
        return int(self.arrays.topo.shape[0])

    @property
    def n_leaves(self) -> int:
        return int(np.count_nonzero(self.arrays.topo[:, 2] & LEAF_FLAG))

    @property
    def topology(self) -> NDArray[np.int32]:
        return _readonly(self.arrays.topo)

    @property
    def volumes(self) -> NDArray[np.float64]:
        return _readonly(self.arrays.bv)

    @property
    def leaf_faces(self) -> NDArray[np.int32]:
        return _readonly(self.arrays.face_ids)

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self.arrays))

    def __repr__(self) -> str:
        o = self.options
        return (
            f"BVH(bv={o.bv!r}, split={o.split!r}, leaf_size={o.leaf_size}, nodes={self.n_nodes}, "
            f"depth={self.depth}, faces={self.arrays.face_ids.shape[0]})"
        )

    def validate(self, triangles: NDArray[np.float64] | None = None) -> None:
        """Check the tree's invariants; raise ``InvalidBVHError`` naming the first broken one.

        Every face sits in exactly one leaf; inner nodes point at valid,
        consecutive children; every node volume contains all the triangles of
        its subtree (within a few units of roundoff of the mesh size, the same
        slack the traversal allows). ``triangles`` (F, 3, 3) in face order, if
        given, must match the leaf-order copy.
        """
        validate_bvh(self, triangles)


def _readonly(a: np.ndarray) -> np.ndarray:
    """A read-only snapshot of a live kernel array (``geometry.frozen.immutable``): a
    read-only view of the live array could be made writable again and rewrite the tree."""
    return immutable(a)


def build_bvh(mesh: Any, options: BuildOptions | None = None) -> BVH:
    """A fresh (uncached) hierarchy of ``mesh`` (a ``collisionkit.Mesh``), with ``options``
    (default: the mesh's own); for timing and inspection. Queries use the cached tree
    (``bvh_of``).

    Examples
    --------
    >>> import collisionkit as ck
    >>> ck.build_bvh(ck.primitives.box_mesh([1, 1, 1]), ck.BuildOptions(bv="obb")).options.bv
    'obb'
    """
    return build_tree(mesh.triangles, options or mesh.options)


def build_tree(triangles: NDArray[np.float64], options: BuildOptions) -> BVH:
    """Build a BVH over ``triangles`` (F, 3, 3) float64, F >= 1, face order.

    ``options.bv == "auto"`` builds the kind ``bvh.auto`` picks for these triangles (the
    tree's options name it).
    """
    import time

    if options.bv == AUTO_BV:
        from .auto import volume_choice

        options = replace(options, bv=volume_choice(triangles).bv)

    # A private writable copy: every kernel sees one array type (read-only inputs
    # such as Mesh.triangles would compile a second signature).
    tris = np.array(triangles, dtype=np.float64, order="C", copy=True)
    start = time.perf_counter()
    scale_value = max_abs_coordinate(tris)
    # NOTE: fit on coordinates scaled by a power of two (exact) so the largest is
    # about 1: areas, covariances and SAH costs square and cube coordinates and
    # would overflow above ~1e77 (or underflow below ~1e-77) otherwise.
    exponent = int(np.frexp(scale_value)[1]) if scale_value > 0 else 0
    scaled = np.ldexp(tris, -exponent) if exponent else tris  # ldexp returns a new writable array
    # A saabb tree is the AABB tree plus a sphere per node (seed 002, kernels/volumes/saabb.py).
    code = BV_AABB if options.bv_code == BV_SAABB else options.bv_code
    fit, leaf_size = np.int64(options.fit_code), np.int64(options.leaf_size)
    if options.build_code == BUILD_TOPDOWN:
        # spheres and k-DOPs: the AABB build's topology, then their own fit per node
        boxes = code == BV_AABB or code == BV_OBB
        # options by type (None: AABB, SAH), so the kernel compiles only the branches used
        obb = True if code == BV_OBB else None
        split = None if options.split_code == SPLIT_SAH else np.int64(options.split_code)
        order, topo, bv, depth = build_binary_tree(scaled, obb, split, leaf_size)
        if not boxes:
            bv = fit_tree_other(np.take(scaled, order, axis=0), topo, code, fit)
    else:  # bottom-up clustering or incremental insertion (kernels/build/bottomup.py)
        order, topo, bv, depth = build_clustered_tree(scaled, code, np.int64(options.build_code), leaf_size, fit)
    if code == BV_OBB and options.obb_fit != "triangles":
        from .volumes import refit_obb_from_hulls

        refit_obb_from_hulls(bv, topo, np.take(scaled, order, axis=0), options.obb_fit)
    if options.bv_code == BV_SAABB:
        bv = fit_saabb(topo, bv, np.take(scaled, order, axis=0))
    if exponent:
        from .volumes import length_columns

        # saabb: AABB centre/half (0-5) and sphere centre/radius (6-9) are lengths; column 10 a ratio
        cols = list(range(10)) if options.bv_code == BV_SAABB else length_columns(code, bv.shape[1])
        bv[:, cols] = np.ldexp(bv[:, cols], exponent)
    # PERF: np.take gathers the rows several times faster than tris[order] (a new C-contiguous array)
    leaf_tris = np.take(tris, order, axis=0)
    seconds = time.perf_counter() - start
    counts = topo[:, 1][(topo[:, 2] & LEAF_FLAG) != 0]
    meta = np.zeros((1, META_WIDTH), np.int64)
    meta[0, META_NODE_OFF] = 0
    meta[0, META_TRI_OFF] = 0
    meta[0, META_NODES] = topo.shape[0]
    meta[0, META_TRIS] = tris.shape[0]
    meta[0, META_DEPTH] = depth
    meta[0, META_FANOUT] = 2
    meta[0, META_FACES] = tris.shape[0]
    meta[0, META_LEAFMAX] = int(counts.max()) if counts.size else 0
    scale = np.array([scale_value])
    arrays = BVHArrays(topo, bv, leaf_tris, order.astype(np.int32), meta, scale)
    return BVH(options, arrays, int(depth), 2, seconds)


def _require(ok: Any, message: str) -> None:
    """Raise ``InvalidBVHError(message)`` unless ``ok`` (a real check: ``assert`` is gone
    under ``python -O``)."""
    if not ok:
        raise InvalidBVHError(message)


def validate_bvh(tree: BVH, triangles: NDArray[np.float64] | None = None) -> None:
    """Check a tree's invariants; raise ``InvalidBVHError`` naming the first broken one.

    Every face sits in exactly one leaf; inner nodes point at valid, consecutive children;
    every node volume contains all the triangles of its subtree (within a few units of
    roundoff of the mesh size, the same slack the traversal allows). ``triangles`` (F, 3, 3)
    in face order, if given, must match the leaf-order copy.
    """
    a = tree.arrays
    topo, bv, tris = a.topo, a.bv, a.tris
    n = topo.shape[0]
    F = tris.shape[0]
    _require(n >= 1, "empty tree")
    leaf = (topo[:, 2] & LEAF_FLAG) != 0
    seen = np.zeros(F, np.int64)
    parent_count = np.zeros(n, np.int64)
    for i in range(n):
        first, count = int(topo[i, 0]), int(topo[i, 1])
        _require(count >= 1, f"node {i} has count {count}")
        if leaf[i]:
            _require(0 <= first and first + count <= F, f"leaf {i} triangle range out of bounds")
            seen[first : first + count] += 1
        else:
            _require(0 < first and first + count <= n, f"node {i} child range out of bounds")
            parent_count[first : first + count] += 1
    _require(parent_count[0] == 0, "root has a parent")
    _require(np.all(parent_count[1:] == 1), "a node has no parent or several")
    _require(np.all(seen == 1), "a triangle sits in no leaf or in several")
    _require(np.array_equal(np.sort(a.face_ids), np.arange(F)), "leaf order is not a permutation of the faces")
    if triangles is not None:
        given = np.asarray(triangles)
        _require(given.shape == tris.shape and np.array_equal(tris, given[a.face_ids]), "leaf triangles differ from the mesh")
    # containment: each node's triangle range = union of its leaves' ranges
    lo_idx = np.zeros(n, np.int64)
    hi_idx = np.zeros(n, np.int64)
    for i in range(n - 1, -1, -1):
        first, count = int(topo[i, 0]), int(topo[i, 1])
        if leaf[i]:
            lo_idx[i], hi_idx[i] = first, first + count
        else:
            kids = range(first, first + count)
            lo_idx[i] = min(lo_idx[k] for k in kids)
            hi_idx[i] = max(hi_idx[k] for k in kids)
            _require(
                hi_idx[i] - lo_idx[i] == sum(hi_idx[k] - lo_idx[k] for k in kids),
                f"node {i}: subtree triangles are not contiguous in leaf order",
            )
    # Well inside the traversal's slack (64 units of roundoff of the scale).
    tol = 16 * 2.0**-52 * float(a.scale[0])
    kind = tree.options.bv_code
    for i in range(n):
        pts = tris[lo_idx[i] : hi_idx[i]].reshape(-1, 3)
        if kind == BV_AABB:
            c, h = bv[i, :3], bv[i, 3:6]
            excess = np.abs(pts - c) - h
        elif kind == BV_SAABB:
            box = np.abs(pts - bv[i, :3]) - bv[i, 3:6]
            unit = float(a.scale[0]) or 1.0  # distances in units of the scale: squares stay finite
            ball = (np.sqrt((((pts - bv[i, 6:9]) / unit) ** 2).sum(axis=1)) - bv[i, 9] / unit) * unit
            excess = np.concatenate([box.ravel(), ball])
            _require(bv[i, 10] >= 0.0, f"node {i}: negative volume ratio")
        elif kind == BV_OBB:
            c, axes, h = bv[i, :3], bv[i, 3:12].reshape(3, 3), bv[i, 12:15]
            excess = np.abs((pts - c) @ axes.T) - h
            _require(np.allclose(axes @ axes.T, np.eye(3), atol=1e-9), f"node {i}: OBB axes not orthonormal")
        else:  # spheres, k-DOPs (bvh/volumes.py)
            from .volumes import containment_excess

            excess = np.array([containment_excess(kind, bv[i], pts)])
        worst = float(excess.max())
        _require(worst <= tol, f"node {i}: volume misses a vertex of its subtree by {worst:g}")
