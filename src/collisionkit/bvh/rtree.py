"""Per-object R-trees of seed 000: a surface tree over the surfaces' boxes and,
per surface, a triangle tree, bulk-loaded by sort-tile-recursive packing
(``kernels/build/rtree.py``), frozen flat arrays in the object's frame."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, NamedTuple, overload

import numpy as np
from numpy.typing import NDArray

from ..constants import LEAF_FLAG
from ..kernels.build.rtree import (
    RT_CAPACITY,
    RT_DEPTH_S,
    RT_DEPTH_T,
    RT_FACES,
    RT_NODES,
    RT_SURFACE_NODES,
    RT_SURFACES,
    build_object_rtrees,
)
from ..kernels.build.topdown import max_abs_coordinate

if TYPE_CHECKING:
    from ..geometry.mesh import Mesh

#: Default node capacity m: the node count of a full tree over n entries is
#: about n / (m - 1) and its depth log_m n. PERF: on the robot cell m = 4, 8 and 16
#: are within 10% of each other (benchmarks/seed000.py --sweep-m, docs/seed-000.md).
DEFAULT_NODE_CAPACITY = 8


class RTreeArrays(NamedTuple):
    """What the traversal kernel reads (all C-contiguous; public views are read-only)."""

    topo: NDArray[np.int32]  # (N, 3) first, count, flags (bit 0 = leaf)
    box: NDArray[np.float64]  # (N, 6) min xyz, max xyz in the object's frame
    surf_root: NDArray[np.int32]  # (S,) per surface (leaf order): its triangle tree's root node
    surf_ids: NDArray[np.int32]  # (S,) per surface (leaf order): compact surface id 0..S-1
    tbox: NDArray[np.float64]  # (F, 6) per triangle (leaf order): its exact box
    tris: NDArray[np.float64]  # (F, 3, 3) triangles in leaf order
    face_ids: NDArray[np.int32]  # (F,) leaf order -> face index as given
    meta: NDArray[np.int64]  # (RT_META_WIDTH,) see kernels/build/rtree.py
    scale: NDArray[np.float64]  # (1,) largest |coordinate| (sizes the slack)


class _Meta:
    """A read-only int attribute of ``RTrees``: one slot of ``arrays.meta`` (the build's
    counts, ``kernels/build/rtree.py``)."""

    def __init__(self, slot: int, doc: str) -> None:
        self.slot = slot
        self.__doc__ = doc

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _Meta: ...
    @overload
    def __get__(self, obj: RTrees, owner: type | None = None) -> int: ...
    def __get__(self, obj: RTrees | None, owner: type | None = None) -> int | _Meta:
        return self if obj is None else int(obj.arrays.meta[self.slot])


class RTrees:
    """The frozen R-trees of one mesh geometry for one node capacity.

    Attributes
    ----------
    arrays : RTreeArrays
    labels : (S,) int32
        The mesh's surface label of each compact surface id (``mesh.surfaces``
        values, sorted ascending: compact id k is the k-th smallest label).
    capacity : int
        Node capacity m.
    build_seconds : float
    """

    __slots__ = ("arrays", "labels", "capacity", "build_seconds")

    def __init__(self, arrays: RTreeArrays, labels: NDArray[np.int32], capacity: int, build_seconds: float):
        self.arrays = arrays
        self.labels = labels
        self.capacity = capacity
        self.build_seconds = build_seconds

    n_nodes = _Meta(RT_NODES, "Nodes of all the trees (the surface tree's first).")
    n_surface_nodes = _Meta(RT_SURFACE_NODES, "Nodes of the surface tree.")
    n_surfaces = _Meta(RT_SURFACES, "Surfaces of the mesh (entries of the surface tree).")
    surface_depth = _Meta(RT_DEPTH_S, "Depth of the surface tree (root = 0).")
    triangle_depth = _Meta(RT_DEPTH_T, "Largest depth of a surface's triangle tree.")

    def node_levels(self) -> NDArray[np.int64]:
        """(N,) depth of each node inside its own tree (surface tree or triangle tree; root = 0)."""
        topo = self.arrays.topo
        level = np.zeros(topo.shape[0], np.int64)
        inner = np.flatnonzero((topo[:, 2] & LEAF_FLAG) == 0)
        for i in inner:  # parents precede children (level-by-level layout)
            first, count = int(topo[i, 0]), int(topo[i, 1])
            level[first : first + count] = level[i] + 1
        return level

    def __repr__(self) -> str:
        return (
            f"RTrees(m={self.capacity}, surfaces={self.n_surfaces}, nodes={self.n_nodes}, "
            f"surface_depth={self.surface_depth}, triangle_depth={self.triangle_depth})"
        )

    def validate(self, triangles: NDArray[np.float64] | None = None) -> None:
        """Check the invariants; AssertionError naming the first broken one.

        Every surface sits in one surface-tree leaf, every triangle in one leaf
        of its own surface's tree; all leaves of a tree are on one level; no
        node holds more than m entries; every box is the exact union of what
        lies below it.
        """
        validate_rtrees(self, triangles)


def build_rtrees(triangles: NDArray[np.float64], surfaces: NDArray[np.integer], capacity: int = DEFAULT_NODE_CAPACITY) -> RTrees:
    """Build the surface and triangle R-trees of ``triangles`` (F, 3, 3) labelled by ``surfaces`` (F,)."""
    if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 2:
        raise ValueError(f"node_capacity must be an int >= 2, got {capacity!r}")
    start = time.perf_counter()
    tris = np.array(triangles, dtype=np.float64, order="C", copy=True)
    labels, compact = np.unique(np.asarray(surfaces), return_inverse=True)
    compact = np.ascontiguousarray(compact.reshape(-1), dtype=np.int64)
    topo, box, surf_order, surf_root, tri_order, meta = build_object_rtrees(
        tris, compact, np.int64(labels.shape[0]), np.int64(capacity)
    )
    leaf_tris = np.ascontiguousarray(tris[tri_order])
    tbox = np.concatenate([leaf_tris.min(axis=1), leaf_tris.max(axis=1)], axis=1)
    scale = np.array([max_abs_coordinate(tris)])
    arrays = RTreeArrays(topo, box, surf_root, surf_order, np.ascontiguousarray(tbox), leaf_tris, tri_order, meta, scale)
    return RTrees(arrays, labels.astype(np.int32), int(capacity), time.perf_counter() - start)


def rtrees_for(mesh: Mesh, capacity: int = DEFAULT_NODE_CAPACITY) -> RTrees:
    """``mesh``'s R-trees for node capacity ``capacity`` (built on first use, cached per geometry)."""
    return mesh.cached(("rtree", int(capacity)), lambda: build_rtrees(mesh.triangles, mesh.surfaces, int(capacity)))


def validate_rtrees(rt: RTrees, triangles: NDArray[np.float64] | None = None) -> None:
    a = rt.arrays
    topo, box, meta = a.topo, a.box, a.meta
    n = topo.shape[0]
    m = int(meta[RT_CAPACITY])
    S = int(meta[RT_SURFACES])
    F = int(meta[RT_FACES])
    ns = int(meta[RT_SURFACE_NODES])
    assert n == int(meta[RT_NODES]), "node count differs from meta"
    leaf = (topo[:, 2] & LEAF_FLAG) != 0
    assert np.all(topo[:, 1] >= 1) and np.all(topo[:, 1] <= m), "a node holds 0 or more than m entries"
    assert np.array_equal(np.sort(a.surf_ids), np.arange(S)), "surface order is not a permutation"
    assert np.array_equal(np.sort(a.face_ids), np.arange(F)), "triangle order is not a permutation"
    if triangles is not None:
        assert np.array_equal(a.tris, np.asarray(triangles)[a.face_ids]), "leaf triangles differ from the mesh"
    assert np.array_equal(a.tbox[:, :3], a.tris.min(axis=1)) and np.array_equal(a.tbox[:, 3:], a.tris.max(axis=1))

    def check_tree(root: int, lo_entry: NDArray, hi_entry: NDArray, entry_lo: int, entry_hi: int, nodes_lo: int, nodes_hi: int) -> None:
        seen = np.zeros(entry_hi - entry_lo, np.int64)
        leaf_depths = set()
        stack = [(root, 0)]
        visited = 0
        while stack:
            i, d = stack.pop()
            visited += 1
            assert nodes_lo <= i < nodes_hi, f"node {i} outside its tree's range"
            first, count = int(topo[i, 0]), int(topo[i, 1])
            if leaf[i]:
                leaf_depths.add(d)
                assert entry_lo <= first and first + count <= entry_hi, f"leaf {i} entries out of range"
                seen[first - entry_lo : first - entry_lo + count] += 1
                lo = lo_entry[first : first + count].min(axis=0)
                hi = hi_entry[first : first + count].max(axis=0)
            else:
                kids = range(first, first + count)
                stack.extend((k, d + 1) for k in kids)
                lo = box[first : first + count, :3].min(axis=0)
                hi = box[first : first + count, 3:].max(axis=0)
            assert np.array_equal(box[i, :3], lo) and np.array_equal(box[i, 3:], hi), f"node {i}: box is not the union below it"
        assert visited == nodes_hi - nodes_lo, "tree nodes unreachable or shared"
        assert np.all(seen == 1), "an entry sits in no leaf or in several"
        assert len(leaf_depths) == 1, f"leaves on several levels {sorted(leaf_depths)}"

    # surface boxes = their triangle trees' roots
    sbox = box[a.surf_root]
    check_tree(0, sbox[:, :3], sbox[:, 3:], 0, S, 0, ns)
    # triangle trees: consecutive node and triangle ranges per surface (leaf order)
    node_start = ns
    tri_start = 0
    for q in range(S):
        root = int(a.surf_root[q])
        assert root == node_start, f"surface {q}: triangle tree does not start where the previous ends"
        node_end = int(a.surf_root[q + 1]) if q + 1 < S else n
        # triangles of this tree: from the leaves
        leaves = [i for i in range(root, node_end) if leaf[i]]
        count = int(sum(int(topo[i, 1]) for i in leaves))
        check_tree(root, a.tbox[:, :3], a.tbox[:, 3:], tri_start, tri_start + count, root, node_end)
        node_start = node_end
        tri_start += count
    assert tri_start == F, "triangles outside every triangle tree"
