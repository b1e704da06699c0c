"""The per-geometry tree cache: each (geometry, BuildOptions) builds its hierarchy once.

The storage is the mesh's own keyed cache (``Mesh.cached``: a per-key lock, so
concurrent first queries wait for one build); what goes in it, and how it is
built, is decided here.
"""

from __future__ import annotations

from dataclasses import replace

from ..geometry.mesh import Mesh
from ..options import AUTO_BV, BuildOptions
from .auto import _KEY as _CHOICE
from .auto import choose_volume
from .tree import BVH, build_tree


def bvh_of(mesh: Mesh, options: BuildOptions | None = None) -> BVH:
    """The hierarchy of ``mesh`` for ``options`` (default: the mesh's own), built on first use and cached.

    Examples
    --------
    >>> import collisionkit as ck
    >>> tree = ck.bvh_of(ck.primitives.box_mesh([1, 1, 1]))
    >>> tree.arrays.topo.shape[1]
    3
    """
    opts = options or mesh.options
    if opts.bv == AUTO_BV:
        opts = replace(opts, bv=choose_volume(mesh).bv)
    return mesh.cached(("bvh", opts), lambda: build_tree(mesh.triangles, opts))


def tree_for(mesh: Mesh, bv: str) -> BVH:
    """The mesh's hierarchy with its own split rule and leaf size but volume kind ``bv``.

    Queries traverse b with a's volume kind; the per-view dict spares the hot
    path hashing the options record on every call.
    """
    tree = mesh._trees.get(bv)
    if tree is None:
        if bv == AUTO_BV:
            return tree_for(mesh, choose_volume(mesh).bv)
        opts = mesh.options if mesh.options.bv == bv else replace(mesh.options, bv=bv)
        tree = bvh_of(mesh, opts)
        mesh._trees[bv] = tree
    return tree


def pair_trees(a: Mesh, b: Mesh) -> tuple[BVH, BVH]:
    """Both meshes' hierarchies in the volume kind the pair is traversed in (``pair_volume``).

    The one way a query reaches a mesh's tree: each mesh's own split rule and leaf size,
    the pair's volume kind, built once and cached per geometry.
    """
    # PERF: every per-call query comes here: ``pair_volume``'s rule inlined (a call less on a
    # ~1.5 us query; tests/test_spec.py checks that both agree) and the per-view dicts read
    # directly (tree_for builds on a miss)
    bv = a.options.bv
    if bv == AUTO_BV:
        bv = b.options.bv
        if bv == AUTO_BV:
            bv = (a._geom._cache.get(_CHOICE) or choose_volume(a)).bv
            if bv != "obb":
                bv = (b._geom._cache.get(_CHOICE) or choose_volume(b)).bv
    return a._trees.get(bv) or tree_for(a, bv), b._trees.get(bv) or tree_for(b, bv)
